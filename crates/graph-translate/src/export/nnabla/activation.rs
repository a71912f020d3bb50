//! Activations.

use onnx_format::builder::attr;
use onnx_format::proto::tensor_proto::DataType;
use tensor_core::graph::Node;

use super::{Call, Exporter, a_float, a_int};
use crate::export::Result;

/// What [`Exporter::binary_step`] writes where `x > 0` does not hold.
#[derive(Clone, Copy)]
enum Step {
    /// 0 (`BinarySigmoid`).
    ZeroOne,
    /// -1 (`BinaryTanh`).
    MinusOneOne,
}

/// The activation [`Exporter::concat_pair`] applies to `x` and `-x`.
#[derive(Clone, Copy)]
enum Pair {
    /// ONNX `Relu` (`CReLU`).
    Relu,
    /// ONNX `Elu` with nnabla's `alpha` (`CELU`).
    Elu,
}

impl Exporter<'_> {
    /// Lowers a function with a one-to-one elementwise ONNX operator (the
    /// entry's first).
    pub(crate) fn unary(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.cx
            .op_to(c.onnx(), &n.name, &[c.input(0)?], c.out, vec![]);
        Ok(())
    }

    /// Lowers `Dropout` (inference: the identity, the entry's operator),
    /// also writing its mask.
    pub(crate) fn dropout(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.unary(n, c)?;
        if let Some(mask) = n.outputs.get(1) {
            // at inference nothing is dropped: the mask is all ones
            let x = c.input(0)?;
            let one = self.cx.scalar(1.0);
            let s = self.cx.op("Shape", &[x], vec![]);
            self.cx.op_to("Expand", "", &[&one, &s], mask, vec![]);
        }
        Ok(())
    }

    /// Lowers `Softmax`.
    pub(crate) fn softmax(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.softmax_as(n, c, "Softmax")
    }

    /// Lowers `LogSoftmax`.
    pub(crate) fn log_softmax(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.softmax_as(n, c, "LogSoftmax")
    }

    /// The ONNX `op` (`Softmax`, `LogSoftmax`) over `axis` (default: the
    /// last).
    fn softmax_as(&mut self, n: &Node, c: &Call, op: &str) -> Result<()> {
        let name = n.name.as_str();
        let out = c.out;
        let input = |k: usize| c.input(k);
        let x = input(0)?;
        let axis = match n.attribute("axis") {
            Some(a) => a.as_int().unwrap_or(1),
            None => self.rank(n, x)? as i64 - 1,
        };
        self.cx
            .op_to(op, name, &[x], out, vec![attr::int("axis", axis)]);
        Ok(())
    }

    /// Lowers `ELU`.
    pub(crate) fn elu(&mut self, n: &Node, c: &Call) -> Result<()> {
        let name = n.name.as_str();
        let out = c.out;
        let input = |k: usize| c.input(k);
        let a = a_float(n, "alpha", 1.0) as f32;
        self.cx.op_to(
            "Elu",
            name,
            &[input(0)?],
            out,
            vec![attr::float("alpha", a)],
        );
        Ok(())
    }

    /// Lowers `LeakyReLU`.
    pub(crate) fn leaky_relu(&mut self, n: &Node, c: &Call) -> Result<()> {
        let name = n.name.as_str();
        let out = c.out;
        let input = |k: usize| c.input(k);
        let a = a_float(n, "alpha", 0.1) as f32;
        self.cx.op_to(
            "LeakyRelu",
            name,
            &[input(0)?],
            out,
            vec![attr::float("alpha", a)],
        );
        Ok(())
    }

    /// Lowers `SELU`.
    pub(crate) fn selu(&mut self, n: &Node, c: &Call) -> Result<()> {
        let name = n.name.as_str();
        let out = c.out;
        let input = |k: usize| c.input(k);
        let scale = a_float(n, "scale", 1.050_700_987_355_480_5) as f32;
        let alpha = a_float(n, "alpha", 1.673_263_242_354_377_3) as f32;
        self.cx.op_to(
            "Selu",
            name,
            &[input(0)?],
            out,
            vec![attr::float("alpha", alpha), attr::float("gamma", scale)],
        );
        Ok(())
    }

    /// Lowers `SoftPlus`.
    pub(crate) fn softplus(&mut self, n: &Node, c: &Call) -> Result<()> {
        let name = n.name.as_str();
        let out = c.out;
        let input = |k: usize| c.input(k);
        let beta = a_float(n, "beta", 1.0);
        let x = input(0)?;
        if beta == 0.0 || beta == 1.0 {
            self.cx.op_to("Softplus", name, &[x], out, vec![]);
        } else {
            let b = self.cx.scalar(beta as f32);
            let xb = self.cx.op("Mul", &[x, &b], vec![]);
            let s = self.cx.op("Softplus", &[&xb], vec![]);
            self.cx.op_to("Div", name, &[&s, &b], out, vec![]);
        }
        Ok(())
    }

    /// Lowers `PReLU`.
    pub(crate) fn prelu(&mut self, n: &Node, c: &Call) -> Result<()> {
        let name = n.name.as_str();
        let out = c.out;
        let input = |k: usize| c.input(k);
        let (x, slope) = (input(0)?, input(1)?);
        let base = a_int(n, "base_axis", 1);
        let rank = self.rank(n, x)? as i64;
        let sn: i64 = self.shape(slope).map_or(1, |s| s.iter().product());
        let s = if sn <= 1 {
            self.cx.reshape(slope, &[1])
        } else {
            let mut shape = vec![-1];
            shape.extend(std::iter::repeat_n(1, (rank - base - 1).max(0) as usize));
            self.cx.reshape(slope, &shape)
        };
        self.cx.op_to("PRelu", name, &[x, &s], out, vec![]);
        Ok(())
    }

    /// Lowers `BinarySigmoid`: 1 where `x > 0`, else 0.
    pub(crate) fn binary_sigmoid(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.binary_step(n, c, Step::ZeroOne)
    }

    /// Lowers `BinaryTanh`: 1 where `x > 0`, else -1.
    pub(crate) fn binary_tanh(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.binary_step(n, c, Step::MinusOneOne)
    }

    /// 1 where `x > 0`, else the low value of `step`.
    fn binary_step(&mut self, n: &Node, c: &Call, step: Step) -> Result<()> {
        let name = n.name.as_str();
        let out = c.out;
        let input = |k: usize| c.input(k);
        let z = self.cx.scalar(0.0);
        let gt = self.cx.op("Greater", &[input(0)?, &z], vec![]);
        match step {
            Step::ZeroOne => self.cx.op_to(
                "Cast",
                name,
                &[&gt],
                out,
                vec![attr::int("to", DataType::Float as i64)],
            ),
            Step::MinusOneOne => {
                let (one, minus) = (self.cx.scalar(1.0), self.cx.scalar(-1.0));
                self.cx
                    .op_to("Where", name, &[&gt, &one, &minus], out, vec![]);
            }
        }
        Ok(())
    }

    /// Lowers `Swish`: `x * sigmoid(x)`.
    pub(crate) fn swish(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let s = self.cx.op("Sigmoid", &[x], vec![]);
        self.cx.op_to("Mul", &n.name, &[x, &s], c.out, vec![]);
        Ok(())
    }

    /// Lowers `Mish`: `x * tanh(softplus(x))`.
    pub(crate) fn mish(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let sp = self.cx.op("Softplus", &[x], vec![]);
        let t = self.cx.op("Tanh", &[&sp], vec![]);
        self.cx.op_to("Mul", &n.name, &[x, &t], c.out, vec![]);
        Ok(())
    }

    /// Lowers `TanhShrink`: `x - tanh(x)`.
    pub(crate) fn tanh_shrink(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let t = self.cx.op("Tanh", &[x], vec![]);
        self.cx.op_to("Sub", &n.name, &[x, &t], c.out, vec![]);
        Ok(())
    }

    /// Lowers `LogSigmoid`: `-softplus(-x)`.
    pub(crate) fn log_sigmoid(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let m = self.cx.op("Neg", &[x], vec![]);
        let sp = self.cx.op("Softplus", &[&m], vec![]);
        self.cx.op_to("Neg", &n.name, &[&sp], c.out, vec![]);
        Ok(())
    }

    /// Lowers `ReLU6`: `min(max(x, 0), 6)`.
    pub(crate) fn relu6(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.clip(n, c, 0.0, 6.0)
    }

    /// Lowers `HardTanh`: `min(max(x, -1), 1)`.
    pub(crate) fn hard_tanh(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.clip(n, c, -1.0, 1.0)
    }

    /// `x` clipped to `[lo, hi]` (ONNX `Clip`).
    fn clip(&mut self, n: &Node, c: &Call, lo: f32, hi: f32) -> Result<()> {
        let (lo, hi) = (self.cx.scalar(lo), self.cx.scalar(hi));
        self.cx
            .op_to("Clip", &n.name, &[c.input(0)?, &lo, &hi], c.out, vec![]);
        Ok(())
    }

    /// Lowers `HardSigmoid`: `max(0, min(1, 0.2 x + 0.5))`.
    pub(crate) fn hard_sigmoid(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.cx.op_to(
            "HardSigmoid",
            &n.name,
            &[c.input(0)?],
            c.out,
            vec![attr::float("alpha", 0.2), attr::float("beta", 0.5)],
        );
        Ok(())
    }

    /// Lowers `IsNaN` and `IsInf`: the ONNX test cast to float (0/1).
    pub(crate) fn is_test(&mut self, n: &Node, c: &Call) -> Result<()> {
        let b = self.cx.op(c.onnx(), &[c.input(0)?], vec![]);
        self.cx.cast_float_to(&n.name, &b, c.out);
        Ok(())
    }

    /// Lowers `AddN`: the elementwise sum of every input.
    pub(crate) fn add_n(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.cx.op_to("Sum", &n.name, &c.ins, c.out, vec![]);
        Ok(())
    }

    /// Lowers `GELU`: nnabla's tanh form,
    /// `x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`.
    pub(crate) fn gelu(&mut self, n: &Node, c: &Call) -> Result<()> {
        let x = c.input(0)?;
        let cx = &mut self.cx;
        let x2 = cx.op("Mul", &[x, x], vec![]);
        let x3 = cx.op("Mul", &[&x2, x], vec![]);
        let k = cx.scalar(0.044_715);
        let kx3 = cx.op("Mul", &[&x3, &k], vec![]);
        let inner = cx.op("Add", &[x, &kx3], vec![]);
        let s = cx.scalar((2.0 / std::f64::consts::PI).sqrt() as f32);
        let t = cx.op("Mul", &[&inner, &s], vec![]);
        let th = cx.op("Tanh", &[&t], vec![]);
        let one = cx.scalar(1.0);
        let p = cx.op("Add", &[&th, &one], vec![]);
        let half = cx.scalar(0.5);
        let hx = cx.op("Mul", &[x, &half], vec![]);
        cx.op_to("Mul", &n.name, &[&hx, &p], c.out, vec![]);
        Ok(())
    }

    /// Lowers `CReLU`: `ReLU` of `x` and of `-x`, concatenated along
    /// `axis`.
    pub(crate) fn crelu(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.concat_pair(n, c, Pair::Relu)
    }

    /// Lowers `CELU`: `ELU(alpha)` of `x` and of `-x`, concatenated along
    /// `axis`.
    pub(crate) fn celu(&mut self, n: &Node, c: &Call) -> Result<()> {
        self.concat_pair(n, c, Pair::Elu)
    }

    /// The activation `pair` of `x` and of `-x`, concatenated along `axis`.
    fn concat_pair(&mut self, n: &Node, c: &Call, pair: Pair) -> Result<()> {
        let x = c.input(0)?;
        let neg = self.cx.op("Neg", &[x], vec![]);
        let (op, attrs) = match pair {
            Pair::Relu => ("Relu", vec![]),
            Pair::Elu => (
                "Elu",
                vec![attr::float("alpha", a_float(n, "alpha", 1.0) as f32)],
            ),
        };
        let attrs = || attrs.clone();
        let a = self.cx.op(op, &[x], attrs());
        let b = self.cx.op(op, &[&neg], attrs());
        self.cx.op_to(
            "Concat",
            &n.name,
            &[&a, &b],
            c.out,
            vec![attr::int("axis", a_int(n, "axis", 1))],
        );
        Ok(())
    }
}
