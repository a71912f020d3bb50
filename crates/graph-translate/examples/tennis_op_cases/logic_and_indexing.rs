//! Cases of the operators the exporter lowers in `tennis/logic.rs`,
//! `indexing.rs`, `packed.rs`, `conv.rs`, `space.rs` and `detect.rs`:
//! comparison, selection, broadcasting, indexing, shape-building,
//! packed-output, detection and convolution-variant operators.

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
