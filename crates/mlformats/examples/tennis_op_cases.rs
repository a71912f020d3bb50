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
    /// A module input with the given (float) values: integers TenniS
    /// computes at run time (paddings, bounds).
    V(Vec<f32>, Vec<usize>),
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
}

fn case(name: &str, op: &'static str, ins: Vec<In>, params: Vec<(&'static str, P)>) -> Case {
    Case {
        name: name.to_string(),
        op,
        ins,
        params,
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
    shape_op_cases(&mut v);
    v
}

/// Padding, slicing, cropping, resizing and normalisation (helper branch
/// tsexp-a).
fn shape_op_cases(v: &mut Vec<Case>) {
    let pads: [(&[usize], &[i32], f32); 4] = [
        (&[2, 3, 4, 5], &[0, 0, 0, 0, 1, 2, 2, 1], 0.0),
        (&[2, 3, 4, 5], &[0, 0, 1, 0, 0, 0, -1, 2], 1.5),
        (&[3, 6], &[1, 1, 2, -2], -1.0),
        (&[2, 3, 5], &[0, 0, 1, 2, -1, -1], 0.25),
    ];
    for (k, (d, p, val)) in pads.into_iter().enumerate() {
        v.push(case(
            &format!("pad_{k}"),
            "pad",
            vec![x(d), ci(p, &[d.len(), 2])],
            vec![("padding_value", P::F(val))],
        ));
    }
    // bounds and paddings computed at run time (module inputs)
    let fv = |v: &[f32], d: &[usize]| In::V(v.to_vec(), d.to_vec());
    v.push(case(
        "pad_dyn_0",
        "pad",
        vec![
            x(&[2, 3, 4, 5]),
            fv(&[0., 0., 1., -1., 2., 0., -1., 2.], &[4, 2]),
        ],
        vec![("padding_value", P::F(0.5))],
    ));
    v.push(case(
        "slice_v2_dyn_0",
        "slice_v2",
        vec![
            x(&[4, 5, 6]),
            fv(&[1., 0., 2.], &[3]),
            fv(&[2., -1., 3.], &[3]),
        ],
        vec![],
    ));
    v.push(case(
        "slice_v3_dyn_0",
        "slice_v3",
        vec![
            x(&[4, 5, 6]),
            fv(&[1., 1.], &[2]),
            fv(&[3., 100.], &[2]),
            ci(&[0, 2], &[2]),
            ci(&[1, 3], &[2]),
        ],
        vec![],
    ));
    let begin_size: [(&[usize], &[i32], &[i32]); 2] = [
        (&[4, 5, 6], &[1, 0, 2], &[2, -1, 3]),
        (&[3, 4], &[0, 1], &[3, 2]),
    ];
    for (k, (d, b, s)) in begin_size.into_iter().enumerate() {
        v.push(case(
            &format!("slice_{k}"),
            "slice",
            vec![x(d)],
            vec![("begin", iv(b)), ("size", iv(s))],
        ));
        v.push(case(
            &format!("slice_v2_{k}"),
            "slice_v2",
            vec![x(d), ci(b, &[b.len()]), ci(s, &[s.len()])],
            vec![],
        ));
    }
    type V3<'a> = (&'a [i32], &'a [i32], Option<&'a [i32]>, Option<&'a [i32]>);
    let v3: [V3; 4] = [
        (&[1, -4], &[3, 100], Some(&[0, 2]), None),
        (&[0, 5], &[3, 0], Some(&[1, 2]), Some(&[2, -2])),
        (&[1], &[-1], None, None),
        (&[-100, 1], &[2, 100], Some(&[0, 2]), Some(&[1, 3])),
    ];
    for (k, (st, en, ax, sp)) in v3.into_iter().enumerate() {
        let mut ins = vec![x(&[4, 5, 6]), ci(st, &[st.len()]), ci(en, &[en.len()])];
        if let Some(a) = ax {
            ins.push(ci(a, &[a.len()]));
        }
        if let Some(s) = sp {
            ins.push(ci(s, &[s.len()]));
        }
        v.push(case(&format!("slice_v3_{k}"), "slice_v3", ins, vec![]));
    }
    // (input, begin, end, stride, begin/end/ellipsis/new axis/shrink masks)
    type Ss<'a> = (&'a [usize], &'a [i32], &'a [i32], &'a [i32], [i32; 5]);
    let strided: [Ss; 6] = [
        (&[4, 5, 6], &[1, 0, -5], &[3, 5, 100], &[1, 2, 2], [0; 5]),
        (
            &[4, 5, 6],
            &[0, 3, 0],
            &[0, 0, 4],
            &[1, -1, 1],
            [1, 3, 0, 0, 0],
        ),
        (
            &[4, 5, 6],
            &[2, 0, 0, 1],
            &[3, 0, 5, 0],
            &[1, 1, 1, 1],
            [2, 10, 0, 2, 1],
        ),
        (&[2, 3, 4, 5], &[0, 1], &[0, 3], &[1, 1], [0, 0, 1, 0, 0]),
        (&[4, 5, 6], &[1], &[3], &[1], [0; 5]),
        (&[4, 5, 6], &[5, 4], &[0, 1], &[-2, -1], [0, 0, 0, 0, 0]),
    ];
    for (k, (d, b, e, s, m)) in strided.into_iter().enumerate() {
        v.push(case(
            &format!("strided_slice_{k}"),
            "strided_slice",
            vec![x(d)],
            vec![
                ("begin", iv(b)),
                ("end", iv(e)),
                ("stride", iv(s)),
                ("begin_mask", i(m[0])),
                ("end_mask", i(m[1])),
                ("ellipsis_mask", i(m[2])),
                ("new_axis_mask", i(m[3])),
                ("shrink_axis_mask", i(m[4])),
            ],
        ));
    }
    let crops: [(&[i32], Option<&[i32]>); 3] = [
        (&[-1, -1, 5, 6], None),
        (&[-1, -1, 10, 7], None),
        (&[-1, -1, 5, 10], Some(&[0, 0, 1, 2])),
    ];
    for (k, (size, shift)) in crops.into_iter().enumerate() {
        let params = shift.map_or(vec![], |s| vec![("shift", iv(s))]);
        v.push(case(
            &format!("crop_nd_{k}"),
            "crop_nd",
            vec![x(&[1, 3, 8, 9]), ci(size, &[4])],
            params,
        ));
    }
    let crop_to: [(&[usize], i32, &[i32]); 2] =
        [(&[1, 3, 5, 6], 2, &[1, 2]), (&[1, 2, 6, 9], 1, &[1, 2, 0])];
    for (k, (y, axis, off)) in crop_to.into_iter().enumerate() {
        v.push(case(
            &format!("crop_to_{k}"),
            "crop_to",
            vec![x(&[1, 3, 8, 9]), x(y)],
            vec![("axis", i(axis)), ("offset", iv(off))],
        ));
    }
    // (type, input, output height and width)
    let resizes: [(i32, &[usize], [i32; 2]); 12] = [
        (0, &[1, 2, 5, 7], [8, 4]),
        (0, &[2, 3, 4, 6], [3, 10]),
        (0, &[1, 1, 6, 9], [9, 4]),
        (3, &[1, 2, 6, 7], [4, 3]),
        (3, &[1, 2, 3, 7], [7, 3]),
        (3, &[2, 2, 9, 10], [6, 15]),
        (3, &[2, 3, 4, 4], [6, 6]),
        // nearest: 4 -> 6 and 6 -> 9 have exactly halfway positions
        (2, &[1, 2, 4, 5], [6, 3]),
        (2, &[2, 3, 4, 4], [6, 6]),
        (2, &[1, 2, 2, 7], [3, 3]),
        (2, &[1, 1, 6, 9], [9, 4]),
        (2, &[1, 2, 10, 12], [25, 18]),
    ];
    for (k, (ty, d, hw)) in resizes.into_iter().enumerate() {
        v.push(case(
            &format!("resize2d_{k}"),
            "_resize2d",
            vec![x(d), ci(&[-1, -1, hw[0], hw[1]], &[4])],
            vec![("type", i(ty))],
        ));
    }
    let nn: [(&[usize], i32, [i32; 2]); 2] =
        [(&[1, 2, 4, 6], 2, [6, 9]), (&[2, 4, 6, 3], 1, [3, 4])];
    for (k, (d, dim, hw)) in nn.into_iter().enumerate() {
        v.push(case(
            &format!("resize_nearest_neighbor_{k}"),
            "resize_nearest_neighbor",
            vec![x(d), ci(&hw, &[2])],
            vec![("dim", i(dim))],
        ));
    }
    v.push(case(
        "fused_batch_norm_0",
        "fused_batch_norm",
        vec![x(&[2, 3, 4, 5]), cf(&[3]), cp(&[3]), cf(&[3]), cf(&[3])],
        vec![("dim", i(1)), ("epsilon", P::F(1e-3))],
    ));
    v.push(case(
        "fused_batch_norm_1",
        "fused_batch_norm",
        vec![x(&[4, 6]), cf(&[6]), cp(&[6]), cf(&[6]), cf(&[6])],
        vec![("dim", i(1))],
    ));
    for op in ["prewhiten", "norm_image"] {
        v.push(case(&format!("{op}_0"), op, vec![x(&[2, 3, 4, 5])], vec![]));
        v.push(case(&format!("{op}_1"), op, vec![x(&[3, 7])], vec![]));
    }
    v.push(case(
        "norm_image_2",
        "norm_image",
        vec![x(&[2, 6])],
        vec![("epsilon", P::F(0.1))],
    ));
    for (k, d) in [vec![1, 4, 5, 1], vec![2, 3, 3]].iter().enumerate() {
        v.push(case(
            &format!("force_color_{k}"),
            "force_color",
            vec![x(d)],
            vec![],
        ));
    }
    for (k, d) in [vec![1, 4, 5, 3], vec![2, 3, 1]].iter().enumerate() {
        v.push(case(
            &format!("force_gray_{k}"),
            "force_gray",
            vec![xp(d)],
            vec![],
        ));
    }
    let crops: [(&[usize], [i32; 2]); 2] = [(&[1, 8, 9, 3], [6, 5]), (&[2, 5, 6, 2], [8, 7])];
    for (k, (d, wh)) in crops.into_iter().enumerate() {
        v.push(case(
            &format!("nhwc_center_crop2d_{k}"),
            "_nhwc_center_crop2d",
            vec![x(d)],
            vec![("size", iv(&wh))],
        ));
    }
    let scales: [(&[usize], &[i32], i32); 3] = [
        (&[1, 6, 8, 2], &[5, 4], 0),
        (&[1, 6, 8, 2], &[4], 2),
        (&[1, 9, 5, 3], &[3], 3),
    ];
    for (k, (d, size, ty)) in scales.into_iter().enumerate() {
        v.push(case(
            &format!("nhwc_scale_resize2d_{k}"),
            "_nhwc_scale_resize2d",
            vec![x(d)],
            vec![("size", iv(size)), ("type", i(ty))],
        ));
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
            In::V(vals, d) => {
                let n = format!("x{k}");
                feeds.push((n.clone(), Tensor::from_values(d.as_slice(), vals)?));
                let s: Vec<i32> = d.iter().map(|&v| v as i32).collect();
                b.input_with(&n, DType::F32, &s)?
            }
            In::Ci(vals, d) => {
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
            P::S(s) => Packed::string(s),
        };
        params.push((key, v));
    }
    let y = b.op_with(c.op, "y", &ids, params)?;
    b.output(y)?;
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
