//! Constant folding: the shape arithmetic exporters such as PyTorch emit
//! (`Shape → Gather → Concat → Reshape`, `Unsqueeze`, `ConstantOfShape`,
//! `Range`, casts and integer arithmetic on shapes) evaluated at import
//! time, so the targets see constants.
//!
//! Folding is exact: integer arithmetic in `i64`-exact `f64`, and the float
//! operations folded (`+ - * /`, `sqrt`) are correctly rounded in `f64`
//! and then in `f32`, the same result as `f32` arithmetic.

mod eval;

use super::LowerError;
use super::onnx_graph::{Const, Node, constant_node, elem};
use eval::{Binary, Shaping, Unary, axis, eval, is_int};

/// Which imports fold an operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Folds {
    /// Every import ([`fold`], and [`fold_with`] whatever `more` says).
    All,
    /// Only the imports that ask for it ([`fold_with`] with `more`: the
    /// TenniS import; the NNabla import's records predate them).
    OnRequest,
}

/// One operator folding can evaluate (when its inputs are constants, or
/// for `Shape`/`Size`, when the input's shape is static), which imports
/// fold it, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Foldable {
    /// The ONNX operator.
    pub op: &'static str,
    /// Which imports fold it.
    pub folds: Folds,
    /// How folding evaluates it.
    rule: Rule,
}

/// How folding evaluates an operator ([`Foldable`]'s rule): [`fold_with`]
/// folds `Constant` and `Shape`/`Size` itself, [`eval`] the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    /// `Constant`: its value.
    Constant,
    /// `Shape`, or `Size` (`size`), of an input of static shape.
    Shape { size: bool },
    /// `Identity`: its input.
    Identity,
    /// `Cast`, or `CastLike` (`like`: to its second input's type).
    Cast { like: bool },
    /// An element-wise operator of one input.
    Unary(Unary),
    /// A broadcasting operator of two inputs.
    Binary(Binary),
    /// Integer `Mod`.
    Mod,
    /// `Where`.
    Where,
    /// `ConstantOfShape` (up to [`FOLD_MAX`] elements).
    ConstantOfShape,
    /// `Range`.
    Range,
    /// An operator that only changes the dimensions.
    Reshape(Shaping),
    /// `Expand`.
    Expand,
    /// `Concat`.
    Concat,
    /// `Gather`.
    Gather,
    /// `Slice`.
    Slice,
    /// `Transpose`.
    Transpose,
    /// `ReduceProd`.
    ReduceProd,
    /// `QuantizeLinear` (`quantize`) or `DequantizeLinear`, where
    /// [`eval::quant::folds`] says so.
    Quant { quantize: bool },
}

const fn all(op: &'static str, rule: Rule) -> Foldable {
    Foldable {
        op,
        folds: Folds::All,
        rule,
    }
}

const fn on_request(op: &'static str, rule: Rule) -> Foldable {
    Foldable {
        op,
        folds: Folds::OnRequest,
        rule,
    }
}

/// The operators folding evaluates, one row each (the support table
/// names those of [`Folds::All`] in this order).
pub const TABLE: &[Foldable] = &[
    all("Constant", Rule::Constant),
    all("Identity", Rule::Identity),
    all("Shape", Rule::Shape { size: false }),
    all("Size", Rule::Shape { size: true }),
    all("Gather", Rule::Gather),
    all("Concat", Rule::Concat),
    all("Unsqueeze", Rule::Reshape(Shaping::Unsqueeze)),
    all("Squeeze", Rule::Reshape(Shaping::Squeeze)),
    all("Reshape", Rule::Reshape(Shaping::Reshape)),
    all("Flatten", Rule::Reshape(Shaping::Flatten)),
    all("Cast", Rule::Cast { like: false }),
    all("CastLike", Rule::Cast { like: true }),
    all("Add", Rule::Binary(Binary::Add)),
    all("Sub", Rule::Binary(Binary::Sub)),
    all("Mul", Rule::Binary(Binary::Mul)),
    all("Div", Rule::Binary(Binary::Div)),
    all("Neg", Rule::Unary(Unary::Neg)),
    all("ConstantOfShape", Rule::ConstantOfShape),
    all("Range", Rule::Range),
    all("Slice", Rule::Slice),
    all("Equal", Rule::Binary(Binary::Equal)),
    all("Less", Rule::Binary(Binary::Less)),
    all("Greater", Rule::Binary(Binary::Greater)),
    all("Not", Rule::Unary(Unary::Not)),
    all("Where", Rule::Where),
    all("ReduceProd", Rule::ReduceProd),
    all("Expand", Rule::Expand),
    all("Transpose", Rule::Transpose),
    all("Sqrt", Rule::Unary(Unary::Sqrt)),
    all("Floor", Rule::Unary(Unary::Floor)),
    all("Ceil", Rule::Unary(Unary::Ceil)),
    all("Min", Rule::Binary(Binary::Min)),
    all("Max", Rule::Binary(Binary::Max)),
    all("Abs", Rule::Unary(Unary::Abs)),
    all("Relu", Rule::Unary(Unary::Relu)),
    all("Mod", Rule::Mod),
    all("And", Rule::Binary(Binary::And)),
    all("Or", Rule::Binary(Binary::Or)),
    all("Xor", Rule::Binary(Binary::Xor)),
    all("DequantizeLinear", Rule::Quant { quantize: false }),
    all("QuantizeLinear", Rule::Quant { quantize: true }),
    on_request("GreaterOrEqual", Rule::Binary(Binary::GreaterOrEqual)),
    on_request("LessOrEqual", Rule::Binary(Binary::LessOrEqual)),
];

/// The row of `op` in [`TABLE`].
pub fn foldable(op: &str) -> Option<&'static Foldable> {
    TABLE.iter().find(|f| f.op == op)
}

/// Whether every import folds `op` (a [`Folds::All`] row).
pub fn folded_by_all(op: &str) -> bool {
    foldable(op).is_some_and(|f| f.folds == Folds::All)
}

/// The operators every import folds, in table order.
pub fn folded_by_all_ops() -> Vec<&'static str> {
    TABLE
        .iter()
        .filter(|f| f.folds == Folds::All)
        .map(|f| f.op)
        .collect()
}

/// The largest `ConstantOfShape` folded into a constant (elements).
pub const FOLD_MAX: i64 = 1 << 16;

/// The most elements a fold produces beyond what its inputs hold: a
/// result larger than both this and all its inputs together is refused
/// ([`LowerError::FoldTooLarge`]), so that constant shapes in a file cannot
/// make folding allocate without bound.
pub const MAX_FOLD_ELEMENTS: usize = 1 << 24;

/// How many times [`MAX_FOLD_ELEMENTS`] (or its largest input, when that
/// is more) the inputs of one folded node may hold together: `Where`'s
/// three full-size inputs and some, not one initializer named a thousand
/// times.
pub const MAX_FOLD_INPUTS: usize = 4;

/// The outputs of `node` as constants, when it can be evaluated now:
/// `konst` gives a constant input, `shape` the static shape of any value
/// (for `Shape`/`Size`). `None` when the node is not foldable here;
/// `Some(Err)` when it is, but is malformed.
pub fn fold(
    node: &Node,
    opset: i64,
    konst: &dyn Fn(&str) -> Option<Const>,
    shape: &dyn Fn(&str) -> Option<Vec<i64>>,
) -> Option<Result<Vec<Const>, LowerError>> {
    fold_with(node, opset, konst, shape, false)
}

/// [`fold`], folding also the operators of [`Folds::OnRequest`] when
/// `more` is set.
pub fn fold_with(
    node: &Node,
    opset: i64,
    konst: &dyn Fn(&str) -> Option<Const>,
    shape: &dyn Fn(&str) -> Option<Vec<i64>>,
    more: bool,
) -> Option<Result<Vec<Const>, LowerError>> {
    if !node.domain.is_empty() && node.domain != "ai.onnx" {
        return None;
    }
    let row = foldable(&node.op)?;
    match row.folds {
        Folds::All => {}
        Folds::OnRequest if more => {}
        Folds::OnRequest => return None,
    }
    if row.rule == Rule::Constant {
        return Some(
            constant_node(node)
                .and_then(|c| c.map(|c| vec![c]).ok_or(LowerError::ConstantWithoutValue)),
        );
    }
    if let Rule::Shape { size } = row.rule {
        let x = node.input(0)?;
        let dims = match konst(x) {
            Some(c) => c.dims_i64(),
            None => shape(x)?,
        };
        if dims.iter().any(|&d| d < 0) {
            return None;
        }
        let out = if size {
            // A count that overflows i64 is refused, not wrapped.
            let Some(n) = dims.iter().try_fold(1i64, |p, &d| p.checked_mul(d)) else {
                return Some(Err(LowerError::FoldTooLarge {
                    node: format!("Size {}", node.name),
                }));
            };
            Const::from_f64(elem::INT64, vec![], &[n as f64])
        } else {
            let r = dims.len() as i64;
            let clampi = |v: i64| (if v < 0 { v + r } else { v }).clamp(0, r) as usize;
            let s = clampi(node.int("start", 0));
            let e = node
                .attr("end")
                .and_then(|a| a.i)
                .map_or(r as usize, clampi);
            let v: Vec<f64> = dims[s..e.max(s)].iter().map(|&d| d as f64).collect();
            Const::from_f64(elem::INT64, vec![v.len()], &v)
        };
        return Some(out.map(|c| vec![c]).ok_or_else(|| "Shape".into()));
    }
    // Every other foldable op needs all its (present) inputs constant.
    // Each is a copy: a node naming one large constant many times is
    // refused once its inputs hold more than MAX_FOLD_INPUTS times the
    // bound (or its largest input), before it is copied further.
    let (mut ins, mut total, mut largest) = (Vec::new(), 0usize, 0usize);
    for i in 0..node.inputs.len() {
        let Some(n) = node.input(i) else {
            ins.push(None);
            continue;
        };
        let c = konst(n)?;
        let k = eval::numel(c.dims()).unwrap_or(usize::MAX);
        largest = largest.max(k);
        total = total.saturating_add(k);
        if total
            > MAX_FOLD_ELEMENTS
                .max(largest)
                .saturating_mul(MAX_FOLD_INPUTS)
        {
            return Some(Err(LowerError::FoldTooLarge {
                node: format!("{} {}", node.op, node.name),
            }));
        }
        ins.push(Some(c));
    }
    if row.rule == Rule::Mod && ins.iter().flatten().any(|c| !is_int(c.elem)) {
        // Only integer remainders are folded (exact in f64); a float `Mod`
        // stays a computation for the target.
        return None;
    }
    if let Rule::Quant { quantize } = row.rule
        && !eval::quant::folds(node, &ins, quantize)
    {
        // Blocked scales, 4-bit and float8 types stay with the target.
        return None;
    }
    if row.rule == Rule::ConstantOfShape {
        // Large filled tensors stay a computation for the target (NNabla's
        // `Constant`) instead of bloating the file.
        let n = ins
            .first()
            .and_then(Option::as_ref)?
            .ints()?
            .iter()
            .try_fold(1i64, |p, &d| p.checked_mul(d.max(0)))?;
        if n > FOLD_MAX {
            return None;
        }
    }
    Some(eval(node, opset, &ins, row.rule))
}

/// `dims` with axes of 1 inserted at `axes` (`Unsqueeze`: axes of the
/// result, negative from the end); `Err` with the first axis out of range.
pub(crate) fn unsqueezed<T: Copy + From<u8>>(dims: &[T], axes: &[i64]) -> Result<Vec<T>, i64> {
    let nr = dims.len() + axes.len();
    let mut ax = axes
        .iter()
        .map(|&v| eval::axis(v, nr).ok_or(v))
        .collect::<Result<Vec<_>, _>>()?;
    ax.sort_unstable();
    let mut it = dims.iter();
    let one = T::from(1);
    Ok((0..nr)
        .map(|i| match ax.contains(&i) {
            true => one,
            false => *it.next().unwrap_or(&one),
        })
        .collect())
}

/// The dimensions a zero point of `dims` takes against its operand: a
/// vector of more than one element as `[n, 1, .., 1]` of rank `lead` (a
/// per-row or per-output-channel zero point) when that is given, else as
/// it is (numpy broadcasting).
#[cfg(any(feature = "nnabla", feature = "tennis"))]
pub(crate) fn zero_point_dims<T: Copy + From<u8> + PartialOrd>(
    dims: &[T],
    lead: Option<usize>,
) -> Vec<T> {
    match (dims, lead) {
        ([n], Some(r)) if *n > T::from(1) && r > 1 => {
            let mut d = vec![T::from(1); r];
            d[0] = *n;
            d
        }
        _ => dims.to_vec(),
    }
}

/// Refuses operand `i` of a `MatMulInteger`/`ConvInteger` of ONNX type `e`
/// unless it is an 8-bit integer.
#[cfg(any(feature = "nnabla", feature = "tennis"))]
pub(crate) fn int8_operand(e: i32, i: usize) -> Result<(), LowerError> {
    if matches!(e, 2 | 3) {
        return Ok(());
    }
    Err(LowerError::Other(format!(
        "{} input {i} (int8 and uint8 only)",
        onnx_format::dtype::onnx_name(e)
    )))
}

/// The 8-bit integer constant `x` minus its constant zero point `zp` as
/// an f32 constant (exact), `zp` broadcast numpy's way against `x`, except
/// that a vector of more than one element is laid out as `[n, 1, .., 1]`
/// of rank `lead` when that is given (a per-row or per-output-channel zero
/// point of `MatMulInteger`/`ConvInteger`).
#[cfg(any(feature = "nnabla", feature = "tennis"))]
pub(crate) fn shift_by_zero_point(
    x: &Const,
    zp: Option<&Const>,
    lead: Option<usize>,
) -> Result<Const, LowerError> {
    let f = |c: &Const, dims: Vec<usize>| {
        Const::from_f64(elem::FLOAT, dims, &c.values()).ok_or("an f32 constant")
    };
    let xf = f(x, x.dims().to_vec())?;
    let Some(z) = zp else {
        return Ok(xf);
    };
    let zf = f(z, zero_point_dims(z.dims(), lead))?;
    let sub = Node {
        op: "Sub".into(),
        domain: String::new(),
        name: "zero point".into(),
        inputs: vec!["x".into(), "z".into()],
        outputs: vec!["y".into()],
        attrs: vec![],
    };
    let k = |n: &str| Some(if n == "x" { xf.clone() } else { zf.clone() });
    let r = fold(&sub, 13, &k, &|_| None)
        .ok_or("zero point")??
        .pop()
        .ok_or("zero point")?;
    if r.dims() != x.dims() {
        return Err("a zero point that does not fit its operand".into());
    }
    Ok(r)
}

/// numpy broadcasting of two shapes.
pub fn broadcast(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let r = a.len().max(b.len());
    let mut o = vec![0; r];
    for i in 0..r {
        let x = if i + a.len() >= r {
            a[i + a.len() - r]
        } else {
            1
        };
        let y = if i + b.len() >= r {
            b[i + b.len() - r]
        } else {
            1
        };
        o[i] = if x == y || y == 1 {
            x
        } else if x == 1 {
            y
        } else {
            return None;
        };
    }
    Some(o)
}

/// ONNX `Reshape` target dimensions: `0` copies the input's dimension
/// (unless `allowzero`), one `-1` is inferred.
pub fn reshape_dims(dims: &[usize], shape: &[i64], allowzero: bool) -> Option<Vec<usize>> {
    let total = eval::numel(dims)?;
    let mut out = Vec::with_capacity(shape.len());
    let mut infer = None;
    for (i, &s) in shape.iter().enumerate() {
        match s {
            -1 if infer.is_none() => {
                infer = Some(i);
                out.push(1);
            }
            0 if !allowzero => out.push(*dims.get(i)?),
            s if s >= 0 => out.push(usize::try_from(s).ok()?),
            _ => return None,
        }
    }
    let known = eval::numel(&out)?;
    if let Some(i) = infer {
        if known == 0 || !total.is_multiple_of(known) {
            return None;
        }
        out[i] = total / known;
    } else if known != total {
        return None;
    }
    Some(out)
}

/// Resolves ONNX `Slice` parameters on static `dims` to `(start, step,
/// count)` per axis (every axis, unsliced ones `(0, 1, d)`), with ONNX's
/// clamping rules. `None` when malformed.
pub fn slice_spec(
    dims: &[i64],
    starts: &[i64],
    ends: &[i64],
    axes: Option<&[i64]>,
    steps: Option<&[i64]>,
) -> Option<Vec<(i64, i64, i64)>> {
    let r = dims.len();
    let mut spec: Vec<(i64, i64, i64)> = dims.iter().map(|&d| (0, 1, d)).collect();
    if starts.len() != ends.len() {
        return None;
    }
    for k in 0..starts.len() {
        let ax = match axes {
            Some(a) => axis(*a.get(k)?, r)?,
            None => k,
        };
        let d = *dims.get(ax)?;
        if d < 0 {
            return None;
        }
        let step = steps.map_or(Some(1), |s| s.get(k).copied())?;
        if step == 0 {
            return None;
        }
        let norm = |v: i64| if v < 0 { v.saturating_add(d) } else { v };
        let (s, e) = (norm(starts[k]), norm(ends[k]));
        let (s, e) = if step > 0 {
            (s.clamp(0, d), e.clamp(0, d))
        } else {
            (s.clamp(-1, d - 1), e.clamp(-1, d - 1))
        };
        // ceil(len / |step|) without overflow (a step of i64::MIN or MAX).
        let len = if step > 0 { e - s } else { s - e }.max(0).unsigned_abs();
        let n = i64::try_from(len.div_ceil(step.unsigned_abs())).ok()?;
        spec[ax] = (s, step, n);
    }
    Some(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(op: &str, fmod: Option<i64>) -> Node {
        let attrs = fmod
            .map(|v| onnx_format::proto::AttributeProto {
                name: Some("fmod".into()),
                i: Some(v),
                ..Default::default()
            })
            .into_iter()
            .collect();
        Node {
            op: op.into(),
            domain: String::new(),
            name: op.into(),
            inputs: vec!["a".into(), "b".into()],
            outputs: vec!["y".into()],
            attrs,
        }
    }

    fn run(n: &Node, a: (i32, &[f64]), b: (i32, &[f64])) -> Option<Result<Vec<f64>, String>> {
        let ca = Const::from_f64(a.0, vec![a.1.len()], a.1).unwrap();
        let cb = Const::from_f64(b.0, vec![b.1.len()], b.1).unwrap();
        let k = move |s: &str| Some(if s == "a" { ca.clone() } else { cb.clone() });
        fold(n, 18, &k, &|_| None).map(|r| r.map(|v| v[0].values()).map_err(String::from))
    }

    #[test]
    fn integer_mod_folds_with_the_divisor_sign_or_the_dividend_sign() {
        let a = [7.0, -7.0, 7.0, -7.0, 6.0];
        let b = [3.0, 3.0, -3.0, -3.0, 3.0];
        let py = run(&node("Mod", None), (elem::INT64, &a), (elem::INT64, &b));
        assert_eq!(py.unwrap().unwrap(), vec![1.0, 2.0, -2.0, -1.0, 0.0]);
        let c = run(&node("Mod", Some(1)), (elem::INT64, &a), (elem::INT64, &b));
        assert_eq!(c.unwrap().unwrap(), vec![1.0, -1.0, 1.0, -1.0, 0.0]);
        // A zero divisor is refused, float remainders stay a computation.
        let z = run(
            &node("Mod", None),
            (elem::INT64, &[1.0]),
            (elem::INT64, &[0.0]),
        );
        assert!(z.unwrap().is_err());
        let f = run(
            &node("Mod", Some(1)),
            (elem::FLOAT, &[1.5]),
            (elem::FLOAT, &[1.0]),
        );
        assert!(f.is_none());
    }

    #[test]
    fn logical_ops_fold_to_booleans() {
        let (a, b) = ([1.0, 1.0, 0.0, 0.0], [1.0, 0.0, 1.0, 0.0]);
        for (op, want) in [
            ("And", [1.0, 0.0, 0.0, 0.0]),
            ("Or", [1.0, 1.0, 1.0, 0.0]),
            ("Xor", [0.0, 1.0, 1.0, 0.0]),
        ] {
            let got = run(&node(op, None), (elem::BOOL, &a), (elem::BOOL, &b));
            assert_eq!(got.unwrap().unwrap(), want.to_vec(), "{op}");
        }
    }

    #[test]
    fn a_constant_named_many_times_is_refused_before_it_is_copied_on() {
        // 2^22 booleans, named by 17 inputs of one Concat: 2^26 + 2^22
        // elements, over 4 x 2^24.
        let n = 1usize << 22;
        let t = tensor_core::Tensor::new(tensor_core::DType::Bool, vec![n], vec![0u8; n]);
        let big = Const {
            elem: elem::BOOL,
            tensor: t.unwrap().into_static(),
        };
        let mut concat = node("Concat", None);
        concat.inputs = vec!["w".into(); 17];
        let e = fold(&concat, 13, &|_| Some(big.clone()), &|_| None);
        assert_eq!(
            e.unwrap().unwrap_err().to_string(),
            "Concat Concat: too large to fold"
        );
        // Three of them are taken (and concatenated within the bound).
        concat.inputs.truncate(3);
        let ok = fold(&concat, 13, &|_| Some(big.clone()), &|_| None);
        assert_eq!(ok.unwrap().unwrap()[0].dims(), [3 * n]);
    }

    #[test]
    fn every_row_names_the_rule_of_its_own_operator() {
        for f in TABLE {
            let named = match f.rule {
                Rule::Shape { size } => (if size { "Size" } else { "Shape" }).to_string(),
                Rule::Cast { like } => (if like { "CastLike" } else { "Cast" }).to_string(),
                Rule::Quant { quantize } => {
                    (if quantize { "Quantize" } else { "Dequantize" }).to_string() + "Linear"
                }
                Rule::Unary(u) => format!("{u:?}"),
                Rule::Binary(b) => format!("{b:?}"),
                Rule::Reshape(s) => format!("{s:?}"),
                r => format!("{r:?}"),
            };
            assert_eq!(named, f.op);
        }
    }
}
