//! Short-time Fourier transforms: `STFT` and `ISTFT`, lowered as nnabla
//! computes them (a convolution, resp. transposed convolution, with the
//! windowed DFT coefficients as constant weights).

use onnx_format::builder::attr;
use tensor_core::graph::{Attribute, Node};

use super::{Call, Exporter, a_bool, a_int};
use crate::export::{Error, Result};

/// The largest weight or envelope the lowering writes (values).
const MAX_VALUES: usize = 1 << 24;

/// The frame parameters of an `STFT`/`ISTFT`.
struct Frames {
    window: usize,
    stride: i64,
    fft: usize,
    kind: String,
    center: bool,
}

impl Frames {
    fn read(n: &Node, backward_attr: &str) -> Result<Frames> {
        let refuse = |what: String| {
            Err(Error::Unsupported(format!(
                "{} function {:?}: {what}",
                n.op, n.name
            )))
        };
        if a_bool(n, backward_attr) {
            return refuse(format!(
                "{backward_attr} (the function as the gradient of its inverse, used only by \
                 nnabla's nn.grad) is not exported"
            ));
        }
        let (w, s, f) = (
            a_int(n, "window_size", 0),
            a_int(n, "stride", 0),
            a_int(n, "fft_size", 0),
        );
        if w < 1 || s < 1 || f < w || f > 1 << 16 {
            return refuse(format!(
                "window_size {w}, stride {s}, fft_size {f} (nnabla needs 1 <= window_size <= \
                 fft_size; at most 65536 is exported)"
            ));
        }
        let kind = n
            .attribute("window_type")
            .and_then(Attribute::as_str)
            .unwrap_or("hanning")
            .to_string();
        if !matches!(kind.as_str(), "hanning" | "hamming" | "rectangular") {
            return refuse(format!("window_type {kind:?}"));
        }
        Ok(Frames {
            window: w as usize,
            stride: s,
            fft: f as usize,
            kind,
            center: a_bool(n, "center"),
        })
    }

    /// The window as nnabla builds it: `fft` values, the window centred.
    fn window(&self) -> Vec<f32> {
        let mut v = vec![0f32; self.fft];
        let left = (self.fft - self.window) / 2;
        let pi = std::f64::consts::PI;
        for i in 0..self.window {
            let c = (2.0 * pi * i as f64 / self.window as f64).cos();
            v[left + i] = match self.kind.as_str() {
                "hanning" => (0.5 - 0.5 * c) as f32,
                "hamming" => (0.54 - 0.46 * c) as f32,
                _ => 1.0,
            };
        }
        v
    }

    /// The windowed (inverse) DFT coefficients `(fft/2 + 1, 1, fft)`:
    /// cosine and minus sine, scaled by `alpha(k)`.
    fn weights(&self, alpha: impl Fn(usize) -> f64) -> Result<(Vec<f32>, Vec<f32>, [i64; 3])> {
        let bins = self.fft / 2 + 1;
        if bins.saturating_mul(self.fft) > MAX_VALUES {
            return Err(Error::Unsupported(format!(
                "fft_size {} gives too large DFT weights",
                self.fft
            )));
        }
        let win = self.window();
        let pi = std::f64::consts::PI;
        let mut re = Vec::with_capacity(bins * self.fft);
        let mut im = Vec::with_capacity(bins * self.fft);
        for k in 0..bins {
            let a = alpha(k);
            for (t, &wt) in win.iter().enumerate() {
                let ang = 2.0 * pi * (k * t) as f64 / self.fft as f64;
                re.push((a * ang.cos()) as f32 * wt);
                im.push((a * -ang.sin()) as f32 * wt);
            }
        }
        Ok((re, im, [bins as i64, 1, self.fft as i64]))
    }
}

impl Exporter<'_> {
    /// Lowers `STFT(window_size, stride, fft_size, window_type, center,
    /// pad_mode)` of `x` `(B, L)`: with `center` the signal padded by
    /// `fft_size / 2` each side (`reflect` or `constant`), then as a
    /// channel `(B, 1, L')` convolved with stride `stride` by the windowed
    /// DFT coefficients: `y_r`, `y_i` `(B, fft_size / 2 + 1, frames)`.
    pub(crate) fn stft(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let f = Frames::read(n, "as_istft_backward")?;
        let y_i = n.outputs.get(1).ok_or_else(|| {
            Error::Invalid(format!("STFT function {:?} needs two outputs", n.name))
        })?;
        let d = self.dims(x).unwrap_or_default();
        if d.len() != 2 {
            return Err(Error::Unsupported(format!(
                "STFT function {:?}: the signal must be (batch, samples), not {d:?}",
                n.name
            )));
        }
        let mut sig = x.to_string();
        if f.center {
            let mode = match n.attribute("pad_mode").and_then(Attribute::as_str) {
                Some("constant") => "constant",
                Some("reflect") | None => "reflect",
                Some(m) => {
                    return Err(Error::Unsupported(format!(
                        "STFT function {:?}: pad_mode {m:?}",
                        n.name
                    )));
                }
            };
            let h = (f.fft / 2) as i64;
            let p = self.cx.ints(&[0, h, 0, h]);
            sig = self
                .cx
                .op("Pad", &[x, &p], vec![attr::string("mode", mode)]);
        }
        let s3 = self.cx.unsqueeze(&sig, &[1]);
        let (re, im, dims) = f.weights(|_| 1.0)?;
        let wr = self.cx.floats("stft_real", &re, &dims);
        let wi = self.cx.floats("stft_imag", &im, &dims);
        let st = vec![attr::ints("strides", &[f.stride])];
        self.cx
            .op_to("Conv", &n.name, &[&s3, &wr], c.out, st.clone());
        self.cx.op_to("Conv", "", &[&s3, &wi], y_i, st);
        Ok(())
    }

    /// Lowers `ISTFT(window_size, stride, fft_size, window_type, center)`
    /// of `y_r`, `y_i` `(B, fft_size / 2 + 1, frames)`: each transposed-
    /// convolved with stride `stride` by the windowed inverse DFT
    /// coefficients, summed (the overlap-add), divided by the overlapped
    /// squared window as nnabla divides (where it is zero nnabla's
    /// division gives NaN or infinity, and so does the export); with
    /// `center` the `fft_size / 2` samples each side cut off.
    pub(crate) fn istft(&mut self, n: &Node, c: &Call) -> Result<()> {
        let (yr, yi) = (c.input(0)?, c.input(1)?);
        let f = Frames::read(n, "as_stft_backward")?;
        let d = self.dims(yr).unwrap_or_default();
        let frames = match d.as_slice() {
            [_, b, t] if *b == (f.fft / 2 + 1) as i64 && *t >= 1 => *t,
            _ => {
                return Err(Error::Unsupported(format!(
                    "ISTFT function {:?}: the spectrum must be (batch, fft_size / 2 + 1, \
                     frames) of known size, not {d:?}",
                    n.name
                )));
            }
        };
        let size = (frames - 1)
            .checked_mul(f.stride)
            .and_then(|v| v.checked_add(f.fft as i64))
            .and_then(|v| usize::try_from(v).ok())
            .filter(|&v| v <= MAX_VALUES)
            .ok_or_else(|| {
                Error::Unsupported(format!(
                    "ISTFT function {:?}: {frames} frames make too long a signal",
                    n.name
                ))
            })?;
        let half = f.fft / 2;
        let (cos, sin, dims) =
            f.weights(|k| (if k == 0 || k == half { 1.0 } else { 2.0 }) / f.fft as f64)?;
        let wc = self.cx.floats("istft_cos", &cos, &dims);
        let ws = self.cx.floats("istft_sin", &sin, &dims);
        let st = vec![attr::ints("strides", &[f.stride])];
        let a = self.cx.op("ConvTranspose", &[yr, &wc], st.clone());
        let b = self.cx.op("ConvTranspose", &[yi, &ws], st);
        let sum = self.cx.op("Add", &[&a, &b], vec![]);
        let ax1 = self.cx.ints(&[1]);
        let flat = self.cx.op("Squeeze", &[&sum, &ax1], vec![]);
        // the overlapped squared window, summed in f32 as nnabla sums it
        let win = f.window();
        let mut env = vec![0f32; size];
        let mut i = 0;
        while i + f.fft <= size {
            for (j, w) in win.iter().enumerate() {
                env[i + j] += w * w;
            }
            i += f.stride as usize;
        }
        let (lo, hi) = if f.center {
            (half, size.saturating_sub(half))
        } else {
            (0, size)
        };
        if lo >= hi {
            return Err(Error::Unsupported(format!(
                "ISTFT function {:?}: {frames} frames leave no signal",
                n.name
            )));
        }
        let env = self
            .cx
            .floats("istft_envelope", &env[lo..hi], &[(hi - lo) as i64]);
        let body = if f.center {
            let s = self.cx.ints(&[lo as i64]);
            let e = self.cx.ints(&[hi as i64]);
            let ax = self.cx.ints(&[1]);
            self.cx.op("Slice", &[&flat, &s, &e, &ax], vec![])
        } else {
            flat
        };
        self.cx.op_to("Div", &n.name, &[&body, &env], c.out, vec![]);
        Ok(())
    }
}

/// The direction of [`Exporter::dft`].
#[derive(Clone, Copy)]
enum Dft {
    /// `FFT`.
    Forward,
    /// `IFFT`.
    Inverse,
}

impl Exporter<'_> {
    /// Lowers `FFT` ([`Exporter::dft`]).
    pub(crate) fn fft(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.dft(n, c, Dft::Forward)
    }

    /// Lowers `IFFT` ([`Exporter::dft`]).
    pub(crate) fn ifft(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.dft(n, c, Dft::Inverse)
    }

    /// Lowers `FFT(signal_ndim, normalized)` and `IFFT` (complex values
    /// as a last axis of 2, real then imaginary, as ONNX `DFT` takes
    /// them): one `DFT` per signal axis (the `signal_ndim` axes before the
    /// last), a batch axis added when the input has none. nnabla's `IFFT`
    /// divides by the signal size as `DFT`'s inverse does; `normalized`
    /// scales both by `1 / sqrt(size)` instead (`FFT` multiplied by it,
    /// `IFFT` by `sqrt(size)`). Opset 17 takes the axis as an attribute,
    /// 20 as an input.
    fn dft(&mut self, n: &Node, c: &Call, direction: Dft) -> Result<()> {
        let x = c.input(0)?;
        let inverse = match direction {
            Dft::Forward => false,
            Dft::Inverse => true,
        };
        let refuse = |what: String| {
            Err(Error::Unsupported(format!(
                "{} function {:?}: {what}",
                n.op, n.name
            )))
        };
        let nd = a_int(n, "signal_ndim", 0);
        let d = self.dims(x).unwrap_or_default();
        let r = d.len() as i64;
        if !(1..=3).contains(&nd) {
            return refuse(format!("signal_ndim {nd} (nnabla takes 1, 2 or 3)"));
        }
        if r < nd + 1 || d.last() != Some(&2) {
            return refuse(format!(
                "input {d:?}: nnabla needs at least signal_ndim + 1 = {} axes, the last \
                 of 2 (real, imaginary)",
                nd + 1
            ));
        }
        let first = r - 1 - nd;
        let signal = d[first as usize..(r - 1) as usize]
            .iter()
            .try_fold(1i64, |a, &v| if v < 1 { None } else { a.checked_mul(v) })
            .unwrap_or(0);
        if signal < 1 {
            return refuse(format!(
                "input {d:?}: the signal size is unknown or too large"
            ));
        }
        let batched = first >= 1;
        let shift = i64::from(!batched);
        let mut cur = if batched {
            x.to_string()
        } else {
            self.cx.unsqueeze(x, &[0])
        };
        for a in first..r - 1 {
            let axis = a + shift;
            let mut at = vec![attr::int("inverse", i64::from(inverse))];
            cur = if self.cx.opset >= 20 {
                let ax = self.cx.ints(&[axis]);
                let ax = self.cx.squeeze0(&ax);
                self.cx.op("DFT", &[&cur, "", &ax], at)
            } else {
                at.push(attr::int("axis", axis));
                self.cx.op("DFT", &[&cur], at)
            };
        }
        if !batched {
            cur = self.cx.squeeze0(&cur);
        }
        let scale = match (a_bool(n, "normalized"), inverse) {
            (false, _) => 1.0,
            (true, false) => 1.0 / (signal as f64).sqrt(),
            (true, true) => (signal as f64).sqrt(),
        };
        if scale == 1.0 {
            self.cx.op_to("Identity", &n.name, &[&cur], c.out, vec![]);
        } else {
            let s = self.cx.scalar(scale as f32);
            self.cx.op_to("Mul", &n.name, &[&cur, &s], c.out, vec![]);
        }
        Ok(())
    }
}
