//! What both exporters share: the graph builder and operator-set-aware
//! helpers. Every constant the exporter adds is named with the reserved
//! prefix [`super::HELPER_PREFIX`].

use onnx_format::ModelProto;
use onnx_format::builder::{GraphBuilder, attr};
use onnx_format::proto::AttributeProto;
use onnx_format::proto::tensor_proto::DataType;

use super::{ExportSummary, HELPER_PREFIX};

pub(crate) struct Ctx {
    pub b: GraphBuilder,
    pub opset: i64,
}

// The helpers serve both exporters; with one format feature off, the other's
// helpers have no caller.
#[cfg_attr(not(all(feature = "nnabla", feature = "tennis")), allow(dead_code))]
impl Ctx {
    pub fn new(name: &str, opset: i64) -> Self {
        Ctx {
            b: GraphBuilder::new(name),
            opset,
        }
    }

    /// A fresh name for a tensor the exporter adds (constants, derived
    /// weights): `mlformats/HINT__N`.
    pub fn helper_name(&mut self, hint: &str) -> String {
        self.b.fresh(&format!("{HELPER_PREFIX}{hint}"))
    }

    /// A node with one fresh output.
    pub fn op(&mut self, op: &str, inputs: &[&str], attrs: Vec<AttributeProto>) -> String {
        self.b.op(op, inputs, attrs)
    }

    /// A node writing `out`.
    pub fn op_to(
        &mut self,
        op: &str,
        name: &str,
        inputs: &[&str],
        out: &str,
        attrs: Vec<AttributeProto>,
    ) {
        self.b.node(op, name, inputs, &[out], attrs);
    }

    /// A 1-D `INT64` helper constant.
    pub fn ints(&mut self, values: &[i64]) -> String {
        self.b.const_i64(&format!("{HELPER_PREFIX}c"), values)
    }

    /// A scalar `FLOAT` helper constant.
    pub fn scalar(&mut self, v: f32) -> String {
        self.b.scalar_f32(&format!("{HELPER_PREFIX}c"), v)
    }

    /// A `FLOAT` helper constant of shape `dims`.
    pub fn floats(&mut self, hint: &str, values: &[f32], dims: &[i64]) -> String {
        self.b
            .const_f32(&format!("{HELPER_PREFIX}{hint}"), values, dims)
    }

    /// `op` (`ReduceMean`, `ReduceSum`, ...) over `axes` (all when empty),
    /// axes as an attribute or an input as the operator set wants.
    pub fn reduce(&mut self, op: &str, x: &str, axes: &[i64], keepdims: bool) -> String {
        let keep = attr::int("keepdims", i64::from(keepdims));
        let axes_as_input = op == "ReduceSum" || self.opset >= 18;
        if axes.is_empty() {
            return self.op(op, &[x], vec![keep]);
        }
        if axes_as_input {
            let a = self.ints(axes);
            self.op(op, &[x, &a], vec![keep])
        } else {
            self.op(op, &[x], vec![keep, attr::ints("axes", axes)])
        }
    }

    pub fn unsqueeze(&mut self, x: &str, axes: &[i64]) -> String {
        let a = self.ints(axes);
        self.op("Unsqueeze", &[x, &a], vec![])
    }

    /// A 1-element vector as a scalar.
    pub fn squeeze0(&mut self, x: &str) -> String {
        let a = self.ints(&[0]);
        self.op("Squeeze", &[x, &a], vec![])
    }

    pub fn reshape(&mut self, x: &str, shape: &[i64]) -> String {
        let s = self.ints(shape);
        self.op("Reshape", &[x, &s], vec![])
    }

    pub fn cast(&mut self, x: &str, to: DataType) -> String {
        self.op("Cast", &[x], vec![attr::int("to", to as i64)])
    }

    /// A node casting `x` to float into `out`.
    pub fn cast_float_to(&mut self, name: &str, x: &str, out: &str) {
        self.op_to(
            "Cast",
            name,
            &[x],
            out,
            vec![attr::int("to", DataType::Float as i64)],
        );
    }

    /// A node writing several outputs `outs` (`TopK` values and
    /// indices).
    pub fn op_outs(
        &mut self,
        op: &str,
        inputs: &[&str],
        outs: &[&str],
        attrs: Vec<AttributeProto>,
    ) {
        self.b.node(op, "", inputs, outs, attrs);
    }

    /// `Split` of `x` along `axis` into `n` equal parts, written to `outs`.
    pub fn split_equal(&mut self, x: &str, axis: i64, n: usize, outs: &[&str]) {
        if self.opset >= 18 {
            self.b.node(
                "Split",
                "",
                &[x],
                outs,
                vec![attr::int("axis", axis), attr::int("num_outputs", n as i64)],
            );
        } else {
            // opset 13..17: equal parts when `split` is left out
            self.b
                .node("Split", "", &[x], outs, vec![attr::int("axis", axis)]);
        }
    }

    /// The model, without initializers that no node reads (weights only
    /// used to derive others, e.g. binarized ones), and what it holds:
    /// `network` and `pruned` as the exporter says.
    pub fn finish(
        mut self,
        graph_name: &str,
        network: String,
        pruned: usize,
    ) -> (ModelProto, ExportSummary) {
        let opset = self.opset;
        let read: std::collections::HashSet<String> = self
            .b
            .graph
            .node
            .iter()
            .flat_map(|n| n.input.iter().cloned())
            .chain(self.b.graph.output.iter().filter_map(|o| o.name.clone()))
            .collect();
        self.b
            .graph
            .initializer
            .retain(|t| t.name.as_ref().is_some_and(|n| read.contains(n)));
        let opts = onnx_format::WriteOptions::default()
            .with_opset(opset)
            .with_graph_name(graph_name);
        let model = self.b.finish(&opts);
        let (nodes, initializers) = model
            .graph
            .as_ref()
            .map_or((0, 0), |g| (g.node.len(), g.initializer.len()));
        let summary = ExportSummary {
            network,
            nodes,
            initializers,
            opset,
            pruned,
        };
        (model, summary)
    }
}
