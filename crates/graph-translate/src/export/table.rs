//! The shape of an operator table entry, shared by both directions' tables.

/// How a lowering was verified (a column of the support table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verified {
    /// Single-function networks of `testdata/translate/export/nnabla/`: the
    /// real nnabla 1.39 computed the outputs; the export runs in tract-onnx
    /// against them (cargo test `nnabla_export_ops`) and in onnxruntime
    /// (`tools/graph-translate/nnabla_export_cases.py check`).
    NnablaTract,
    /// The same networks, some of which tract-onnx does not run as ONNX
    /// says (e.g. `RNN` activations, reflect padding): those are checked
    /// in onnxruntime only (`tools/graph-translate/nnabla_export_cases.py check`).
    NnablaOnnxruntime,
    /// Whole networks of `testdata/onnx/` computed by the real runtime
    /// (nnabla 1.39 or the TenniS C++ runtime), run in tract-onnx.
    Networks,
    /// Checked in tract-onnx against the function's documented formula
    /// (`tests/elementwise_formulas.rs`), not yet against nnabla itself.
    Formula,
    /// Single-function networks saved by nnabla 1.39 whose outputs its CPU
    /// runtime cannot compute (`FFT`, `IFFT` run only on CUDA): the
    /// reference outputs follow nnabla's documented formula (numpy), the
    /// export runs in tract-onnx and onnxruntime
    /// (`tools/graph-translate/nnabla_export_cases.py check`).
    FormulaOnnxruntime,
    /// Single-operator modules of `testdata/translate/export/tennis/`: the
    /// TenniS C++ runtime computed the outputs; the test runs the export in
    /// tract-onnx against them.
    TennisTract,
    /// The same TenniS modules, some of which tract-onnx cannot run (e.g.
    /// `RoiAlign`, a `Range` or `Pad` of a length known only at run time):
    /// those are checked in onnxruntime only (`tools/graph-translate/export_check.py`).
    TennisOnnxruntime,
    /// Not yet checked against the real runtime.
    Unverified,
}

impl Verified {
    /// The words of the support table.
    pub fn describe(self) -> &'static str {
        match self {
            Verified::NnablaTract => {
                "nnabla 1.39 single-function networks, tract-onnx + onnxruntime"
            }
            Verified::NnablaOnnxruntime => {
                "nnabla 1.39 single-function networks, onnxruntime (tract-onnx for some)"
            }
            Verified::Networks => "whole networks of testdata/onnx (real runtime), tract-onnx",
            Verified::Formula => "documented formula, tract-onnx (no runtime reference yet)",
            Verified::FormulaOnnxruntime => {
                "nnabla 1.39 single-function networks, documented formula (its CPU runtime \
                 has no FFT), tract-onnx + onnxruntime"
            }
            Verified::TennisTract => "TenniS runtime single-operator modules, tract-onnx",
            Verified::TennisOnnxruntime => {
                "TenniS runtime single-operator modules, onnxruntime (tract-onnx for some)"
            }
            Verified::Unverified => "not verified",
        }
    }
}

/// The lowest operator set a lowering writes given each input's dimensions
/// (`None`: not known) ([`Entry::min_opset_for`]).
pub type MinOpsetFn = fn(&[Option<Vec<i64>>]) -> i64;

/// One operator of a source format: lowered to ONNX (`lower` is `Some`) or
/// refused with `reason`.
#[derive(Clone)]
pub struct Entry<L: 'static> {
    /// The source operator (NNabla function type, TenniS operator name).
    pub op: &'static str,
    /// The attributes the lowering reads.
    pub attrs: &'static [&'static str],
    /// The ONNX operators the lowering writes (for the support table).
    pub onnx: &'static [&'static str],
    /// The lowering, `None` when refused.
    pub lower: Option<L>,
    /// Why the operator is refused (empty when lowered).
    pub reason: &'static str,
    /// What the lowering was verified against.
    pub verified: Verified,
    /// The lowest operator set the lowering writes.
    pub min_opset: i64,
    /// For an operator some of whose inputs need a newer operator set than
    /// `min_opset`: the lowest one the lowering writes, given each input's
    /// dimensions (`None`: not known). The higher of the two is taken.
    pub min_opset_for: Option<MinOpsetFn>,
    /// How many single-function networks of the real runtime test it (0:
    /// none).
    pub cases: u16,
    /// The operator works on images (4-D, NCHW or NHWC): a TenniS module
    /// holding one takes 4-D inputs (otherwise its inputs take the rank of
    /// its largest constant).
    pub image: bool,
}

impl<L> Entry<L> {
    /// An entry lowered by `lower`.
    pub const fn lowered(
        op: &'static str,
        attrs: &'static [&'static str],
        onnx: &'static [&'static str],
        lower: L,
        verified: Verified,
    ) -> Self {
        Entry {
            op,
            attrs,
            onnx,
            lower: Some(lower),
            reason: "",
            verified,
            min_opset: 13,
            min_opset_for: None,
            cases: 0,
            image: false,
        }
    }

    /// An entry refused for `reason`.
    pub const fn refused(op: &'static str, reason: &'static str) -> Self {
        Entry {
            op,
            attrs: &[],
            onnx: &[],
            lower: None,
            reason,
            verified: Verified::Unverified,
            min_opset: 13,
            min_opset_for: None,
            cases: 0,
            image: false,
        }
    }

    /// The same entry tested by `n` single-function networks of the real
    /// runtime.
    pub const fn cases(mut self, n: u16) -> Self {
        self.cases = n;
        self
    }

    /// The same entry, of an operator working on images ([`Entry::image`]).
    pub const fn image(mut self) -> Self {
        self.image = true;
        self
    }

    /// The same entry needing operator set `opset` at least.
    pub const fn since(mut self, opset: i64) -> Self {
        self.min_opset = opset;
        self
    }

    /// The same entry needing, for some inputs, a newer operator set than
    /// its `min_opset`: `f`'s ([`Entry::min_opset_for`]).
    pub const fn since_for(mut self, f: MinOpsetFn) -> Self {
        self.min_opset_for = Some(f);
        self
    }
}

/// The entry of `op` in `table`.
pub(crate) fn find<L>(table: &'static [Entry<L>], op: &str) -> Option<&'static Entry<L>> {
    table.iter().find(|e| e.op == op)
}

/// The lowered operators of `table`, sorted.
pub(crate) fn lowered<L>(table: &[Entry<L>]) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = table
        .iter()
        .filter(|e| e.lower.is_some())
        .map(|e| e.op)
        .collect();
    v.sort_unstable();
    v
}
