//! Building ONNX graphs node by node: what a converter from another format
//! needs (unique value names, initializers, constants, typed inputs and
//! outputs, attributes).
//!
//! ```
//! use onnx_format::builder::{GraphBuilder, Dim, attr};
//! use onnx_format::proto::tensor_proto::DataType;
//!
//! let mut b = GraphBuilder::new("net");
//! b.input("x", DataType::Float, &[Dim::Param("batch".into()), Dim::Value(4)]);
//! let y = b.op("LeakyRelu", &["x"], vec![attr::float("alpha", 0.1)]);
//! b.node("Identity", "", &[&y], &["out"], vec![]);
//! b.output("out", DataType::Float, &[Dim::Param("batch".into()), Dim::Value(4)]);
//! let model = b.finish(&Default::default());
//! assert_eq!(model.graph.unwrap().node.len(), 2);
//! ```

use std::collections::HashSet;

use tensor_core::Tensor;

use crate::Result;
use crate::proto::tensor_proto::DataType;
use crate::proto::tensor_shape_proto::{Dimension, dimension};
use crate::proto::{
    AttributeProto, GraphProto, ModelProto, NodeProto, TensorProto, TensorShapeProto, TypeProto,
    ValueInfoProto, type_proto,
};
use crate::write::{WriteOptions, model, tensor_to_proto};

/// One dimension of a declared input or output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dim {
    /// A fixed size.
    Value(i64),
    /// A symbolic size (`dim_param`), e.g. `"batch"`.
    Param(String),
    /// Not known.
    Unknown,
}

/// Attribute constructors.
pub mod attr {
    use super::*;
    use crate::proto::attribute_proto::AttributeType;

    fn named(name: &str, ty: AttributeType) -> AttributeProto {
        AttributeProto {
            name: Some(name.into()),
            r#type: Some(ty as i32),
            ..AttributeProto::default()
        }
    }

    /// An `INT` attribute.
    pub fn int(name: &str, v: i64) -> AttributeProto {
        AttributeProto {
            i: Some(v),
            ..named(name, AttributeType::Int)
        }
    }

    /// An `INTS` attribute.
    pub fn ints(name: &str, v: &[i64]) -> AttributeProto {
        AttributeProto {
            ints: v.to_vec(),
            ..named(name, AttributeType::Ints)
        }
    }

    /// A `FLOAT` attribute.
    pub fn float(name: &str, v: f32) -> AttributeProto {
        AttributeProto {
            f: Some(v),
            ..named(name, AttributeType::Float)
        }
    }

    /// A `FLOATS` attribute.
    pub fn floats(name: &str, v: &[f32]) -> AttributeProto {
        AttributeProto {
            floats: v.to_vec(),
            ..named(name, AttributeType::Floats)
        }
    }

    /// A `STRING` attribute.
    pub fn string(name: &str, v: &str) -> AttributeProto {
        AttributeProto {
            s: Some(v.as_bytes().to_vec()),
            ..named(name, AttributeType::String)
        }
    }

    /// A `TENSOR` attribute.
    pub fn tensor(name: &str, t: TensorProto) -> AttributeProto {
        AttributeProto {
            t: Some(t),
            ..named(name, AttributeType::Tensor)
        }
    }
}

/// A graph under construction.
#[derive(Debug, Default)]
pub struct GraphBuilder {
    /// The graph so far.
    pub graph: GraphProto,
    names: HashSet<String>,
    initializers: HashSet<String>,
    counter: usize,
}

impl GraphBuilder {
    /// An empty graph named `name`.
    pub fn new(name: &str) -> Self {
        GraphBuilder {
            graph: GraphProto {
                name: Some(name.into()),
                ..GraphProto::default()
            },
            ..GraphBuilder::default()
        }
    }

    /// Marks `name` as used (a value of the source graph), so fresh names avoid it.
    pub fn reserve(&mut self, name: &str) {
        self.names.insert(name.to_string());
    }

    /// A value name not used yet, from `hint`.
    pub fn fresh(&mut self, hint: &str) -> String {
        loop {
            self.counter += 1;
            let n = format!("{hint}__{}", self.counter);
            if self.names.insert(n.clone()) {
                return n;
            }
        }
    }

    /// True when `name` is an initializer.
    pub fn is_initializer(&self, name: &str) -> bool {
        self.initializers.contains(name)
    }

    /// The initializer named `name`, if any.
    pub fn initializer_proto(&self, name: &str) -> Option<&TensorProto> {
        self.graph
            .initializer
            .iter()
            .find(|t| t.name.as_deref() == Some(name))
    }

    /// Adds a node.
    pub fn node(
        &mut self,
        op: &str,
        name: &str,
        inputs: &[&str],
        outputs: &[&str],
        attributes: Vec<AttributeProto>,
    ) {
        for o in outputs {
            self.names.insert((*o).to_string());
        }
        self.graph.node.push(NodeProto {
            input: inputs.iter().map(|s| (*s).to_string()).collect(),
            output: outputs.iter().map(|s| (*s).to_string()).collect(),
            name: (!name.is_empty()).then(|| name.to_string()),
            op_type: Some(op.into()),
            attribute: attributes,
            ..NodeProto::default()
        });
    }

    /// Adds a node with one fresh output, and returns the output's name.
    pub fn op(&mut self, op: &str, inputs: &[&str], attributes: Vec<AttributeProto>) -> String {
        let out = self.fresh(op);
        self.node(op, "", inputs, &[&out], attributes);
        out
    }

    /// Adds a tensor as an initializer named `name`.
    pub fn initializer(&mut self, name: &str, t: &Tensor<'_>) -> Result<()> {
        let p = tensor_to_proto(name, t)?;
        self.add_initializer(p);
        Ok(())
    }

    /// Adds a `TensorProto` (with its name) as an initializer.
    pub fn add_initializer(&mut self, p: TensorProto) {
        let name = p.name.clone().unwrap_or_default();
        self.names.insert(name.clone());
        self.initializers.insert(name);
        self.graph.initializer.push(p);
    }

    /// A 1-D `INT64` constant (an initializer), e.g. a shape or axes.
    pub fn const_i64(&mut self, hint: &str, values: &[i64]) -> String {
        self.constant(hint, DataType::Int64, &[values.len() as i64], |b| {
            values
                .iter()
                .for_each(|v| b.extend_from_slice(&v.to_le_bytes()))
        })
    }

    /// A `FLOAT` constant of shape `dims`.
    pub fn const_f32(&mut self, hint: &str, values: &[f32], dims: &[i64]) -> String {
        self.constant(hint, DataType::Float, dims, |b| {
            values
                .iter()
                .for_each(|v| b.extend_from_slice(&v.to_le_bytes()))
        })
    }

    /// A scalar `FLOAT` constant.
    pub fn scalar_f32(&mut self, hint: &str, v: f32) -> String {
        self.const_f32(hint, &[v], &[])
    }

    fn constant(
        &mut self,
        hint: &str,
        ty: DataType,
        dims: &[i64],
        fill: impl FnOnce(&mut Vec<u8>),
    ) -> String {
        let name = self.fresh(hint);
        let mut raw = Vec::new();
        fill(&mut raw);
        self.add_initializer(TensorProto {
            dims: dims.to_vec(),
            data_type: Some(ty as i32),
            name: Some(name.clone()),
            raw_data: Some(raw.into()),
            ..TensorProto::default()
        });
        name
    }

    /// Declares a graph input.
    pub fn input(&mut self, name: &str, ty: DataType, dims: &[Dim]) {
        self.names.insert(name.to_string());
        self.graph.input.push(value_info(name, ty, Some(dims)));
    }

    /// Declares a graph output (`dims` `None`: shape not declared).
    pub fn output(&mut self, name: &str, ty: DataType, dims: &[Dim]) {
        self.graph.output.push(value_info(name, ty, Some(dims)));
    }

    /// Declares a graph output of unknown shape.
    pub fn output_unshaped(&mut self, name: &str, ty: DataType) {
        self.graph.output.push(value_info(name, ty, None));
    }

    /// The model: the graph, importing `opts.opset`.
    pub fn finish(self, opts: &WriteOptions) -> ModelProto {
        model(self.graph, opts)
    }
}

/// A `ValueInfoProto` of a tensor of `ty` with `dims` (or no shape).
pub fn value_info(name: &str, ty: DataType, dims: Option<&[Dim]>) -> ValueInfoProto {
    let shape = dims.map(|dims| TensorShapeProto {
        dim: dims
            .iter()
            .map(|d| Dimension {
                value: match d {
                    Dim::Value(v) => Some(dimension::Value::DimValue(*v)),
                    Dim::Param(p) => Some(dimension::Value::DimParam(p.clone())),
                    Dim::Unknown => None,
                },
                denotation: None,
            })
            .collect(),
    });
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: Some(ty as i32),
                shape,
            })),
            denotation: None,
        }),
        ..ValueInfoProto::default()
    }
}
