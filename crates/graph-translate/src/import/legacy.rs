//! Models of ONNX opsets 1 to 6: every node rewritten to the operator
//! version opset 7 uses, in one front pass, so that the lowerings only
//! ever see opset-7 (and newer) semantics.
//!
//! [`RULES`] names, for every operator of the default domain that exists
//! in opset 6 or older, the opsets its versions were introduced at (up to
//! 7) and the rewrite of its older versions. An operator not listed does
//! not exist before opset 7; an old node whose meaning the rewrite cannot
//! keep exactly is refused, naming the attribute value and the opset.
//!
//! Each node is rewritten when the target reaches it (the shapes and
//! constants of its inputs are known by then): [`normalise`] returns the
//! opset-7 nodes that replace it.

use std::borrow::Cow;

use onnx_format::builder::attr;
use onnx_format::proto::attribute_proto::AttributeType;

use super::error::RewriteError;
use super::onnx_graph::{Const, Node, OnnxGraph};

/// What a rewrite may ask of the target: the static shape (`-1` for the
/// batch dimension) and the constant value of an input, when known.
pub(crate) struct Known<'a> {
    /// Static shape of a value.
    pub shape: &'a dyn Fn(&str) -> Option<Vec<i64>>,
    /// Constant value of a value.
    pub konst: &'a dyn Fn(&str) -> Option<Const>,
}

type Rewrite = fn(&mut Node, i64, &Known<'_>, &mut Vec<Node>) -> Result<(), RewriteError>;

/// One operator of the old opsets: its name, the opsets its versions up
/// to 7 were introduced at, and the rewrite of a version older than the
/// one opset 7 uses (`None`: the versions differ only in the legacy
/// `consumed_inputs` attribute or in the element types they accept).
pub(crate) struct Rule {
    op: &'static str,
    versions: &'static [i64],
    rewrite: Option<Rewrite>,
}

const fn r(op: &'static str, versions: &'static [i64], rewrite: Option<Rewrite>) -> Rule {
    Rule {
        op,
        versions,
        rewrite,
    }
}

/// Every default-domain operator of opsets 1 to 6 (versions from the
/// ONNX operator changelog).
pub(crate) const RULES: &[Rule] = &[
    r("Abs", &[1, 6], None),
    r("Add", &[1, 6, 7], Some(limited_broadcast)),
    r("And", &[1, 7], Some(limited_broadcast)),
    r("ArgMax", &[1], None),
    r("ArgMin", &[1], None),
    // version 7 added count_include_pad, whose default 0 (pads not
    // counted) is what the older version computes
    r("AveragePool", &[1, 7], None),
    r("BatchNormalization", &[1, 6, 7], Some(batch_norm)),
    r("Cast", &[1, 6], Some(cast)),
    r("Ceil", &[1, 6], None),
    r("Clip", &[1, 6], Some(clip)),
    r("Concat", &[1, 4], Some(concat)),
    r("Constant", &[1], None),
    r("Conv", &[1], None),
    r("ConvTranspose", &[1], None),
    r("DepthToSpace", &[1], None),
    r("Div", &[1, 6, 7], Some(limited_broadcast)),
    r("Dropout", &[1, 6, 7], Some(dropout)),
    r("Elu", &[1, 6], None),
    r("Equal", &[1, 7], Some(limited_broadcast)),
    r("Exp", &[1, 6], None),
    r("Flatten", &[1], None),
    r("Floor", &[1, 6], None),
    r("GRU", &[1, 3, 7], Some(recurrent)),
    r("Gather", &[1], None),
    r("Gemm", &[1, 6, 7], Some(gemm)),
    r("GlobalAveragePool", &[1], None),
    r("GlobalLpPool", &[1, 2], Some(lp_p)),
    r("GlobalMaxPool", &[1], None),
    r("Greater", &[1, 7], Some(limited_broadcast)),
    r("HardSigmoid", &[1, 6], None),
    r("Hardmax", &[1], None),
    r("Identity", &[1], None),
    r("If", &[1], None),
    r("InstanceNormalization", &[1, 6], None),
    r("LRN", &[1], None),
    r("LSTM", &[1, 7], Some(recurrent)),
    r("LeakyRelu", &[1, 6], None),
    r("Less", &[1, 7], Some(limited_broadcast)),
    r("Log", &[1, 6], None),
    r("LogSoftmax", &[1], None),
    r("Loop", &[1], None),
    r("LpNormalization", &[1], None),
    r("LpPool", &[1, 2], Some(lp_p)),
    r("MatMul", &[1], None),
    r("Max", &[1, 6], None),
    r("MaxPool", &[1], None),
    r("MaxRoiPool", &[1], None),
    r("Mean", &[1, 6], None),
    r("Min", &[1, 6], None),
    r("Mul", &[1, 6, 7], Some(limited_broadcast)),
    r("Neg", &[1, 6], None),
    r("Not", &[1], None),
    r("Or", &[1, 7], Some(limited_broadcast)),
    r("PRelu", &[1, 6, 7], Some(prelu)),
    r("Pad", &[1, 2], Some(pad)),
    r("Pow", &[1, 7], Some(limited_broadcast)),
    r("RNN", &[1, 7], Some(recurrent)),
    r("RandomNormal", &[1], None),
    r("RandomNormalLike", &[1], None),
    r("RandomUniform", &[1], None),
    r("RandomUniformLike", &[1], None),
    r("Reciprocal", &[1, 6], None),
    r("ReduceL1", &[1], None),
    r("ReduceL2", &[1], None),
    r("ReduceLogSum", &[1], None),
    r("ReduceLogSumExp", &[1], None),
    r("ReduceMax", &[1], None),
    r("ReduceMean", &[1], None),
    r("ReduceMin", &[1], None),
    r("ReduceProd", &[1], None),
    r("ReduceSum", &[1], None),
    r("ReduceSumSquare", &[1], None),
    r("Relu", &[1, 6], None),
    r("Reshape", &[1, 5], Some(reshape)),
    r("Selu", &[1, 6], Some(selu)),
    r("Shape", &[1], None),
    r("Sigmoid", &[1, 6], None),
    r("Size", &[1], None),
    r("Slice", &[1], None),
    r("Softmax", &[1], None),
    r("Softplus", &[1], None),
    r("Softsign", &[1], None),
    r("SpaceToDepth", &[1], None),
    r("Split", &[1, 2], Some(split)),
    r("Sqrt", &[1, 6], None),
    r("Squeeze", &[1], None),
    r("Sub", &[1, 6, 7], Some(limited_broadcast)),
    r("Sum", &[1, 6], None),
    r("Tanh", &[1, 6], None),
    r("Tile", &[1, 6], Some(tile)),
    r("TopK", &[1], None),
    r("Transpose", &[1], None),
    r("Unsqueeze", &[1], None),
    r("Upsample", &[1, 7], Some(upsample)),
    r("Xor", &[1, 7], Some(limited_broadcast)),
];

/// The rule of default-domain operator `op`, or why it is not an operator
/// of `opset` (below 7).
pub(crate) fn exists_at(op: &str, opset: i64) -> Result<&'static Rule, RewriteError> {
    let rule = RULES
        .iter()
        .find(|r| r.op == op)
        .ok_or(RewriteError::NotYetAnOperator { opset, since: None })?;
    if rule.versions[0] > opset {
        return Err(RewriteError::NotYetAnOperator {
            opset,
            since: Some(rule.versions[0]),
        });
    }
    Ok(rule)
}

/// The opset-7 nodes of `orig` in the graph `g` (`orig` itself unless the
/// model is older than opset 7, or one of its inputs is already refused),
/// with what each target's context knows of a value: its static `shape`
/// and its constant value `konst`.
pub(crate) fn rewrite<'n>(
    g: &OnnxGraph,
    orig: &'n Node,
    poisoned: &std::collections::HashSet<String>,
    shape: &dyn Fn(&str) -> Option<Vec<i64>>,
    konst: &dyn Fn(&str) -> Option<Const>,
) -> Result<Cow<'n, [Node]>, RewriteError> {
    let Some(opset) = g.legacy_opset else {
        return Ok(Cow::Borrowed(std::slice::from_ref(orig)));
    };
    if orig.inputs.iter().any(|i| poisoned.contains(i)) {
        return Ok(Cow::Borrowed(std::slice::from_ref(orig)));
    }
    normalise(orig, opset, &Known { shape, konst })
}

/// The opset-7 nodes meaning what `node` means at `opset` (below 7):
/// the node itself when its version is the one opset 7 uses, or its
/// rewrite; refused (with the reason) when the old meaning cannot be kept
/// exactly or the operator does not exist at `opset`.
pub(crate) fn normalise<'n>(
    node: &'n Node,
    opset: i64,
    known: &Known<'_>,
) -> Result<Cow<'n, [Node]>, RewriteError> {
    if !node.domain.is_empty() && node.domain != "ai.onnx" {
        return Ok(Cow::Borrowed(std::slice::from_ref(node)));
    }
    let rule = exists_at(&node.op, opset)?;
    let in_force = |o: i64| rule.versions.iter().copied().filter(|&v| v <= o).max();
    let old = in_force(opset).unwrap_or(rule.versions[0]);
    let legacy_attr = node.attr("consumed_inputs").is_some();
    if Some(old) == in_force(7) && !legacy_attr {
        return Ok(Cow::Borrowed(std::slice::from_ref(node)));
    }
    let mut n = node.clone();
    // a hint for the runtime's memory reuse, never part of the result
    n.attrs
        .retain(|a| a.name.as_deref() != Some("consumed_inputs"));
    let mut out = Vec::new();
    if let (true, Some(rw)) = (Some(old) != in_force(7), rule.rewrite) {
        rw(&mut n, opset, known, &mut out)?;
    }
    out.push(n);
    Ok(Cow::Owned(out))
}

fn drop_attr(n: &mut Node, name: &str) {
    n.attrs.retain(|a| a.name.as_deref() != Some(name));
}

fn set_attr(n: &mut Node, a: onnx_format::proto::AttributeProto) {
    let name = a.name.clone();
    n.attrs.retain(|x| x.name != name);
    n.attrs.push(a);
}

/// A name for a value a rewrite adds.
fn fresh(n: &Node, what: &str) -> String {
    format!("{}__opset7_{what}", n.outputs[0])
}

fn int_list(v: &[i64]) -> String {
    let s: Vec<String> = v.iter().map(i64::to_string).collect();
    format!("[{}]", s.join(", "))
}

/// Whether two static dimensions may be equal (`-1`, the batch
/// dimension, is unknown).
fn may_equal(a: i64, b: i64) -> bool {
    a == b || a < 0 || b < 0
}

/// The binary operators before opset 7: `B` broadcasts only when
/// `broadcast` is 1, its shape a contiguous part of `A`'s starting at
/// `axis` (its end aligned with `A`'s when `axis` is absent); opset 7
/// broadcasts as numpy does, aligning the ends. An `axis` that does not
/// align the ends becomes an `Unsqueeze` of `B` (trailing 1s).
fn limited_broadcast(
    n: &mut Node,
    opset: i64,
    k: &Known<'_>,
    out: &mut Vec<Node>,
) -> Result<(), RewriteError> {
    let bc = n.int("broadcast", 0);
    let axis = n.attr("axis").and_then(|a| a.i);
    drop_attr(n, "broadcast");
    drop_attr(n, "axis");
    let (Some(a), Some(b)) = (n.input(0), n.input(1)) else {
        return Err(RewriteError::Needs("two inputs"));
    };
    let sa = (k.shape)(a).ok_or(RewriteError::UnknownShape("first input"))?;
    let sb = (k.shape)(b).ok_or(RewriteError::UnknownShape("second input"))?;
    match bc {
        0 => {
            if sa.len() != sb.len() || sa.iter().zip(&sb).any(|(&x, &y)| !may_equal(x, y)) {
                return Err(RewriteError::shapes(
                    "broadcast 0",
                    opset,
                    format!(
                        " with inputs of shapes {} and {} (without broadcast the shapes \
                         must be equal)",
                        int_list(&sa),
                        int_list(&sb)
                    ),
                ));
            }
            Ok(())
        }
        1 => {
            let start = match axis {
                None => sa.len().checked_sub(sb.len()),
                Some(x) => usize::try_from(x)
                    .ok()
                    .filter(|&x| x.checked_add(sb.len()).is_some_and(|e| e <= sa.len())),
            };
            let Some(start) = start else {
                return Err(RewriteError::shapes(
                    format!(
                        "broadcast 1, axis {}",
                        axis.map_or("unset".to_string(), |x| x.to_string())
                    ),
                    opset,
                    format!(
                        ": a second input of shape {} does not fit in the first's {}",
                        int_list(&sb),
                        int_list(&sa)
                    ),
                ));
            };
            // each dimension of B equals A's there, or is 1 (a single
            // element repeated)
            if sb
                .iter()
                .zip(&sa[start..])
                .any(|(&y, &x)| y != 1 && !may_equal(x, y))
            {
                return Err(RewriteError::shapes(
                    "broadcast 1",
                    opset,
                    format!(
                        ": shape {} is not part of {} at axis {start}",
                        int_list(&sb),
                        int_list(&sa)
                    ),
                ));
            }
            let trailing = sa.len() - start - sb.len();
            if trailing > 0 {
                let u = fresh(n, "b");
                let axes: Vec<i64> = (sb.len()..sb.len() + trailing).map(|v| v as i64).collect();
                out.push(unsqueeze(n, b, &u, &axes));
                n.inputs[1] = u;
            }
            Ok(())
        }
        v => Err(RewriteError::attr(format!("broadcast {v}"), opset, "")),
    }
}

fn unsqueeze(n: &Node, x: &str, y: &str, axes: &[i64]) -> Node {
    Node {
        op: "Unsqueeze".into(),
        domain: String::new(),
        name: format!("{}/unsqueeze", n.name),
        inputs: vec![x.to_string()],
        outputs: vec![y.to_string()],
        attrs: vec![attr::ints("axes", axes)],
    }
}

fn constant_ints(n: &Node, y: &str, v: &[i64]) -> Node {
    Node {
        op: "Constant".into(),
        domain: String::new(),
        name: format!("{}/constant", n.name),
        inputs: vec![],
        outputs: vec![y.to_string()],
        attrs: vec![attr::ints("value_ints", v)],
    }
}

/// `Gemm` before opset 7: `C` broadcasts only with `broadcast` 1 (as
/// opset 7 always does); without it `C` must be `M×N` already.
fn gemm(n: &mut Node, opset: i64, k: &Known<'_>, _: &mut Vec<Node>) -> Result<(), RewriteError> {
    let bc = n.int("broadcast", 0);
    drop_attr(n, "broadcast");
    if bc == 1 {
        return Ok(());
    }
    if bc != 0 {
        return Err(RewriteError::attr(format!("broadcast {bc}"), opset, ""));
    }
    let shape = |i: usize| n.input(i).and_then(|v| (k.shape)(v));
    let (Some(a), Some(b), Some(c)) = (shape(0), shape(1), shape(2)) else {
        return Err(RewriteError::shapes(
            "broadcast 0",
            opset,
            " with shapes that are not known",
        ));
    };
    let m = if n.int("transA", 0) != 0 {
        a.get(1)
    } else {
        a.first()
    };
    let nn = if n.int("transB", 0) != 0 {
        b.first()
    } else {
        b.get(1)
    };
    match (m, nn) {
        (Some(&m), Some(&nn)) if c.len() == 2 && may_equal(c[0], m) && may_equal(c[1], nn) => {
            Ok(())
        }
        _ => Err(RewriteError::shapes(
            "broadcast 0",
            opset,
            format!(
                " with C of shape {} (without broadcast C must be M×N)",
                int_list(&c)
            ),
        )),
    }
}

/// `BatchNormalization` before opset 7: `is_test` 1 is opset 7's
/// inference (one output); `is_test` 0 normalises with the batch's own
/// statistics (training), refused.
fn batch_norm(
    n: &mut Node,
    opset: i64,
    _: &Known<'_>,
    _: &mut Vec<Node>,
) -> Result<(), RewriteError> {
    let t = n.int("is_test", 0);
    if t == 0 {
        return Err(RewriteError::TrainingMode {
            opset,
            does: "normalises with the batch's own statistics",
        });
    }
    if (1..5).any(|i| n.has_output(i)) {
        return Err(RewriteError::attr(
            format!("is_test {t}"),
            opset,
            " with the running statistics as outputs",
        ));
    }
    drop_attr(n, "is_test");
    Ok(())
}

/// `Dropout` before opset 7: `is_test` 1 copies the input (opset 7's
/// inference); `is_test` 0 drops at random (training), refused; the mask
/// is not written in test mode, so a model reading it is refused.
fn dropout(n: &mut Node, opset: i64, _: &Known<'_>, _: &mut Vec<Node>) -> Result<(), RewriteError> {
    let t = n.int("is_test", 0);
    if t == 0 {
        return Err(RewriteError::TrainingMode {
            opset,
            does: "drops elements at random",
        });
    }
    if n.has_output(1) {
        return Err(RewriteError::attr(
            format!("is_test {t}"),
            opset,
            " with the mask as an output (test mode does not fill it)",
        ));
    }
    drop_attr(n, "is_test");
    Ok(())
}

/// `Cast` before opset 6 names the target type as a string.
fn cast(n: &mut Node, opset: i64, _: &Known<'_>, _: &mut Vec<Node>) -> Result<(), RewriteError> {
    let Some(a) = n.attr("to") else {
        return Err(RewriteError::MissingAttr {
            attr: "to",
            opset: None,
        });
    };
    if a.r#type == Some(AttributeType::Int as i32) || (a.s.is_none() && a.i.is_some()) {
        return Ok(());
    }
    let name = n.string("to", "");
    const TYPES: &[(&str, i64)] = &[
        ("FLOAT", 1),
        ("UINT8", 2),
        ("INT8", 3),
        ("UINT16", 4),
        ("INT16", 5),
        ("INT32", 6),
        ("INT64", 7),
        ("STRING", 8),
        ("BOOL", 9),
        ("FLOAT16", 10),
        ("DOUBLE", 11),
        ("UINT32", 12),
        ("UINT64", 13),
        ("COMPLEX64", 14),
        ("COMPLEX128", 15),
    ];
    let code = TYPES
        .iter()
        .find(|(t, _)| t.eq_ignore_ascii_case(&name))
        .map(|&(_, c)| c)
        .ok_or_else(|| {
            RewriteError::attr(format!("to {name:?}"), opset, ": not an ONNX element type")
        })?;
    set_attr(n, attr::int("to", code));
    Ok(())
}

/// `Clip` before opset 6: an absent bound clips nothing, where opset 6
/// clips at the largest float (which differs for infinite inputs). No
/// bound at all is an `Identity`; one bound alone is refused.
fn clip(n: &mut Node, opset: i64, _: &Known<'_>, _: &mut Vec<Node>) -> Result<(), RewriteError> {
    match (n.attr("min").is_some(), n.attr("max").is_some()) {
        (true, true) => Ok(()),
        (false, false) => {
            n.op = "Identity".into();
            n.attrs.clear();
            Ok(())
        }
        (lo, _) => Err(RewriteError::attr(
            format!("no {}", if lo { "max" } else { "min" }),
            opset,
            " (it clips nothing on that side, where opset 6 clips infinities to the largest \
             float)",
        )),
    }
}

/// `Concat` before opset 4: the axis defaults to 1.
fn concat(n: &mut Node, _: i64, _: &Known<'_>, _: &mut Vec<Node>) -> Result<(), RewriteError> {
    if n.attr("axis").is_none() {
        set_attr(n, attr::int("axis", 1));
    }
    Ok(())
}

/// `PRelu` before opset 7: a slope of one element is shared; a slope of
/// one dimension whose size is the channels' (axis 1) applies per channel
/// (the Caffe2 and PyTorch exporters' meaning), which opset 7 writes as a
/// slope of shape `C×1×…×1`; a slope of the input's shape applies
/// elementwise.
fn prelu(n: &mut Node, opset: i64, k: &Known<'_>, out: &mut Vec<Node>) -> Result<(), RewriteError> {
    let (Some(x), Some(s)) = (n.input(0), n.input(1)) else {
        return Err(RewriteError::Needs("two inputs"));
    };
    let sx = (k.shape)(x).ok_or(RewriteError::UnknownShape("input"))?;
    let ss = (k.shape)(s).ok_or(RewriteError::UnknownShape("slope"))?;
    if ss.iter().all(|&d| d == 1) {
        return Ok(());
    }
    if ss.len() == sx.len() && ss.iter().zip(&sx).all(|(&a, &b)| may_equal(a, b)) {
        return Ok(());
    }
    if ss.len() == 1 && sx.len() >= 2 && may_equal(sx[1], ss[0]) {
        let trailing = sx.len() - 2;
        if trailing > 0 {
            let u = fresh(n, "slope");
            let axes: Vec<i64> = (1..=trailing).map(|v| v as i64).collect();
            out.push(unsqueeze(n, s, &u, &axes));
            n.inputs[1] = u;
        }
        return Ok(());
    }
    Err(RewriteError::shapes(
        format!(
            "a slope of shape {} for an input of shape {}",
            int_list(&ss),
            int_list(&sx)
        ),
        opset,
        "",
    ))
}

/// `Pad` before opset 2 names its pads `paddings`.
fn pad(n: &mut Node, _: i64, _: &Known<'_>, _: &mut Vec<Node>) -> Result<(), RewriteError> {
    let p = n.ints("paddings").ok_or(RewriteError::MissingAttr {
        attr: "paddings",
        opset: None,
    })?;
    drop_attr(n, "paddings");
    set_attr(n, attr::ints("pads", &p));
    Ok(())
}

/// `Reshape` before opset 5 takes the shape as an attribute: it becomes a
/// constant input.
fn reshape(
    n: &mut Node,
    opset: i64,
    _: &Known<'_>,
    out: &mut Vec<Node>,
) -> Result<(), RewriteError> {
    let s = n.ints("shape").ok_or(RewriteError::MissingAttr {
        attr: "shape",
        opset: Some(opset),
    })?;
    drop_attr(n, "shape");
    let c = fresh(n, "shape");
    out.push(constant_ints(n, &c, &s));
    n.inputs.truncate(1);
    n.inputs.push(c);
    Ok(())
}

/// `Selu` before opset 6: the defaults were 1.6732 and 1.0507 (rounded
/// constants, not opset 6's float32 ones).
fn selu(n: &mut Node, _: i64, _: &Known<'_>, _: &mut Vec<Node>) -> Result<(), RewriteError> {
    if n.attr("alpha").is_none() {
        set_attr(n, attr::float("alpha", 1.6732));
    }
    if n.attr("gamma").is_none() {
        set_attr(n, attr::float("gamma", 1.0507));
    }
    Ok(())
}

/// `Split` before opset 2: the lengths may come as a second (constant)
/// input, and the axis has no default.
fn split(n: &mut Node, opset: i64, k: &Known<'_>, _: &mut Vec<Node>) -> Result<(), RewriteError> {
    if n.attr("axis").is_none() {
        return Err(RewriteError::attr(
            "no axis",
            opset,
            " (the first version of Split gives it no default)",
        ));
    }
    if let Some(s) = n.input(1) {
        let v = (k.konst)(s)
            .and_then(|c| c.ints())
            .ok_or(RewriteError::NotConstant {
                what: "split lengths",
                opset,
            })?;
        set_attr(n, attr::ints("split", &v));
    }
    n.inputs.truncate(1);
    Ok(())
}

/// `Tile` before opset 6: `tiles` copies along one `axis` (both scalar
/// inputs); opset 6 takes one count per dimension.
fn tile(n: &mut Node, opset: i64, k: &Known<'_>, out: &mut Vec<Node>) -> Result<(), RewriteError> {
    let x = n.input(0).ok_or(RewriteError::Needs("an input"))?;
    let scalar = |i: usize| {
        n.input(i)
            .and_then(|v| (k.konst)(v))
            .and_then(|c| c.ints())
            .filter(|v| v.len() == 1)
            .map(|v| v[0])
    };
    let (Some(t), Some(ax)) = (scalar(1), scalar(2)) else {
        return Err(RewriteError::NotConstant {
            what: "tiles or axis",
            opset,
        });
    };
    let r = (k.shape)(x)
        .ok_or(RewriteError::UnknownShape("input"))?
        .len();
    let a = usize::try_from(ax).ok().filter(|&a| a < r).ok_or_else(|| {
        RewriteError::shapes(
            format!("axis {ax}"),
            opset,
            format!(" for an input of rank {r}"),
        )
    })?;
    if t < 0 {
        return Err(RewriteError::attr(format!("tiles {t}"), opset, ""));
    }
    let mut reps = vec![1i64; r];
    reps[a] = t;
    let c = fresh(n, "repeats");
    out.push(constant_ints(n, &c, &reps));
    n.inputs = vec![x.to_string(), c];
    Ok(())
}

/// `Upsample` before opset 7: NCHW with `height_scale` and `width_scale`;
/// nearest only (its bilinear mode is not defined precisely enough to
/// match).
fn upsample(
    n: &mut Node,
    opset: i64,
    k: &Known<'_>,
    _: &mut Vec<Node>,
) -> Result<(), RewriteError> {
    let mode = n.string("mode", "nearest");
    if mode != "nearest" {
        return Err(RewriteError::attr(
            format!("mode {mode:?}"),
            opset,
            " (its sampling positions are not specified)",
        ));
    }
    let (Some(h), Some(w)) = (
        n.attr("height_scale").and_then(|a| a.f),
        n.attr("width_scale").and_then(|a| a.f),
    ) else {
        return Err(RewriteError::Needs("height_scale and width_scale"));
    };
    let x = n.input(0).ok_or(RewriteError::Needs("an input"))?;
    let r = (k.shape)(x)
        .ok_or(RewriteError::UnknownShape("input"))?
        .len();
    if r != 4 {
        return Err(RewriteError::shapes(
            format!("an input of rank {r}"),
            opset,
            " (it takes NCHW)",
        ));
    }
    drop_attr(n, "height_scale");
    drop_attr(n, "width_scale");
    set_attr(n, attr::floats("scales", &[1.0, 1.0, h, w]));
    Ok(())
}

/// `LpPool` and `GlobalLpPool` before opset 2 take `p` as a float.
fn lp_p(n: &mut Node, opset: i64, _: &Known<'_>, _: &mut Vec<Node>) -> Result<(), RewriteError> {
    let Some(a) = n.attr("p") else {
        return Ok(());
    };
    let Some(p) = a.f.filter(|_| a.i.is_none()) else {
        return Ok(());
    };
    if p.fract() != 0.0 || !(1.0..=1.0e6).contains(&p) {
        return Err(RewriteError::attr(
            format!("p {p}"),
            opset,
            " (opset 2 takes whole numbers)",
        ));
    }
    set_attr(n, attr::int("p", p as i64));
    Ok(())
}

/// `RNN`, `GRU` and `LSTM` before opset 7 carry `output_sequence`; their
/// sequence output, when named, is the same as opset 7's.
fn recurrent(n: &mut Node, _: i64, _: &Known<'_>, _: &mut Vec<Node>) -> Result<(), RewriteError> {
    drop_attr(n, "output_sequence");
    Ok(())
}

/// A support-table row with its lowest opset widened to the first
/// version of its operator when older models are rewritten to it.
pub(crate) fn widen(mut row: super::SupportRow) -> super::SupportRow {
    if let (true, Some(r)) = (
        row.opsets.0 <= super::onnx_graph::LOWERED_FROM,
        RULES.iter().find(|r| r.op == row.op),
    ) {
        row.opsets.0 = row.opsets.0.min(r.versions[0]);
    }
    row
}

#[cfg(test)]
mod tests;
