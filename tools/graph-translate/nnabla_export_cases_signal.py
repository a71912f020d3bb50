"""The single-function NNabla networks of the warp, correlation, spectral,
special-convolution and detection functions (WarpByGrid, WarpByFlow,
PatchCorrelation, STFT, ISTFT, DeformableConvolution,
AdaptiveSeparableConvolution, FFT, IFFT, NmsDetection2d), appended to
nnabla_export_cases.py's list, which imports this file (copy both into the
nnabla chroot)."""

import numpy as np


def signal_cases(add):
    """Adds the cases through nnabla_export_cases.py's `add(name, fn,
    inputs, params=(), **kwargs)`."""
    wimg = ((2, 3, 5, 6), -1.0, 1.0)
    wgrid = ((2, 4, 7, 2), -1.3, 1.3)
    add("warp_by_grid", "warp_by_grid", [wimg, wgrid])
    add("warp_by_grid_ac", "warp_by_grid", [wimg, wgrid], align_corners=True)
    add("warp_by_grid_repeat", "warp_by_grid", [wimg, wgrid], padding_mode="repeat")
    add("warp_by_grid_reflect", "warp_by_grid", [wimg, wgrid], padding_mode="reflect")
    add(
        "warp_by_grid_reflect_ac",
        "warp_by_grid",
        [wimg, ((2, 4, 7, 2), -3.5, 3.5)],
        padding_mode="reflect",
        align_corners=True,
    )
    add("warp_by_grid_nearest", "warp_by_grid", [wimg, wgrid], mode="nearest")
    add(
        "warp_by_grid_nearest_repeat_ac",
        "warp_by_grid",
        [wimg, wgrid],
        mode="nearest",
        padding_mode="repeat",
        align_corners=True,
    )
    add(
        "warp_by_grid_3d",
        "warp_by_grid",
        [((1, 2, 3, 4, 5), -1.0, 1.0), ((1, 2, 3, 4, 3), -1.2, 1.2)],
    )
    add(
        "warp_by_grid_3d_reflect_ac",
        "warp_by_grid",
        [((1, 2, 3, 4, 5), -1.0, 1.0), ((1, 2, 3, 4, 3), -1.5, 1.5)],
        padding_mode="reflect",
        align_corners=True,
    )
    add("warp_by_flow", "warp_by_flow", [wimg, ((2, 2, 5, 6), -3.0, 3.0)])
    add(
        "warp_by_flow_small", "warp_by_flow", [((1, 2, 4, 3), -1.0, 1.0), ((1, 2, 4, 3), -0.8, 0.8)]
    )
    pc = [((2, 6, 7, 3), -1.0, 1.0), ((2, 6, 7, 3), -1.0, 1.0)]
    add("patch_correlation", "base.patch_correlation", pc, shift=(2, 1))
    add(
        "patch_correlation_steps",
        "base.patch_correlation",
        pc,
        patch=(2, 3),
        shift=(1, 2),
        patch_step=(2, 1),
        shift_step=(1, 2),
        padding=(1, 0, 2, 1),
    )
    add(
        "patch_correlation_pad",
        "base.patch_correlation",
        [((1, 5, 4, 2), -1.0, 1.0), ((1, 5, 4, 2), -1.0, 1.0)],
        patch=(3, 3),
        padding=(1, 1, 1, 1),
    )
    sig = [((2, 40), -1.0, 1.0)]
    add("stft", "base.stft", sig, window_size=16, stride=4, fft_size=16)
    add(
        "stft_hamming_const",
        "base.stft",
        sig,
        window_size=10,
        stride=3,
        fft_size=16,
        window_type="hamming",
        pad_mode="constant",
    )
    add(
        "stft_rect_nocenter",
        "base.stft",
        [((3, 30), -1.0, 1.0)],
        window_size=6,
        stride=5,
        fft_size=8,
        window_type="rectangular",
        center=False,
    )
    spec = [((2, 9, 11), -1.0, 1.0), ((2, 9, 11), -1.0, 1.0)]
    add("istft", "base.istft", spec, window_size=16, stride=4, fft_size=16, pad_mode="constant")
    add(
        "istft_hamming_nocenter",
        "base.istft",
        spec,
        window_size=16,
        stride=4,
        fft_size=16,
        window_type="hamming",
        center=False,
        pad_mode="constant",
    )
    add(
        "istft_rect",
        "base.istft",
        [((1, 5, 6), -1.0, 1.0), ((1, 5, 6), -1.0, 1.0)],
        window_size=8,
        stride=8,
        fft_size=8,
        window_type="rectangular",
        pad_mode="constant",
    )
    # deformable_convolution: inputs x, offset[, mask]; parameters W[, b]
    add(
        "deform_conv",
        "deformable_convolution",
        [((2, 4, 6, 6), -1.0, 1.0), ((2, 18, 6, 6), -2.0, 2.0)],
        [("W", (3, 4, 3, 3)), ("b", (3,))],
        pad=(1, 1),
    )
    add(
        "deform_conv_mask_groups",
        "deformable_convolution",
        [((1, 4, 7, 7), -1.0, 1.0), ((1, 36, 7, 7), -1.5, 1.5), ((1, 18, 7, 7), 0.0, 1.0)],
        [("W", (4, 2, 3, 3)), ("b", (4,))],
        pad=(1, 1),
        stride=(2, 2),
        group=2,
        deformable_group=2,
    )
    add(
        "deform_conv_dil_mask",
        "deformable_convolution",
        [((1, 2, 6, 7), -1.0, 1.0), ((1, 12, 6, 7), -1.5, 1.5), ((1, 6, 6, 7), 0.0, 1.0)],
        [("W", (2, 2, 2, 3))],
        dilation=(2, 1),
        stride=(1, 2),
    )
    add(
        "adaptive_sep_conv",
        "adaptive_separable_convolution",
        [((2, 3, 6, 7), -1.0, 1.0), ((2, 3, 4, 6), -1.0, 1.0), ((2, 2, 4, 6), -1.0, 1.0)],
    )
    add(
        "adaptive_sep_conv_wide",
        "adaptive_separable_convolution",
        [((1, 2, 7, 6), -1.0, 1.0), ((1, 2, 7, 6), -1.0, 1.0), ((1, 4, 6, 6), -1.0, 1.0)],
    )
    # fft/ifft: nnabla 1.39 computes them only on CUDA, so their outputs
    # follow nnabla's documented formula (`formula_reference`)
    add("fft_1d", "fft", [((2, 8, 2), -1.0, 1.0)], signal_ndim=1)
    add("fft_2d_norm", "fft", [((2, 4, 6, 2), -1.0, 1.0)], signal_ndim=2, normalized=True)
    add("fft_3d_nobatch", "fft", [((3, 4, 5, 2), -1.0, 1.0)], signal_ndim=3)
    add("ifft_1d", "ifft", [((3, 8, 2), -1.0, 1.0)], signal_ndim=1)
    add("ifft_2d_norm", "ifft", [((2, 4, 6, 2), -1.0, 1.0)], signal_ndim=2, normalized=True)
    add("ifft_1d_nobatch_norm", "ifft", [((6, 2), -1.0, 1.0)], signal_ndim=1, normalized=True)
    add("nms_detection2d", "nms_detection2d", [("detections", (2, 16, 8), 3.0)])
    add(
        "nms_detection2d_obj",
        "nms_detection2d",
        [("detections", (2, 12, 8))],
        thresh=0.3,
        nms=0.3,
        nms_per_class=False,
    )
    add(
        "nms_detection2d_loose",
        "nms_detection2d",
        [("detections", (1, 20, 7), 1.5)],
        thresh=0.2,
        nms=0.6,
    )
    add(
        "nms_detection2d_obj_loose",
        "nms_detection2d",
        [("detections", (1, 20, 6))],
        thresh=0.1,
        nms=0.5,
        nms_per_class=False,
    )
    # sampling points halfway between pixels: nnabla rounds them away from
    # zero
    ties = [((2, 3, 4, 4), -1.0, 1.0), ("quadrants", (2, 5, 6, 2))]
    add("warp_by_grid_nearest_ties", "warp_by_grid", ties, mode="nearest")
    add(
        "warp_by_grid_nearest_ties_reflect",
        "warp_by_grid",
        ties,
        mode="nearest",
        padding_mode="reflect",
    )
    add(
        "warp_by_grid_nearest_ties_repeat_ac",
        "warp_by_grid",
        [((1, 2, 5, 6), -1.0, 1.0), ("quadrants", (1, 3, 4, 2))],
        mode="nearest",
        padding_mode="repeat",
        align_corners=True,
    )
    add(
        "warp_by_grid_3d_nearest_ties_reflect_ac",
        "warp_by_grid",
        [((1, 2, 3, 4, 5), -1.0, 1.0), ("quadrants", (1, 2, 3, 4, 3))],
        mode="nearest",
        padding_mode="reflect",
        align_corners=True,
    )


def formula_reference(fn, x, kw):
    """The output of `fft`/`ifft` as nnabla documents it (its CPU runtime
    has no FFT; the CUDA one scales as written here): complex values as a
    last axis of 2, the transform over the `signal_ndim` axes before it;
    `ifft` divides by the signal size, `normalized` by its square root
    for both."""
    nd = kw["signal_ndim"]
    z = x[..., 0].astype(np.float64) + 1j * x[..., 1].astype(np.float64)
    axes = tuple(range(-nd, 0))
    size = float(np.prod(z.shape[-nd:]))
    if fn == "fft":
        y = np.fft.fftn(z, axes=axes)
        if kw.get("normalized"):
            y = y / np.sqrt(size)
    else:
        y = np.fft.ifftn(z, axes=axes)
        if kw.get("normalized"):
            y = y * np.sqrt(size)
    return np.stack([y.real, y.imag], axis=-1).astype(np.float32)
