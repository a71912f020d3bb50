//! Writes the single-operator TenniS modules of
//! `testdata/translate/export/tennis/`: for each case `NAME.tsm` (one
//! operator on module inputs and constants) and `NAME.in.npz` (its inputs,
//! fixed pseudo-random values, members in module input order). The
//! maintainer then runs the real TenniS runtime on them
//! (`crates/graph-translate/tools/reference_outputs.py DIR --runtime tennis`)
//! to make `NAME.out.npz`; `tests/tennis_op_export.rs` checks the ONNX
//! exports against those.
//!
//! `cargo run -p mlformats --example tennis_op_cases -- DIR`

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
    v.extend(logic_and_indexing::cases());
    v
}

/// Comparison, selection, broadcasting, rank, indexing and shape-building
/// operators (`tennis/logic.rs`, `tennis/indexing.rs` of the exporter).
mod logic_and_indexing {
    use super::{Case, In, P, case, cf, ci, i, iv, pad4, x};

    fn xv(v: &[f32], d: &[usize]) -> In {
        In::Xv(v.to_vec(), d.to_vec())
    }

    fn cvals(v: &[f32]) -> P {
        P::Fv(v.to_vec())
    }

    fn cv(v: &[f32], d: &[usize]) -> In {
        In::Cv(v.to_vec(), d.to_vec())
    }

    pub(super) fn cases() -> Vec<Case> {
        let mut v = Vec::new();
        let eq_x = [0.0, 1.0, 2.0, 3.0, 1.0, 0.0];
        v.push(case(
            "equal_0",
            "equal",
            vec![xv(&eq_x, &[2, 3]), ci(&[1, 0, 2], &[1, 3])],
            vec![],
        ));
        v.push(case(
            "equal_1",
            "equal",
            vec![ci(&[1, 2, 3, 3, 2, 1], &[2, 1, 3]), ci(&[2, 3], &[1, 2, 1])],
            vec![],
        ));
        v.push(case(
            "equal_2",
            "equal",
            vec![
                xv(&[1.0, 2.5, -3.0, 4.0], &[4]),
                xv(&[1.0, 2.0, -3.0, 0.0], &[4]),
            ],
            vec![],
        ));
        v.push(case(
            "mod_0",
            "mod",
            vec![ci(&[7, -7, 5, -5, 9, 0], &[2, 3]), ci(&[3, 3, -2], &[3])],
            vec![],
        ));
        v.push(case(
            "mod_1",
            "mod",
            vec![ci(&[10, 11, -12, 13], &[4]), ci(&[4], &[])],
            vec![],
        ));
        v.push(case(
            "where_0",
            "where",
            vec![
                ci(&[0, 1, 2, 1, 0, 0], &[2, 1, 3]),
                x(&[4, 3]),
                x(&[2, 4, 1]),
            ],
            vec![],
        ));
        v.push(case(
            "where_1",
            "where",
            vec![
                xv(&[0.0, 1.5, -2.0, 0.0, 0.0, 3.0], &[2, 3]),
                x(&[2, 3]),
                cf(&[3]),
            ],
            vec![],
        ));
        v.push(case(
            "broadcast_0",
            "broadcast",
            vec![x(&[3, 1]), ci(&[2, 3, 4], &[3])],
            vec![],
        ));
        v.push(case(
            "broadcast_1",
            "broadcast",
            vec![x(&[1, 4]), ci(&[3, 1], &[2])],
            vec![],
        ));
        v.push(case(
            "expand_0",
            "_expand",
            vec![x(&[2, 3]), ci(&[4], &[])],
            vec![],
        ));
        v.push(case(
            "expand_1",
            "_expand",
            vec![x(&[2, 3]), ci(&[4], &[])],
            vec![("inverse", i(1))],
        ));
        v.push(case(
            "expand_2",
            "_expand",
            vec![x(&[3]), ci(&[3], &[])],
            vec![("front", i(1))],
        ));
        v.push(case("dims_0", "_dims", vec![x(&[2, 3, 4])], vec![]));
        v.push(case("dims_1", "_dims", vec![x(&[5])], vec![]));
        v.push(case(
            "matmul_0",
            "matmul",
            vec![x(&[3, 4]), cf(&[4, 5])],
            vec![],
        ));
        v.push(case(
            "matmul_1",
            "matmul",
            vec![x(&[2, 3, 4]), cf(&[4, 2])],
            vec![],
        ));
        v.push(case(
            "matmul_2",
            "matmul",
            vec![x(&[1, 1, 3, 4]), cf(&[1, 1, 4, 5])],
            vec![],
        ));
        v.push(case(
            "divided_0",
            "divided",
            vec![x(&[1, 2, 5, 7])],
            vec![("size", iv(&[4, 4]))],
        ));
        v.push(case(
            "divided_1",
            "divided",
            vec![x(&[2, 3, 5])],
            vec![("size", iv(&[1, 3])), ("padding_value", P::F(1.5))],
        ));
        v.push(case(
            "gatherv2_0",
            "gatherv2",
            vec![x(&[4, 3, 2]), ci(&[0, 1, 3, 2, 1, 0], &[3, 2])],
            vec![],
        ));
        v.push(case(
            "gatherv2_1",
            "gatherv2",
            vec![x(&[4, 3]), ci(&[3, 0, 2], &[3, 1])],
            vec![],
        ));
        v.push(case(
            "gatherv2_2",
            "gatherv2",
            vec![
                x(&[2, 3, 4]),
                ci(&[0, 0, 0, 1, 2, 3, 1, 1, 1, 0, 2, 1], &[2, 2, 3]),
            ],
            vec![],
        ));
        v.push(case(
            "gather_elements_0",
            "gather_elements",
            vec![x(&[3, 4]), ci(&[2, 0, 1, 2], &[1, 4])],
            vec![("axis", i(0))],
        ));
        v.push(case(
            "gather_elements_1",
            "gather_elements",
            vec![x(&[2, 3, 4]), ci(&[2, 0, 1, 1, 0, 2, 2, -1], &[2, 1, 4])],
            vec![("axis", i(1))],
        ));
        v.push(case(
            "gather_elements_2",
            "gather_elements",
            vec![x(&[3, 5]), ci(&[4, 0, 2], &[3, 1])],
            vec![("axis", i(-1))],
        ));
        v.push(case(
            "gather_elements_3",
            "gather_elements",
            vec![x(&[3, 4]), ci(&[1, 2, 0, 2], &[4])],
            vec![("axis", i(0))],
        ));
        v.push(case(
            "dimshuffle_0",
            "_dimshuffle",
            vec![x(&[2, 3, 4])],
            vec![("dim", i(1)), ("shuffle", iv(&[2, 0, 0, 1]))],
        ));
        v.push(case(
            "dimshuffle_1",
            "_dimshuffle",
            vec![x(&[4, 2])],
            vec![("dim", i(0)), ("shuffle", iv(&[3, 1]))],
        ));
        v.push(case(
            "range_0",
            "range",
            vec![ci(&[0], &[]), ci(&[10], &[]), ci(&[3], &[])],
            vec![],
        ));
        v.push(case(
            "range_1",
            "range",
            vec![ci(&[5], &[]), ci(&[0], &[]), ci(&[-2], &[])],
            vec![],
        ));
        v.push(case(
            "range_2",
            "range",
            vec![cv(&[0.5], &[]), cv(&[2.0], &[]), cv(&[0.3], &[])],
            vec![],
        ));
        v.push(case(
            "range_3",
            "range",
            vec![xv(&[1.0], &[1]), cv(&[4.0], &[1]), cv(&[0.5], &[1])],
            vec![],
        ));
        v.push(case(
            "range_4",
            "range",
            vec![cv(&[3.0], &[]), cv(&[-1.0], &[]), cv(&[-0.75], &[])],
            vec![],
        ));
        v.push(case(
            "constant_of_shape_0",
            "constant_of_shape",
            vec![ci(&[2, 3], &[2])],
            vec![],
        ));
        v.push(case(
            "constant_of_shape_1",
            "constant_of_shape",
            vec![ci(&[3, 1, 2], &[3])],
            vec![("value", P::F(2.5))],
        ));
        v.push(case(
            "constant_of_shape_2",
            "constant_of_shape",
            vec![ci(&[2, 2], &[2])],
            vec![("value", P::I(vec![7], vec![1]))],
        ));
        let fields = |mut c: Case, k: usize| {
            c.fields = k;
            c
        };
        v.push(fields(
            case(
                "chunk_0",
                "chunk",
                vec![x(&[2, 6, 3])],
                vec![("chunks", i(3)), ("dim", i(1))],
            ),
            3,
        ));
        v.push(fields(
            case(
                "chunk_1",
                "chunk",
                vec![x(&[7, 4])],
                vec![("chunks", i(3)), ("dim", i(0))],
            ),
            3,
        ));
        v.push(fields(
            case(
                "chunk_2",
                "chunk",
                vec![x(&[2, 5, 3])],
                vec![("chunks", i(2))],
            ),
            2,
        ));
        v.push(fields(
            case(
                "split_0",
                "split",
                vec![x(&[2, 7]), ci(&[3, 4], &[2])],
                vec![("axis", i(1))],
            ),
            2,
        ));
        v.push(fields(
            case(
                "split_1",
                "split",
                vec![x(&[6, 2, 3]), ci(&[1, 2, 3], &[3])],
                vec![("axis", i(0))],
            ),
            3,
        ));
        v.push(fields(
            case(
                "topkv2_0",
                "topkv2",
                vec![x(&[3, 7])],
                vec![("number", i(3))],
            ),
            2,
        ));
        v.push(fields(
            case(
                "topkv2_1",
                "topkv2",
                vec![x(&[2, 3, 4])],
                vec![("number", i(6)), ("sorted", i(1))],
            ),
            2,
        ));
        for (k, (pads, stride, dil)) in [
            ([0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1], [1, 1, 1, 1]),
            ([0, 0, 0, 0, 1, 1, 1, 1], [1, 1, 2, 2], [1, 1, 1, 1]),
            ([0, 0, 0, 0, 0, 1, 1, 0], [1, 1, 2, 3], [1, 1, 2, 1]),
        ]
        .into_iter()
        .enumerate()
        {
            v.push(case(
                &format!("transpose_conv2d_{k}"),
                "transpose_conv2d",
                vec![x(&[1, 3, 4, 5]), cf(&[3, 2, 3, 3])],
                vec![
                    ("format", P::S("NCHW")),
                    ("padding", pad4(pads)),
                    ("stride", iv(&stride)),
                    ("dilation", iv(&dil)),
                ],
            ));
        }
        v.push(fields(
            case(
                "yolo_0",
                "yolo",
                vec![x(&[1, 14, 3, 4])],
                vec![
                    ("classes", i(2)),
                    ("mask", iv(&[0, 1])),
                    ("anchors", P::I(vec![10, 14, 23, 27], vec![4])),
                ],
            ),
            1,
        ));
        let blocks = |key: &'static str, b: [i32; 2], p: [i32; 4]| {
            vec![("block_shape", iv(&b)), (key, P::I(p.to_vec(), vec![2, 2]))]
        };
        v.push(case(
            "space_to_batch4d_0",
            "space_to_batch4d",
            vec![x(&[2, 3, 4, 6])],
            blocks("padding", [2, 2], [0, 0, 0, 0]),
        ));
        v.push(case(
            "space_to_batch4d_1",
            "space_to_batch4d",
            vec![x(&[1, 2, 5, 4])],
            blocks("padding", [2, 3], [1, 0, 1, 1]),
        ));
        v.push(case(
            "batch_to_space4d_0",
            "batch_to_space4d",
            vec![x(&[8, 3, 2, 3])],
            blocks("crop", [2, 2], [0, 0, 0, 0]),
        ));
        v.push(case(
            "batch_to_space4d_1",
            "batch_to_space4d",
            vec![x(&[6, 2, 3, 2])],
            blocks("crop", [2, 3], [1, 0, 1, 2]),
        ));
        v.push(case(
            "scatter_nd_0",
            "scatter_nd",
            vec![x(&[5, 3]), ci(&[3, 0], &[2, 1]), x(&[2, 3])],
            vec![],
        ));
        v.push(case(
            "scatter_nd_1",
            "scatter_nd",
            vec![x(&[4, 2, 3]), ci(&[2, 1, 3], &[3]), x(&[3, 2, 3])],
            vec![],
        ));
        v.push(fields(
            case(
                "lstm_0",
                "LSTM",
                vec![
                    x(&[4, 2, 3]),
                    cf(&[1, 20, 3]),
                    cf(&[1, 20, 5]),
                    cf(&[1, 40]),
                    cf(&[1, 2, 5]),
                    cf(&[1, 2, 5]),
                ],
                vec![("direction", P::S("forward")), ("hidden_size", i(5))],
            ),
            3,
        ));
        v.push(fields(
            case(
                "lstm_1",
                "LSTM",
                vec![
                    x(&[3, 1, 2]),
                    cf(&[2, 16, 2]),
                    cf(&[2, 16, 4]),
                    cf(&[2, 32]),
                    ci(&[0], &[1]),
                    ci(&[0], &[1]),
                ],
                vec![("direction", P::S("bidirectional")), ("hidden_size", i(4))],
            ),
            3,
        ));
        let boxes = [
            0.0, 0.0, 1.0, 1.0, 0.0, 0.1, 1.0, 1.1, 0.0, -0.1, 1.0, 0.9, 0.0, 10.0, 1.0, 11.0, 0.0,
            10.1, 1.0, 11.1, 0.0, 100.0, 1.0, 101.0,
        ];
        let scores = [0.9, 0.75, 0.6, 0.95, 0.5, 0.3];
        for (k, (mode, max, iou, score)) in [
            ("xyxy", 3, 0.5, 0.0),
            ("xyxy", 10, 0.7, 0.4),
            ("xywh", 4, 0.3, 0.1),
        ]
        .into_iter()
        .enumerate()
        {
            v.push(case(
                &format!("non_max_suppression_v3_{k}"),
                "non_max_suppression_v3",
                vec![xv(&boxes, &[6, 4]), xv(&scores, &[6])],
                vec![
                    ("max_output_size", i(max)),
                    ("iou_threshold", P::F(iou)),
                    ("score_threshold", P::F(score)),
                    ("mode", P::S(mode)),
                ],
            ));
        }
        let rois = [
            0.0, 0.5, 0.5, 5.5, 4.0, 1.0, 2.0, 1.0, 3.0, 6.5, 0.0, -1.0, 3.0, 9.0, 8.0,
        ];
        for (k, (ph, pw, scale, ratio)) in [(2, 2, 1.0, 2), (3, 2, 0.5, 0), (2, 3, 1.0, 1)]
            .into_iter()
            .enumerate()
        {
            v.push(case(
                &format!("roi_align_{k}"),
                "roi_align",
                vec![x(&[2, 3, 7, 8]), cv(&rois, &[3, 5])],
                vec![
                    ("pool_h", i(ph)),
                    ("pool_w", i(pw)),
                    ("spatial_scale", P::F(scale)),
                    ("sampling_ratio", i(ratio)),
                ],
            ));
        }
        for (k, (pads, stride, dil)) in [
            ([0, 0, 0, 0, 1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1]),
            ([0, 0, 0, 0, 0, 1, 2, 0], [1, 1, 2, 2], [1, 1, 1, 1]),
            ([0, 0, 0, 0, 2, 2, 2, 2], [1, 1, 1, 1], [1, 1, 2, 2]),
        ]
        .into_iter()
        .enumerate()
        {
            for (op, m) in [("conv2d_v2", 4), ("depthwise_conv2d_v2", 1)] {
                v.push(case(
                    &format!("{op}_{k}"),
                    op,
                    vec![x(&[1, 3, 7, 8]), ci(&pads, &[4, 2]), cf(&[m, 3, 3, 3])],
                    vec![
                        ("format", P::S("NCHW")),
                        ("stride", iv(&stride)),
                        ("dilation", iv(&dil)),
                    ],
                ));
            }
        }
        for (k, pads) in [[0, 0, 0, 0, 1, 1, 1, 1], [0, 0, 0, 0, 0, 2, 1, 0]]
            .into_iter()
            .enumerate()
        {
            v.push(case(
                &format!("conv2d_winograd_{k}"),
                "conv2d_winograd",
                vec![x(&[1, 3, 9, 10]), cf(&[4, 3, 3, 3])],
                vec![("format", P::S("NCHW")), ("padding", pad4(pads))],
            ));
            v.push(case(
                &format!("conv2d_winograd_v2_{k}"),
                "conv2d_winograd_v2",
                vec![x(&[2, 2, 8, 7]), ci(&pads, &[4, 2]), cf(&[3, 2, 3, 3])],
                vec![("format", P::S("NCHW"))],
            ));
        }
        let halves: Vec<f32> = (0..20).map(|k| k as f32 - 9.5).collect();
        v.push(case(
            "quantize_0",
            "quantize",
            vec![xv(&halves, &[1, 20])],
            vec![("quantize_scale", P::F(1.0))],
        ));
        v.push(case(
            "quantize_1",
            "quantize",
            vec![x(&[1, 3, 5, 7])],
            vec![("quantize_scale", P::F(40.0))],
        ));
        let wide: Vec<f32> = (0..24).map(|k| (k as f32 - 12.0) * 0.25).collect();
        v.push(case(
            "quantize_2",
            "quantize",
            vec![xv(&wide, &[3, 8])],
            vec![("quantize_scale", cvals(&[2.0, 60.0, 0.5]))],
        ));
        v.push(case(
            "prior_box_0",
            "prior_box",
            vec![x(&[1, 2, 3, 4]), x(&[1, 3, 30, 40])],
            vec![
                ("min_size", cvals(&[8.0])),
                ("max_size", cvals(&[16.0])),
                ("aspect_ratio", cvals(&[2.0])),
                ("clip", i(0)),
                ("variance", cvals(&[0.1, 0.1, 0.2, 0.2])),
                ("offset", P::F(0.5)),
            ],
        ));
        v.push(case(
            "prior_box_1",
            "prior_box",
            vec![x(&[1, 2, 2, 5]), x(&[1, 3, 20, 30])],
            vec![
                ("min_size", cvals(&[10.0, 20.0])),
                ("max_size", cvals(&[])),
                ("aspect_ratio", cvals(&[2.0, 3.0])),
                ("flip", i(0)),
                ("clip", i(1)),
                ("variance", cvals(&[0.1])),
                ("offset", P::F(0.5)),
                ("step", P::F(8.0)),
            ],
        ));
        v.push(case(
            "tile_v2_0",
            "tile_v2",
            vec![x(&[2, 3]), ci(&[2, 2], &[2])],
            vec![],
        ));
        v.push(case(
            "tile_v2_1",
            "tile_v2",
            vec![x(&[2, 3]), ci(&[2, 1, 3], &[3])],
            vec![],
        ));
        v.push(case(
            "tile_v2_2",
            "tile_v2",
            vec![x(&[2, 3, 2]), ci(&[3], &[1])],
            vec![],
        ));
        v
    }
}

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
    mlformats::save(
        dir.join(format!("{}.in.npz", c.name)),
        feeds.iter().map(|(n, t)| (n, t)),
    )?;
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
