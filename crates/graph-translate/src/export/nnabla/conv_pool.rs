//! Affine, convolutions, pooling.

use onnx_format::builder::attr;
use tensor_core::Tensor;
use tensor_core::graph::Node;

use super::infer::{per_axis, pool_out, pool_stride_pad};
use super::{Call, Exporter, a_bool, a_float, a_int, a_ints};
use crate::export::{Ctx, Error, Result};

/// Which affine, by its weight ([`Exporter::affine_as`]).
#[derive(Clone, Copy)]
enum Affine {
    /// As stored (`Affine`; a weight the ONNX import transposed is
    /// restored).
    Plain,
    /// Binarized, input 3 the bias (`BinaryConnectAffine`).
    BinaryConnect,
    /// Binarized and scaled per output, input 4 the bias
    /// (`BinaryWeightAffine`).
    BinaryWeight,
}

/// A convolution ([`Exporter::convolution_as`]).
#[derive(Clone, Copy)]
enum Conv {
    /// `Conv` with the weight as stored (`Convolution`).
    Plain,
    /// `Conv` with the weight binarized, input 3 the bias
    /// (`BinaryConnectConvolution`).
    BinaryConnect,
    /// `ConvTranspose` (`Deconvolution`).
    Transposed,
}

/// A pooling ([`Exporter::pooling`]).
#[derive(Clone, Copy)]
enum Pool {
    /// `MaxPool` (`MaxPooling`).
    Max,
    /// `AveragePool` (`AveragePooling`).
    Average,
    /// `AveragePool` times the window size (`SumPooling`).
    Sum,
}

impl Exporter<'_> {
    /// The binarized copy of a weight (`sign`, zero to `quantize_zero_to`),
    /// as a new initializer; `scaled`: each output column times the mean
    /// absolute value of its weights (a binary weight network's alpha).
    fn binarized(&mut self, w: &str, zero_to: f64, scaled: bool) -> Result<String> {
        let t = self
            .weights
            .weight(w)
            .ok_or_else(|| Error::Unsupported(format!("parameter {w:?} has no data")))?;
        let v = t.to_vec::<f32>()?;
        let dims = t.dims().to_vec();
        let b: Vec<f32> = v
            .iter()
            .map(|&x| {
                if x > 0.0 {
                    1.0
                } else if x < 0.0 {
                    -1.0
                } else {
                    zero_to as f32
                }
            })
            .collect();
        let mut b = b;
        if scaled && dims.len() >= 2 {
            let cols: usize = dims[1..].iter().product();
            let rows = dims[0].max(1);
            for j in 0..cols {
                let mean = (0..rows).map(|i| v[i * cols + j].abs()).sum::<f32>() / rows as f32;
                for i in 0..rows {
                    b[i * cols + j] *= mean;
                }
            }
        }
        let bt = Tensor::from_values(dims, &b)?;
        let name = self.cx.helper_name(&format!("{w}/binarized"));
        self.cx.b.initializer(&name, &bt)?;
        Ok(name)
    }

    /// The ONNX tensor an `Affine` weight named `{name}__T` was transposed
    /// from (how the ONNX import stores a constant `Gemm` B with `transB`
    /// 1, as `[K, N]`): initializer `name` holding it back (`[N, K]`), for
    /// a `Gemm` with `transB` 1, so that a round trip gives the tensor its
    /// name and values again. `None` when `w` is not so named, is not a
    /// 2-D weight, or `name` is another value of the network.
    fn untransposed(&mut self, w: &str) -> Result<Option<String>> {
        let Some(stem) = w.strip_suffix("__T").filter(|s| !s.is_empty()) else {
            return Ok(None);
        };
        if !self.is_weight(w) || self.g.value(stem).is_some() || self.weights.info(stem).is_some() {
            return Ok(None);
        }
        // an initializer of that name is the one made for another Affine
        // reading the same weight (the network's own are its values)
        if self.cx.b.is_initializer(stem) {
            return Ok(Some(stem.to_string()));
        }
        let Some(t) = self.weights.weight(w) else {
            return Ok(None);
        };
        let (k, n) = match t.dims() {
            &[k, n] => (k, n),
            _ => return Ok(None),
        };
        let v = t.to_vec::<f32>()?;
        let mut back = vec![0f32; v.len()];
        for (idx, &x) in v.iter().enumerate() {
            let (i, j) = (idx / n.max(1), idx % n.max(1));
            if let Some(slot) = back.get_mut(j * k + i) {
                *slot = x;
            }
        }
        let back = Tensor::from_values([n, k], &back)?;
        self.cx.b.initializer(stem, &back)?;
        Ok(Some(stem.to_string()))
    }

    /// Lowers `Affine`.
    pub(crate) fn affine(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.affine_as(n, c, Affine::Plain)
    }

    /// Lowers `BinaryConnectAffine`.
    pub(crate) fn binary_connect_affine(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.affine_as(n, c, Affine::BinaryConnect)
    }

    /// Lowers `BinaryWeightAffine`.
    pub(crate) fn binary_weight_affine(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.affine_as(n, c, Affine::BinaryWeight)
    }

    /// `Flatten`, `Gemm` (and `Reshape`) with the weight `weight` says.
    fn affine_as(&mut self, n: &Node, c: &Call, weight: Affine) -> Result<()> {
        let (ins, out) = (&c.ins[..], c.out);
        let x = ins[0];
        let w_src = *ins
            .get(1)
            .ok_or_else(|| Error::Invalid("no weight".into()))?;
        // inputs: x, W (, binary W (, alpha)) (, b)
        let zero_to = a_float(n, "quantize_zero_to", 1.0);
        let (w, b) = match weight {
            Affine::BinaryConnect => (self.binarized(w_src, zero_to, false)?, ins.get(3)),
            Affine::BinaryWeight => (self.binarized(w_src, zero_to, true)?, ins.get(4)),
            Affine::Plain => (w_src.to_string(), ins.get(2)),
        };
        let b = b.copied();
        let base = a_int(n, "base_axis", 1);
        // A computed weight of unknown shape is taken as a matrix.
        let wshape: Vec<i64> = self
            .weights
            .info(w_src)
            .map(|(_, d)| d.iter().map(|&d| d as i64).collect())
            .or_else(|| self.shape(w_src).map(<[i64]>::to_vec))
            .unwrap_or_default();
        // W is (inputs, outputs...): its first dimension is the product of
        // x's dimensions from base_axis on.
        let wshape = if wshape.is_empty() {
            vec![-1, -1]
        } else {
            wshape
        };
        let in_total = wshape[0];
        let out_dims = &wshape[1..];
        let out_total: i64 = out_dims.iter().product();
        if in_total < 0 && out_dims.len() != 1 {
            return Err(Error::Unsupported(format!(
                "the shape of weight {w_src:?} is unknown"
            )));
        }
        let xf = self.cx.op("Flatten", &[x], vec![attr::int("axis", base)]);
        let restored = match weight {
            Affine::Plain if wshape.len() == 2 => self.untransposed(w_src)?,
            Affine::Plain | Affine::BinaryConnect | Affine::BinaryWeight => None,
        };
        let gemm_attrs = || {
            if restored.is_some() {
                vec![attr::int("transB", 1)]
            } else {
                vec![]
            }
        };
        let w2 = if let Some(r) = &restored {
            r.clone()
        } else if wshape.len() == 2 || out_total < 0 {
            w.clone()
        } else {
            self.cx.reshape(&w, &[in_total, out_total])
        };
        let mut gin = vec![xf.clone(), w2];
        if let Some(b) = b {
            let bshape = self.weights.info(b).map(|(_, d)| d.len()).unwrap_or(1);
            gin.push(if bshape == 1 {
                b.to_string()
            } else {
                self.cx.reshape(b, &[out_total])
            });
        }
        let refs: Vec<&str> = gin.iter().map(String::as_str).collect();
        if base == 1 && out_dims.len() == 1 {
            self.cx.op_to("Gemm", &n.name, &refs, out, gemm_attrs());
        } else {
            let y = self.cx.op("Gemm", &refs, gemm_attrs());
            let mut shape: Vec<i64> = match self.shape(x) {
                Some(s) if s.len() >= base as usize => s[..base as usize].to_vec(),
                _ => vec![-1],
            };
            if shape.iter().filter(|&&d| d < 0).count() > 1 {
                return Err(Error::Unsupported(
                    "more than one unknown leading dimension".into(),
                ));
            }
            shape.extend_from_slice(out_dims);
            let s = self.cx.ints(&shape);
            self.cx.op_to("Reshape", "", &[&y, &s], out, vec![]);
        }
        Ok(())
    }

    /// Lowers `Convolution`.
    pub(crate) fn convolution(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.convolution_as(n, c, Conv::Plain)
    }

    /// Lowers `BinaryConnectConvolution`.
    pub(crate) fn binary_connect_convolution(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.convolution_as(n, c, Conv::BinaryConnect)
    }

    /// Lowers `Deconvolution`.
    pub(crate) fn deconvolution(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.convolution_as(n, c, Conv::Transposed)
    }

    /// `Conv` or `ConvTranspose`, as `conv` says.
    fn convolution_as(&mut self, n: &Node, c: &Call, conv: Conv) -> Result<()> {
        let (ins, out) = (&c.ins[..], c.out);
        if a_bool(n, "channel_last") {
            return Err(Error::Unsupported("channel_last is not exported".into()));
        }
        let binary = match conv {
            Conv::BinaryConnect => true,
            Conv::Plain | Conv::Transposed => false,
        };
        let x = ins[0];
        let w_src = *ins
            .get(1)
            .ok_or_else(|| Error::Invalid("no weight".into()))?;
        let b = if binary { ins.get(3) } else { ins.get(2) }.copied();
        let w = if binary {
            self.binarized(w_src, a_float(n, "quantize_zero_to", 1.0), false)?
        } else {
            w_src.to_string()
        };
        let base = a_int(n, "base_axis", 1);
        if base != 1 {
            return Err(Error::Unsupported(format!(
                "base_axis {base} (only 1 is exported)"
            )));
        }
        let wrank = self
            .weights
            .info(w_src)
            .map(|(_, d)| d.len())
            .or_else(|| self.shape(w_src).map(<[i64]>::len))
            .unwrap_or(4);
        let k = wrank.saturating_sub(2);
        let pad = per_axis(n, "pad", k, |_| 0)?;
        let mut pads = pad.clone();
        pads.extend(&pad);
        let mut attrs = vec![
            attr::ints("pads", &pads),
            attr::ints("strides", &per_axis(n, "stride", k, |_| 1)?),
            attr::ints("dilations", &per_axis(n, "dilation", k, |_| 1)?),
            attr::int("group", a_int(n, "group", 1).max(1)),
        ];
        let onnx_op = match conv {
            Conv::Transposed => {
                let op = a_ints(n, "output_padding");
                if !op.is_empty() {
                    attrs.push(attr::ints("output_padding", &op));
                }
                "ConvTranspose"
            }
            Conv::Plain | Conv::BinaryConnect => "Conv",
        };
        let mut inputs = vec![x, w.as_str()];
        if let Some(b) = b {
            inputs.push(b);
        }
        self.cx.op_to(onnx_op, &n.name, &inputs, out, attrs);
        Ok(())
    }

    /// Lowers `MaxPooling` ([`Exporter::pooling`]).
    pub(crate) fn max_pooling(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.pooling(n, c, Pool::Max)
    }

    /// Lowers `AveragePooling` ([`Exporter::pooling`]).
    pub(crate) fn average_pooling(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.pooling(n, c, Pool::Average)
    }

    /// Lowers `SumPooling` ([`Exporter::pooling`]).
    pub(crate) fn sum_pooling(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.pooling(n, c, Pool::Sum)
    }

    /// nnabla's pooling: with `ignore_border` the usual floor rule; without
    /// it a window starts at every stride step before the input ends
    /// (`ceil((W + pad) / stride)` outputs), clipped to the input. Written
    /// as explicit begin/end pads with `ceil_mode` 0; windows clipped at
    /// the end are not counted by averages, as in nnabla.
    fn pooling(&mut self, n: &Node, c: &Call, pool: Pool) -> Result<()> {
        let (x, out) = (c.input(0)?, c.out);
        if a_bool(n, "channel_last") {
            return Err(Error::Unsupported("channel_last is not exported".into()));
        }
        let kernel = a_ints(n, "kernel");
        let k = kernel.len();
        let rank = self.rank(n, x)?;
        if rank != k + 2 {
            return Err(Error::Unsupported(format!(
                "a {k}-D kernel over an input of rank {rank} (only N, C, spatial... is exported)"
            )));
        }
        let (stride, pad) = pool_stride_pad(n, &kernel)?;
        if stride.iter().any(|&s| s <= 0) || pad.iter().any(|&p| p < 0) {
            return Err(Error::Invalid(format!(
                "stride {stride:?}, pad {pad:?} (strides must be positive, pads not negative)"
            )));
        }
        let ib = a_bool(n, "ignore_border");
        let xs = self.dims(x).unwrap_or_default();
        let mut end = pad.clone();
        if !ib {
            for i in 0..k {
                let w = xs.get(2 + i).copied().unwrap_or(-1);
                if w < 0 {
                    return Err(Error::Unsupported(format!(
                        "ignore_border=false pooling needs the spatial size of {x:?}, which is not known"
                    )));
                }
                let o = pool_out(w, kernel[i], stride[i], pad[i], false);
                let e = (o >= 0)
                    .then(|| (o - 1).checked_mul(stride[i])?.checked_add(kernel[i]))
                    .flatten()
                    .and_then(|v| v.checked_sub(w)?.checked_sub(pad[i]))
                    .ok_or_else(|| Error::Invalid("its sizes do not fit in 64 bits".into()))?;
                end[i] = e.max(0);
            }
        }
        let mut pads = pad.clone();
        pads.extend(&end);
        let base = |pads: &[i64]| {
            vec![
                attr::ints("kernel_shape", &kernel),
                attr::ints("strides", &stride),
                attr::ints("pads", pads),
            ]
        };
        let zero_pads = vec![0i64; 2 * k];
        // explicit zero padding of x's spatial axes: [begin..., end...]
        let zero_pad = |cx: &mut Ctx, begin: &[i64], end: &[i64]| -> String {
            let mut p = vec![0i64; 2 * rank];
            for i in 0..k {
                p[2 + i] = begin[i];
                p[rank + 2 + i] = end[i];
            }
            let p = cx.ints(&p);
            cx.op("Pad", &[x, &p], vec![])
        };
        match pool {
            Pool::Max => self.cx.op_to("MaxPool", &n.name, &[x], out, base(&pads)),
            Pool::Average if a_bool(n, "including_pad") && end != pad => {
                // the pad counts, the region past it does not
                let padded = zero_pad(&mut self.cx, &pad, &pad);
                let extra: Vec<i64> = end.iter().zip(&pad).map(|(e, p)| e - p).collect();
                let mut p2 = vec![0i64; k];
                p2.extend(&extra);
                let mut attrs = base(&p2);
                attrs.push(attr::int("count_include_pad", 0));
                self.cx
                    .op_to("AveragePool", &n.name, &[&padded], out, attrs);
            }
            Pool::Average => {
                let mut attrs = base(&pads);
                attrs.push(attr::int(
                    "count_include_pad",
                    i64::from(a_bool(n, "including_pad")),
                ));
                self.cx.op_to("AveragePool", &n.name, &[x], out, attrs);
            }
            Pool::Sum => {
                // a sum: the mean of the zero-padded window times its size
                let padded = zero_pad(&mut self.cx, &pad, &end);
                let mut attrs = base(&zero_pads);
                attrs.push(attr::int("count_include_pad", 1));
                let avg = self.cx.op("AveragePool", &[&padded], attrs);
                // in f64: a hostile kernel's product does not overflow
                let area = kernel.iter().map(|&k| k as f64).product::<f64>();
                let area = self.cx.scalar(area as f32);
                self.cx.op_to("Mul", &n.name, &[&avg, &area], out, vec![]);
            }
        }
        Ok(())
    }

    /// Lowers `GlobalAveragePooling`.
    pub(crate) fn global_average_pooling(&mut self, n: &Node, c: &Call) -> Result<()> {
        let name = n.name.as_str();
        let out = c.out;
        let input = |k: usize| c.input(k);
        self.cx
            .op_to("GlobalAveragePool", name, &[input(0)?], out, vec![]);
        Ok(())
    }

    /// Lowers `Unpooling`.
    pub(crate) fn unpooling(&mut self, n: &Node, c: &Call) -> Result<()> {
        let name = n.name.as_str();
        let out = c.out;
        let input = |k: usize| c.input(k);
        let x = input(0)?;
        let k = a_ints(n, "kernel");
        if a_bool(n, "channel_last") {
            return Err(Error::Unsupported("channel_last is not exported".into()));
        }
        let rank = self.rank(n, x)?;
        let mut scales = vec![1.0f32; rank.saturating_sub(k.len())];
        scales.extend(k.iter().map(|&v| v as f32));
        let s = self.cx.floats("scales", &scales, &[scales.len() as i64]);
        self.cx.op_to(
            "Resize",
            name,
            &[x, "", &s],
            out,
            vec![
                attr::string("mode", "nearest"),
                attr::string("coordinate_transformation_mode", "asymmetric"),
                attr::string("nearest_mode", "floor"),
            ],
        );
        Ok(())
    }
}
