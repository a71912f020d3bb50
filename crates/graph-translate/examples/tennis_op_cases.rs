//! Writes the single-operator TenniS modules of
//! `testdata/translate/export/tennis/`: for each case `NAME.tsm` (one
//! operator on module inputs and constants) and `NAME.in.npz` (its inputs,
//! fixed pseudo-random values, members in module input order). The
//! maintainer then runs the real TenniS runtime on them
//! (`tools/graph-translate/reference_outputs.py DIR --runtime tennis`)
//! to make `NAME.out.npz`; `tests/tennis_op_export.rs` checks the ONNX
//! exports against those.
//!
//! `cargo run -p graph-translate --example tennis_op_cases -- DIR`

use bubble_module::{ModuleBuilder, Packed, WriteOptions};
use tensor_core::{DType, Tensor};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// A parameter of an operator.
enum P {
    I(Vec<i32>, Vec<usize>),
    F(f32),
    /// A float vector.
    Fv(Vec<f32>),
    S(&'static str),
}

fn i(v: i32) -> P {
    P::I(vec![v], vec![])
}

fn iv(v: &[i32]) -> P {
    P::I(v.to_vec(), vec![v.len()])
}

/// `[4, 2]` padding (begin, end per axis) of an NCHW operator.
fn pad4(v: [i32; 8]) -> P {
    P::I(v.to_vec(), vec![4, 2])
}

/// An operand: a module input of a shape, in a value range, or a constant.
enum In {
    /// A module input with values in `lo..hi`.
    X(Vec<usize>, f32, f32),
    /// A float constant with values in `lo..hi`.
    C(Vec<usize>, f32, f32),
    /// An int32 constant.
    Ci(Vec<i32>, Vec<usize>),
    /// A module input with the given values.
    Xv(Vec<f32>, Vec<usize>),
    /// A float constant with the given values.
    Cv(Vec<f32>, Vec<usize>),
}

fn x(d: &[usize]) -> In {
    In::X(d.to_vec(), -2.0, 2.0)
}

fn xp(d: &[usize]) -> In {
    In::X(d.to_vec(), 0.1, 3.0)
}

fn cf(d: &[usize]) -> In {
    In::C(d.to_vec(), -1.0, 1.0)
}

fn cp(d: &[usize]) -> In {
    In::C(d.to_vec(), 0.2, 2.0)
}

fn ci(v: &[i32], d: &[usize]) -> In {
    In::Ci(v.to_vec(), d.to_vec())
}

struct Case {
    name: String,
    op: &'static str,
    ins: Vec<In>,
    params: Vec<(&'static str, P)>,
    /// Outputs of a packed result taken by `_field` (0: the result itself).
    fields: usize,
}

fn case(name: &str, op: &'static str, ins: Vec<In>, params: Vec<(&'static str, P)>) -> Case {
    Case {
        name: name.to_string(),
        op,
        ins,
        params,
        fields: 0,
    }
}

/// Deterministic values in `lo..hi` (a linear congruential generator).
fn values(n: usize, seed: &mut u64, lo: f32, hi: f32) -> Vec<f32> {
    (0..n)
        .map(|_| {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let u = (*seed >> 40) as f32 / (1u64 << 24) as f32;
            lo + (hi - lo) * u
        })
        .collect()
}

fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    let unary: &[(&'static str, bool)] = &[
        ("abs", false),
        ("exp", false),
        ("sigmoid", false),
        ("tanh", false),
        ("relu", false),
        ("sqrt", true),
        ("log", true),
        ("_copy", false),
        ("ceil", false),
        ("floor", false),
        ("erf", false),
        ("softplus", false),
        ("square", false),
        ("rsqrt", true),
    ];
    for &(op, pos) in unary {
        for (k, d) in [vec![2, 3, 4, 5], vec![7]].iter().enumerate() {
            let a = if pos { xp(d) } else { x(d) };
            v.push(case(&format!("{op}_{k}"), op, vec![a], vec![]));
        }
    }
    for op in ["add", "sub", "mul", "div", "maximum", "minimum"] {
        v.push(case(
            &format!("{op}_same"),
            op,
            vec![x(&[2, 3, 4]), xp(&[2, 3, 4])],
            vec![],
        ));
        v.push(case(
            &format!("{op}_bcast"),
            op,
            vec![x(&[2, 3, 4, 5]), cp(&[3, 1, 5])],
            vec![],
        ));
    }
    v.push(case(
        "relu_max_0",
        "relu_max",
        vec![x(&[2, 3, 4])],
        vec![("max", P::F(1.0))],
    ));
    v.push(case(
        "relu_max_1",
        "relu_max",
        vec![x(&[5, 6])],
        vec![("max", P::F(0.5))],
    ));
    v.push(case(
        "hard_sigmoid_0",
        "hard_sigmoid",
        vec![x(&[2, 3, 4])],
        vec![],
    ));
    v.push(case(
        "hard_sigmoid_1",
        "hard_sigmoid",
        vec![x(&[4, 5])],
        vec![("alpha", P::F(0.3)), ("beta", P::F(0.4))],
    ));
    v.push(case(
        "leaky_relu_0",
        "leaky_relu",
        vec![x(&[2, 3, 4])],
        vec![("scale", P::F(0.1))],
    ));
    v.push(case(
        "pow_0",
        "pow",
        vec![xp(&[2, 3, 4])],
        vec![("y", P::F(2.5))],
    ));
    v.push(case("pow_1", "pow", vec![x(&[6])], vec![("y", P::F(3.0))]));
    for (k, (d, dims, keep)) in [
        (vec![2, 3, 4, 5], vec![1], 1),
        (vec![2, 3, 4, 5], vec![2, 3], 0),
        (vec![3, 4], vec![-1], 1),
    ]
    .into_iter()
    .enumerate()
    {
        for op in ["reduce_sum", "reduce_mean"] {
            if op == "reduce_sum" && dims.len() > 1 {
                continue; // TenniS reduce_sum takes one dim
            }
            v.push(case(
                &format!("{op}_{k}"),
                op,
                vec![x(&d)],
                vec![("dims", iv(&dims)), ("keep_dims", i(keep))],
            ));
        }
    }
    v.push(case(
        "max_0",
        "max",
        vec![x(&[2, 3, 4])],
        vec![("dim", i(1)), ("keep_dims", i(0))],
    ));
    v.push(case(
        "max_1",
        "max",
        vec![x(&[2, 3, 4])],
        vec![("dim", i(-1))],
    ));
    v.push(case(
        "argmax_0",
        "argmax",
        vec![x(&[2, 3, 4])],
        vec![("dim", i(1))],
    ));
    v.push(case(
        "argmax_1",
        "argmax",
        vec![x(&[5, 6])],
        vec![("dim", i(-1))],
    ));
    v.push(case(
        "squeeze_0",
        "squeeze",
        vec![x(&[2, 1, 4, 1])],
        vec![("axes", iv(&[1, 3]))],
    ));
    v.push(case(
        "unsqueeze_0",
        "unsqueeze",
        vec![x(&[2, 4])],
        vec![("axes", iv(&[0, 2]))],
    ));
    v.push(case(
        "flatten2d_0",
        "flatten2d",
        vec![x(&[2, 3, 4, 5])],
        vec![("dim", i(2))],
    ));
    v.push(case(
        "flatten2d_1",
        "flatten2d",
        vec![x(&[2, 3, 4])],
        vec![],
    ));
    v.push(case(
        "flatten_0",
        "flatten",
        vec![x(&[2, 3, 4, 5])],
        vec![("dim", i(1))],
    ));
    v.push(case(
        "flatten_1",
        "flatten",
        vec![x(&[2, 3, 4, 5])],
        vec![("dim", i(2))],
    ));
    v.push(case(
        "tile_0",
        "tile",
        vec![x(&[2, 3])],
        vec![("repeats", iv(&[2, 3]))],
    ));
    v.push(case(
        "tile_1",
        "tile",
        vec![x(&[1, 2, 3])],
        vec![("repeats", iv(&[3, 1, 2]))],
    ));
    v.push(case(
        "l2_norm_0",
        "l2_norm",
        vec![x(&[2, 3, 4])],
        vec![("dim", i(1))],
    ));
    v.push(case(
        "l2_norm_1",
        "l2_norm",
        vec![x(&[3, 8])],
        vec![("dim", i(-1)), ("epsilon", P::F(1e-3))],
    ));
    v.push(case(
        "softmax_0",
        "softmax",
        vec![x(&[2, 3, 4])],
        vec![("dim", i(1))],
    ));
    v.push(case(
        "softmax_1",
        "softmax",
        vec![x(&[3, 5])],
        vec![("dim", i(-1))],
    ));
    v.push(case(
        "concat_0",
        "concat",
        vec![x(&[2, 3, 4]), x(&[2, 2, 4])],
        vec![("dim", i(1))],
    ));
    v.push(case(
        "concat_1",
        "concat",
        vec![x(&[2, 3]), cf(&[1, 3]), x(&[3, 3])],
        vec![("dim", i(0))],
    ));
    v.push(case(
        "stack_0",
        "stack",
        vec![x(&[2, 3]), x(&[2, 3])],
        vec![("axis", i(1))],
    ));
    v.push(case(
        "gather_0",
        "gather",
        vec![x(&[4, 3, 2]), ci(&[3, 0, 2], &[3])],
        vec![("axis", i(0))],
    ));
    v.push(case(
        "gather_1",
        "gather",
        vec![x(&[4, 3, 2]), ci(&[1, 0, 1, 2], &[2, 2])],
        vec![("axis", i(1))],
    ));
    v.push(case(
        "transpose_0",
        "_transpose",
        vec![x(&[2, 3, 4, 5])],
        vec![("permute", iv(&[0, 2, 3, 1]))],
    ));
    v.push(case(
        "transpose_1",
        "_transpose",
        vec![x(&[2, 3, 4])],
        vec![("permute", iv(&[2, 0, 1]))],
    ));
    v.push(case(
        "reshape_0",
        "_reshape",
        vec![x(&[2, 3, 4])],
        vec![("shape", iv(&[4, -1]))],
    ));
    v.push(case(
        "reshape_v2_0",
        "_reshape_v2",
        vec![x(&[2, 3, 4]), ci(&[2, 2, 6], &[3])],
        vec![],
    ));
    v.push(case("shape_0", "_shape", vec![x(&[2, 3, 4])], vec![]));
    v.push(case("to_float_0", "to_float", vec![x(&[3, 4])], vec![]));
    v.push(case(
        "cast_0",
        "_cast",
        vec![x(&[3, 4])],
        vec![("dtype", i(5))],
    ));
    v.push(case(
        "gemm_0",
        "gemm",
        vec![x(&[3, 4]), cf(&[4, 5]), cf(&[5])],
        vec![
            ("alpha", P::F(1.5)),
            ("beta", P::F(0.5)),
            ("transA", i(0)),
            ("transB", i(0)),
        ],
    ));
    v.push(case(
        "gemm_1",
        "gemm",
        vec![x(&[4, 3]), cf(&[5, 4]), cf(&[3, 5])],
        vec![
            ("alpha", P::F(1.0)),
            ("beta", P::F(1.0)),
            ("transA", i(1)),
            ("transB", i(1)),
        ],
    ));
    v.push(case(
        "inner_prod_0",
        "inner_prod",
        vec![x(&[2, 3, 2, 2]), cf(&[12, 5])],
        vec![],
    ));
    v.push(case(
        "inner_prod_1",
        "inner_prod",
        vec![x(&[2, 6]), cf(&[4, 6])],
        vec![("transpose", i(1))],
    ));
    let nchw = || ("format", P::S("NCHW"));
    v.push(case(
        "add_bias_0",
        "add_bias",
        vec![x(&[2, 3, 4, 5]), cf(&[3])],
        vec![nchw(), ("dim", i(1))],
    ));
    v.push(case(
        "batch_norm_0",
        "batch_norm",
        vec![x(&[2, 3, 4, 5]), cf(&[3]), cp(&[3])],
        vec![("dim", i(1)), ("epsilon", P::F(1e-3))],
    ));
    v.push(case(
        "batch_scale_0",
        "batch_scale",
        vec![x(&[2, 3, 4, 5]), cf(&[3]), cf(&[3])],
        vec![("dim", i(1))],
    ));
    v.push(case(
        "prelu_0",
        "prelu",
        vec![x(&[2, 3, 4, 5]), cf(&[3])],
        vec![("dim", i(1))],
    ));
    for (k, (pads, stride, dil)) in [
        ([0, 0, 0, 0, 1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1]),
        ([0, 0, 0, 0, 0, 1, 2, 0], [1, 1, 2, 2], [1, 1, 1, 1]),
        ([0, 0, 0, 0, 2, 2, 2, 2], [1, 1, 1, 1], [1, 1, 2, 2]),
    ]
    .into_iter()
    .enumerate()
    {
        let params = || {
            vec![
                nchw(),
                ("padding", pad4(pads)),
                ("stride", iv(&stride)),
                ("dilation", iv(&dil)),
                ("padding_value", P::F(0.0)),
            ]
        };
        v.push(case(
            &format!("conv2d_{k}"),
            "conv2d",
            vec![x(&[1, 3, 7, 8]), cf(&[4, 3, 3, 3])],
            params(),
        ));
        v.push(case(
            &format!("depthwise_conv2d_{k}"),
            "depthwise_conv2d",
            vec![x(&[1, 3, 7, 8]), cf(&[1, 3, 3, 3])],
            params(),
        ));
    }
    for (k, (ty, pads, ks, st, pt)) in [
        (0, [0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 2, 2], [1, 1, 2, 2], 0),
        (1, [0, 0, 0, 0, 1, 1, 1, 1], [1, 1, 3, 3], [1, 1, 2, 2], 0),
        (1, [0, 0, 0, 0, 1, 1, 1, 1], [1, 1, 3, 3], [1, 1, 2, 2], 3),
        (0, [0, 0, 0, 0, 0, 1, 0, 1], [1, 1, 3, 3], [1, 1, 2, 2], 0),
    ]
    .into_iter()
    .enumerate()
    {
        v.push(case(
            &format!("pooling2d_{k}"),
            "pooling2d",
            vec![x(&[1, 2, 7, 8])],
            vec![
                nchw(),
                ("type", i(ty)),
                ("padding", pad4(pads)),
                ("padding_type", i(pt)),
                ("ksize", iv(&ks)),
                ("stride", iv(&st)),
            ],
        ));
    }
    for ty in [0, 1] {
        v.push(case(
            &format!("global_pooling2d_{ty}"),
            "global_pooling2d",
            vec![x(&[2, 3, 4, 5])],
            vec![nchw(), ("type", i(ty))],
        ));
    }
    shape::cases(&mut v);
    v.extend(logic_and_indexing::cases());
    v
}

/// Padding, slicing, cropping, resizing and normalisation operators.
#[path = "tennis_op_cases/shape.rs"]
mod shape;

/// Comparison, selection, broadcasting, indexing, shape-building,
/// packed-output, detection and convolution-variant operators.
#[path = "tennis_op_cases/logic_and_indexing.rs"]
mod logic_and_indexing;

/// `.npz` reading and writing, shared with the tests.
#[allow(dead_code)]
#[path = "../tests/common/npz.rs"]
mod npz;

fn build(c: &Case, dir: &std::path::Path) -> Res<()> {
    let mut b = ModuleBuilder::new();
    let mut seed = c
        .name
        .bytes()
        .fold(17u64, |h, x| h.wrapping_mul(31).wrapping_add(u64::from(x)));
    let mut ids = Vec::new();
    let mut feeds: Vec<(String, Tensor<'static>)> = Vec::new();
    for (k, a) in c.ins.iter().enumerate() {
        let id = match a {
            In::X(d, lo, hi) => {
                let n = format!("x{k}");
                let t = Tensor::from_values(
                    d.as_slice(),
                    &values(d.iter().product(), &mut seed, *lo, *hi),
                )?;
                feeds.push((n.clone(), t));
                {
                    let s: Vec<i32> = d.iter().map(|&v| v as i32).collect();
                    b.input_with(&n, DType::F32, &s)?
                }
            }
            In::C(d, lo, hi) => {
                let t = Tensor::from_values(
                    d.as_slice(),
                    &values(d.iter().product(), &mut seed, *lo, *hi),
                )?;
                b.constant(&format!("c{k}"), t)?
            }
            In::Ci(vals, d) => {
                b.constant(&format!("c{k}"), Tensor::from_values(d.as_slice(), vals)?)?
            }
            In::Xv(vals, d) => {
                let n = format!("x{k}");
                feeds.push((n.clone(), Tensor::from_values(d.as_slice(), vals)?));
                let s: Vec<i32> = d.iter().map(|&v| v as i32).collect();
                b.input_with(&n, DType::F32, &s)?
            }
            In::Cv(vals, d) => {
                b.constant(&format!("c{k}"), Tensor::from_values(d.as_slice(), vals)?)?
            }
        };
        ids.push(id);
    }
    let mut params: Vec<(&str, Packed<'static>)> = Vec::new();
    for (key, p) in &c.params {
        let v: Packed<'static> = match p {
            P::I(vals, d) => Tensor::from_values(d.as_slice(), vals)?.into(),
            P::F(f) => Tensor::from_values([], &[*f])?.into(),
            P::Fv(v) => Tensor::from_values([v.len()], v)?.into(),
            P::S(s) => Packed::string(s),
        };
        params.push((key, v));
    }
    let y = b.op_with(c.op, "y", &ids, params)?;
    if c.fields == 0 {
        b.output(y)?;
    }
    for k in 0..c.fields {
        let off: Packed<'static> = Tensor::from_values([], &[k as i32])?.into();
        let f = b.op_with("_field", &format!("y{k}"), &[y], vec![("offset", off)])?;
        b.output(f)?;
    }
    let m = b.build()?;
    m.save(
        dir.join(format!("{}.tsm", c.name)),
        &WriteOptions::default(),
    )?;
    npz::write_npz(&dir.join(format!("{}.in.npz", c.name)), &feeds)?;
    Ok(())
}

fn main() -> Res<()> {
    let dir = std::env::args()
        .nth(1)
        .ok_or("usage: tennis_op_cases DIR")?;
    let dir = std::path::PathBuf::from(dir);
    std::fs::create_dir_all(&dir)?;
    let all = cases();
    for c in &all {
        build(c, &dir).map_err(|e| format!("{}: {e}", c.name))?;
    }
    println!("wrote {} modules to {}", all.len(), dir.display());
    Ok(())
}
