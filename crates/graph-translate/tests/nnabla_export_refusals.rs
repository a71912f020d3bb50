//! NNabla → ONNX refusals of attribute values the pooling, convolution, warp, spectral,
//! deformable and detection lowerings cannot express: each names the
//! function and the value and says why, and none panics (also with
//! hostile sizes).

mod common;

use std::collections::BTreeMap;

use graph_translate::export::{ExportOptions, nnabla};
use tensor_core::Tensor;

/// A `.nntxt` network of one function `func` (its `type`, inputs and
/// parameter block) over data variables `ins` (name, dims) and output `y`
/// of `out` dims.
fn nntxt(ins: &[(&str, &[i64])], out: &[(&str, &[i64])], func: &str) -> String {
    let var = |n: &str, d: &[i64]| {
        let dims: String = d.iter().map(|v| format!(" dim: {v}")).collect();
        format!("  variable {{ name: \"{n}\" type: \"Buffer\" shape {{{dims} }} }}\n")
    };
    let mut s = String::from("network {\n  name: \"n\"\n  batch_size: 1\n");
    for (n, d) in ins.iter().chain(out) {
        s.push_str(&var(n, d));
    }
    s.push_str(&format!("  function {{ name: \"f\" {func} }}\n}}\n"));
    s.push_str("executor {\n  name: \"e\"\n  network_name: \"n\"\n");
    for (n, _) in ins {
        s.push_str(&format!(
            "  data_variable {{ variable_name: \"{n}\" data_name: \"{n}\" }}\n"
        ));
    }
    for (n, _) in out {
        s.push_str(&format!(
            "  output_variable {{ variable_name: \"{n}\" data_name: \"{n}\" }}\n"
        ));
    }
    s.push_str("}\n");
    s
}

/// Exports the network `text` (`.nntxt`, no parameters) and returns the
/// export's full error message; panics when the export succeeds.
fn refusal(text: &str) -> String {
    let model = nnabla_proto::text::parse(text).unwrap();
    let weights: BTreeMap<String, Tensor<'static>> = BTreeMap::new();
    match nnabla::export(&model, &weights, &ExportOptions::new()) {
        Ok(_) => panic!("exported:\n{text}"),
        Err(e) => common::full_message(&e),
    }
}

fn assert_says(msg: &str, words: &[&str]) {
    for w in words {
        assert!(msg.contains(w), "{w:?} not in {msg:?}");
    }
}

#[test]
fn warp_by_grid_channel_last_is_refused() {
    let m = refusal(&nntxt(
        &[("x", &[1, 4, 4, 2]), ("g", &[1, 3, 3, 2])],
        &[("y", &[1, 3, 3, 2])],
        "type: \"WarpByGrid\" input: \"x\" input: \"g\" output: \"y\" \
         warp_by_grid_param { mode: \"linear\" padding_mode: \"zero\" channel_last: true }",
    ));
    assert_says(&m, &["WarpByGrid", "channel_last"]);
}

#[test]
fn warp_by_grid_unknown_mode_is_refused() {
    let m = refusal(&nntxt(
        &[("x", &[1, 2, 4, 4]), ("g", &[1, 3, 3, 2])],
        &[("y", &[1, 2, 3, 3])],
        "type: \"WarpByGrid\" input: \"x\" input: \"g\" output: \"y\" \
         warp_by_grid_param { mode: \"cubic\" padding_mode: \"zero\" }",
    ));
    assert_says(&m, &["WarpByGrid", "\"cubic\""]);
}

#[test]
fn stft_as_istft_backward_is_refused() {
    let m = refusal(&nntxt(
        &[("x", &[1, 32])],
        &[("y", &[1, 5, 9]), ("z", &[1, 5, 9])],
        "type: \"STFT\" input: \"x\" output: \"y\" output: \"z\" stft_param { window_size: 8 \
         stride: 4 fft_size: 8 window_type: \"hanning\" center: true pad_mode: \"constant\" \
         as_istft_backward: true }",
    ));
    assert_says(&m, &["STFT", "as_istft_backward"]);
}

#[test]
fn stft_huge_fft_is_refused() {
    let m = refusal(&nntxt(
        &[("x", &[1, 32])],
        &[("y", &[1, 5, 9]), ("z", &[1, 5, 9])],
        "type: \"STFT\" input: \"x\" output: \"y\" output: \"z\" stft_param { window_size: 8 \
         stride: 4 fft_size: 2000000000 window_type: \"hanning\" center: true pad_mode: \"reflect\" }",
    ));
    assert_says(&m, &["STFT", "fft_size 2000000000"]);
}

#[test]
fn fft_of_four_signal_axes_is_refused() {
    let m = refusal(&nntxt(
        &[("x", &[2, 2, 2, 2, 2, 2])],
        &[("y", &[2, 2, 2, 2, 2, 2])],
        "type: \"FFT\" input: \"x\" output: \"y\" fft_param { signal_ndim: 4 }",
    ));
    assert_says(&m, &["FFT", "signal_ndim 4"]);
}

#[test]
fn deformable_convolution_reading_past_its_offsets_is_refused() {
    // pad 2 with a 3x3 kernel: a 6x6 output of a 4x4 input, whose offsets
    // nnabla reads at rows 4 and 5 of a 4-row map
    let m = refusal(&nntxt(
        &[
            ("x", &[1, 1, 4, 4]),
            ("w", &[1, 1, 3, 3]),
            ("o", &[1, 18, 4, 4]),
        ],
        &[("y", &[1, 1, 6, 6])],
        "type: \"DeformableConvolution\" input: \"x\" input: \"w\" input: \"o\" output: \"y\" \
         deformable_convolution_param { base_axis: 1 pad { dim: 2 dim: 2 } stride { dim: 1 dim: 1 } \
         dilation { dim: 1 dim: 1 } group: 1 deformable_group: 1 }",
    ));
    assert_says(
        &m,
        &["DeformableConvolution", "padding [2, 2]", "offset map"],
    );
}

#[test]
fn nms_per_class_without_threshold_is_refused() {
    let m = refusal(&nntxt(
        &[("x", &[1, 4, 7])],
        &[("y", &[1, 4, 7])],
        "type: \"NmsDetection2d\" input: \"x\" output: \"y\" \
         nms_detection2d_param { thresh: 0 nms: 0.5 nms_per_class: true }",
    ));
    assert_says(&m, &["NmsDetection2d", "thresh 0"]);
}

#[test]
fn patch_correlation_of_huge_images_is_refused() {
    let m = refusal(&nntxt(
        &[
            ("a", &[1, 9_000_000_000_000_000_000, 4, 1]),
            ("b", &[1, 9_000_000_000_000_000_000, 4, 1]),
        ],
        &[("y", &[1, 1, 1, 1, 1])],
        "type: \"PatchCorrelation\" input: \"a\" input: \"b\" output: \"y\" \
         patch_correlation_param { patch { dim: 1 dim: 1 } shift { dim: 0 dim: 0 } \
         patch_step { dim: 1 dim: 1 } shift_step { dim: 1 dim: 1 } padding { dim: 0 dim: 0 dim: 0 dim: 0 } }",
    ));
    assert_says(&m, &["PatchCorrelation", "known size"]);
}

/// (The function is named `f`: messages holding that letter are not
/// prefixed with the function's type.) An `LSTM` of `layers` layers over x (5, 2, 3) with `weight_l0` and
/// (for `weight` dims not empty) `weight` of the given dims.
fn lstm(layers: i64, w0: &[i64], w: &[i64]) -> String {
    let hs: &[i64] = &[layers.clamp(1, 4), 1, 2, 4];
    let mut ins: Vec<(&str, &[i64])> = vec![("x", &[5, 2, 3]), ("h", hs), ("c", hs), ("w0", w0)];
    let mut inputs = String::from("input: \"x\" input: \"h\" input: \"c\" input: \"w0\"");
    if !w.is_empty() {
        ins.push(("w", w));
        inputs.push_str(" input: \"w\"");
    }
    nntxt(
        &ins,
        &[("y", &[5, 2, 4])],
        &format!(
            "type: \"LSTM\" {inputs} output: \"y\" \
             lstm_param {{ num_layers: {layers} bidirectional: false training: false }}"
        ),
    )
}

#[test]
fn lstm_upper_weight_of_another_layout_is_refused() {
    // the upper layers read D*H + H = 8 values, not I + H = 7
    let m = refusal(&lstm(2, &[1, 4, 4, 7], &[1, 1, 4, 4, 7]));
    assert_says(&m, &["weight", "[1, 1, 4, 4, 7]", "[1, 1, 4, 4, 8]"]);
    // one set of upper weights for three layers
    let m = refusal(&lstm(3, &[1, 4, 4, 7], &[1, 1, 4, 4, 8]));
    assert_says(&m, &["[2, 1, 4, 4, 8]"]);
}

#[test]
fn lstm_weights_of_three_gates_are_refused() {
    let m = refusal(&lstm(1, &[1, 3, 4, 7], &[]));
    assert_says(&m, &["LSTM", "weight_l0", "[1, 3, 4, 7]"]);
}

#[test]
fn recurrent_hostile_sizes_are_refused() {
    let m = refusal(&lstm(1 << 40, &[1, 4, 4, 7], &[1, 1, 4, 4, 8]));
    assert_says(&m, &["LSTM", "num_layers 1099511627776"]);
    let big = 1i64 << 31;
    let m = refusal(&lstm(1, &[1, 4, big, big + 3], &[]));
    assert_says(&m, &["hidden size 2147483648", "more than"]);
    let m = refusal(&lstm(1, &[1, 4, i64::MAX / 2, i64::MAX - 1], &[]));
    assert_says(&m, &["more than"]);
}

#[test]
fn pooling_with_a_short_stride_is_refused_not_a_panic() {
    let pool = |param: &str| {
        let f = format!(
            "type: \"MaxPooling\" input: \"x\" output: \"y\" \
             max_pooling_param {{ kernel {{ dim: 2 dim: 2 }} {param} }}"
        );
        refusal(&nntxt(&[("x", &[1, 1, 4, 4])], &[("y", &[1, 1, 2, 2])], &f))
    };
    let m = pool("stride { dim: 2 } ignore_border: false");
    assert_says(&m, &["MaxPooling", "stride has 1 value for a 2-D kernel"]);
    let m = pool("stride { dim: 2 dim: 0 } ignore_border: true");
    assert_says(&m, &["stride [2, 0]", "strides must be positive"]);
    let m = pool("pad { dim: 0 dim: -9223372036854775808 } ignore_border: false");
    assert_says(&m, &["pads not negative"]);
    let m = pool("pad { dim: 0 dim: 9223372036854775807 } ignore_border: false");
    assert_says(&m, &["do not fit in 64 bits"]);
}

#[test]
fn convolution_with_a_short_pad_is_refused() {
    let f = "type: \"Convolution\" input: \"x\" input: \"w\" output: \"y\" \
             convolution_param { base_axis: 1 pad { dim: 1 } group: 1 }";
    let m = refusal(&nntxt(
        &[("x", &[1, 1, 4, 4]), ("w", &[1, 1, 3, 3])],
        &[("y", &[1, 1, 4, 4])],
        f,
    ));
    assert_says(&m, &["Convolution", "pad has 1 value for a 2-D kernel"]);
}
