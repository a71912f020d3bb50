//! A typed network graph, shared by the formats that store one.
//!
//! NNabla networks and TenniS modules are built into the same shape: a
//! [`Graph`] of [`Node`]s (an operator type, a name, named inputs and
//! outputs, attributes) over named values, with the graph's inputs and
//! outputs and the values that are weights. A file may hold several graphs
//! (NNabla stores one network per training, validation and inference
//! variant); [`ModelGraph`] holds them with the executors that name which
//! network runs at inference.
//!
//! ```
//! use tensor_core::graph::{Attribute, Graph, Node, ValueInfo, ValueKind};
//!
//! let mut g = Graph::new("net");
//! g.values.push(ValueInfo::new("x", ValueKind::Buffer).with_shape(vec![-1, 4]));
//! g.values.push(ValueInfo::new("fc/W", ValueKind::Weight).with_shape(vec![4, 2]));
//! g.nodes.push(
//!     Node::new("Affine", "fc", ["x", "fc/W"], ["y"]).with_attribute("base_axis", Attribute::Int(1)),
//! );
//! g.infer_inputs_outputs();
//! assert_eq!(g.inputs, ["x"]);
//! assert_eq!(g.outputs, ["y"]);
//! assert_eq!(g.weights().collect::<Vec<_>>(), ["fc/W"]);
//! ```

use std::collections::HashSet;

/// What a value of a graph is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ValueKind {
    /// Data computed by the network or fed to it (NNabla `Buffer`).
    Buffer,
    /// A trained weight, stored as a tensor of the file (NNabla `Parameter`).
    Weight,
    /// A constant stored in the graph itself (TenniS `<const>`).
    Constant,
    /// A kind the format names otherwise, kept as written.
    Other(String),
}

impl ValueKind {
    /// The kind as the file names it (`Buffer`, `Parameter`, ...).
    pub fn as_str(&self) -> &str {
        match self {
            ValueKind::Buffer => "Buffer",
            ValueKind::Weight => "Parameter",
            ValueKind::Constant => "Constant",
            ValueKind::Other(s) => s,
        }
    }

    /// The kind an NNabla variable `type` string names.
    pub fn from_nnabla(t: &str) -> ValueKind {
        match t {
            "Buffer" => ValueKind::Buffer,
            "Parameter" => ValueKind::Weight,
            other => ValueKind::Other(other.to_string()),
        }
    }

    /// True for values whose data is stored in the file (weights, constants).
    pub fn is_stored(&self) -> bool {
        matches!(self, ValueKind::Weight | ValueKind::Constant)
    }
}

/// A value declared by a graph: its name, kind and declared shape.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ValueInfo {
    /// The value's name, unique within its graph.
    pub name: String,
    /// What it is.
    pub kind: ValueKind,
    /// Declared dimensions; `-1` marks a dimension fixed only at run time
    /// (NNabla's batch). `None` when the format declares no shape.
    pub shape: Option<Vec<i64>>,
    /// The tensor of the file that holds this value's data, for weights and
    /// constants.
    pub tensor: Option<String>,
    /// The names the file gives the dimensions of `shape` it leaves open
    /// (ONNX `dim_param`, e.g. `batch`), one entry per dimension, `None`
    /// where a dimension has no name; `None` when the file names none.
    pub dim_names: Option<Vec<Option<String>>>,
}

impl ValueInfo {
    /// A value with no declared shape and no tensor.
    pub fn new(name: impl Into<String>, kind: ValueKind) -> Self {
        ValueInfo {
            name: name.into(),
            kind,
            shape: None,
            tensor: None,
            dim_names: None,
        }
    }

    /// The same value with the names of its open dimensions (see
    /// [`ValueInfo::dim_names`]); a list naming none is kept as `None`.
    pub fn with_dim_names(mut self, names: Vec<Option<String>>) -> Self {
        self.dim_names = names.iter().any(Option::is_some).then_some(names);
        self
    }

    /// The shape as text, `×` between dimensions, each open dimension by
    /// its name where the file gives one (`batch×3×224×224`); `None`
    /// without a declared shape.
    pub fn shape_text(&self) -> Option<String> {
        let shape = self.shape.as_ref()?;
        let names = self.dim_names.as_deref().unwrap_or(&[]);
        let dims: Vec<String> = shape
            .iter()
            .enumerate()
            .map(|(i, d)| match names.get(i) {
                Some(Some(n)) if *d < 0 => n.clone(),
                _ => d.to_string(),
            })
            .collect();
        Some(dims.join("×"))
    }

    /// The same value with a declared shape.
    pub fn with_shape(mut self, shape: Vec<i64>) -> Self {
        self.shape = Some(shape);
        self
    }

    /// The same value, its data stored as the file's tensor `name`.
    pub fn with_tensor(mut self, name: impl Into<String>) -> Self {
        self.tensor = Some(name.into());
        self
    }
}

/// An attribute value of a node.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Attribute {
    /// An integer (any width, signed or not, that fits `i64`).
    Int(i64),
    /// A floating-point number.
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// Text.
    String(String),
    /// A list of integers.
    Ints(Vec<i64>),
    /// A list of floating-point numbers.
    Floats(Vec<f64>),
    /// A list of booleans.
    Bools(Vec<bool>),
    /// A list of texts.
    Strings(Vec<String>),
    /// A tensor of the file, by its name (too large or too typed to inline).
    Tensor(String),
    /// Several tensors of the file, by their names, in order (a value packed
    /// from several fields, such as a TenniS parameter with more than one).
    Tensors(Vec<String>),
    /// A nested message: named attributes in stored order.
    Message(Vec<(String, Attribute)>),
    /// A list of nested messages.
    Messages(Vec<Vec<(String, Attribute)>>),
}

impl Attribute {
    /// The integer, for `Int` and `Bool`.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Attribute::Int(v) => Some(*v),
            Attribute::Bool(b) => Some(i64::from(*b)),
            _ => None,
        }
    }

    /// The number, for `Float` and `Int`.
    pub fn as_float(&self) -> Option<f64> {
        match self {
            Attribute::Float(v) => Some(*v),
            Attribute::Int(v) => Some(*v as f64),
            _ => None,
        }
    }

    /// The text, for `String`.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Attribute::String(s) => Some(s),
            _ => None,
        }
    }

    /// The integers, for `Ints` (and a single `Int`).
    pub fn as_ints(&self) -> Option<Vec<i64>> {
        match self {
            Attribute::Ints(v) => Some(v.clone()),
            Attribute::Int(v) => Some(vec![*v]),
            _ => None,
        }
    }
}

/// One operation of a graph.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Node {
    /// The operator type (`Affine`, `conv2d`, `<const>`, ...), as the format names it.
    pub op: String,
    /// The node's name as stored (not unique in every file).
    pub name: String,
    /// The values it reads, in order.
    pub inputs: Vec<String>,
    /// The values it writes, in order.
    pub outputs: Vec<String>,
    /// Its attributes in stored order.
    pub attributes: Vec<(String, Attribute)>,
}

impl Node {
    /// A node without attributes.
    pub fn new<I, O>(op: impl Into<String>, name: impl Into<String>, inputs: I, outputs: O) -> Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
        O: IntoIterator,
        O::Item: Into<String>,
    {
        Node {
            op: op.into(),
            name: name.into(),
            inputs: inputs.into_iter().map(Into::into).collect(),
            outputs: outputs.into_iter().map(Into::into).collect(),
            attributes: Vec::new(),
        }
    }

    /// The same node with one more attribute.
    pub fn with_attribute(mut self, key: impl Into<String>, value: Attribute) -> Self {
        self.attributes.push((key.into(), value));
        self
    }

    /// The first attribute named `key`.
    pub fn attribute(&self, key: &str) -> Option<&Attribute> {
        self.attributes
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }
}

/// A network: nodes over named values.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct Graph {
    /// The network's name (empty where the format has none).
    pub name: String,
    /// NNabla's stored `batch_size`; `None` elsewhere.
    pub batch_size: Option<i64>,
    /// The values fed from outside, in order.
    pub inputs: Vec<String>,
    /// The values the graph computes for the caller, in order.
    pub outputs: Vec<String>,
    /// The values the format declares, in stored order.
    pub values: Vec<ValueInfo>,
    /// The nodes in stored order.
    pub nodes: Vec<Node>,
}

impl Graph {
    /// An empty graph.
    pub fn new(name: impl Into<String>) -> Self {
        Graph {
            name: name.into(),
            ..Graph::default()
        }
    }

    /// The declared value named `name`.
    pub fn value(&self, name: &str) -> Option<&ValueInfo> {
        self.values.iter().find(|v| v.name == name)
    }

    /// The names of the file's tensors this graph uses as weights or
    /// constants, each once, in declaration order.
    pub fn weights(&self) -> impl Iterator<Item = &str> {
        let mut seen = HashSet::new();
        let from_values = self
            .values
            .iter()
            .filter(|v| v.kind.is_stored())
            .map(|v| v.tensor.as_deref().unwrap_or(v.name.as_str()));
        let from_nodes = self
            .nodes
            .iter()
            .flat_map(|n| n.attributes.iter())
            .flat_map(|(_, a)| match a {
                Attribute::Tensor(t) => std::slice::from_ref(t),
                Attribute::Tensors(ts) => ts.as_slice(),
                _ => &[],
            })
            .map(String::as_str);
        from_values
            .chain(from_nodes)
            .filter(move |n| seen.insert(*n))
    }

    /// Sets [`Graph::inputs`] and [`Graph::outputs`] from the nodes, for
    /// formats that do not declare them: inputs are values read but never
    /// written and not stored in the file; outputs are values written but
    /// never read. Both in first-use order.
    pub fn infer_inputs_outputs(&mut self) {
        let written: HashSet<&str> = self
            .nodes
            .iter()
            .flat_map(|n| n.outputs.iter().map(String::as_str))
            .collect();
        let read: HashSet<&str> = self
            .nodes
            .iter()
            .flat_map(|n| n.inputs.iter().map(String::as_str))
            .collect();
        let stored: HashSet<&str> = self
            .values
            .iter()
            .filter(|v| v.kind.is_stored())
            .map(|v| v.name.as_str())
            .collect();
        let mut inputs = Vec::new();
        let mut outputs = Vec::new();
        let mut seen = HashSet::new();
        for n in &self.nodes {
            for i in &n.inputs {
                if !written.contains(i.as_str())
                    && !stored.contains(i.as_str())
                    && seen.insert(i.as_str())
                {
                    inputs.push(i.clone());
                }
            }
        }
        for n in &self.nodes {
            for o in &n.outputs {
                if !read.contains(o.as_str()) && seen.insert(o.as_str()) {
                    outputs.push(o.clone());
                }
            }
        }
        self.inputs = inputs;
        self.outputs = outputs;
    }
}

/// An executor: which network runs for inference, with its data and outputs.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct Executor {
    /// The executor's name.
    pub name: String,
    /// The network it runs.
    pub network: String,
    /// The variables it feeds.
    pub data: Vec<String>,
    /// The variables it reads back.
    pub outputs: Vec<String>,
}

impl Executor {
    /// An executor of `network`.
    pub fn new(name: impl Into<String>, network: impl Into<String>) -> Self {
        Executor {
            name: name.into(),
            network: network.into(),
            ..Executor::default()
        }
    }
}

/// Every graph of a file, with what names them for use.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct ModelGraph {
    /// The networks, in stored order.
    pub graphs: Vec<Graph>,
    /// NNabla executors (inference entry points).
    pub executors: Vec<Executor>,
    /// NNabla optimizer names.
    pub optimizers: Vec<String>,
    /// NNabla dataset names.
    pub datasets: Vec<String>,
    /// NNabla monitor names.
    pub monitors: Vec<String>,
}

impl ModelGraph {
    /// A model of one graph.
    pub fn single(graph: Graph) -> Self {
        ModelGraph {
            graphs: vec![graph],
            ..ModelGraph::default()
        }
    }

    /// The graph named `name`.
    pub fn graph(&self, name: &str) -> Option<&Graph> {
        self.graphs.iter().find(|g| g.name == name)
    }

    /// The graph an inference run uses: the first executor's network, else
    /// the first graph.
    pub fn inference_graph(&self) -> Option<&Graph> {
        self.executors
            .first()
            .and_then(|e| self.graph(&e.network))
            .or_else(|| self.graphs.first())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_outputs_and_weights() {
        let mut g = Graph::new("n");
        g.values
            .push(ValueInfo::new("W", ValueKind::Weight).with_shape(vec![2, 2]));
        g.nodes.push(Node::new("MatMul", "a", ["x", "W"], ["h"]));
        g.nodes.push(
            Node::new("Add", "b", ["h", "c"], ["y", "z"])
                .with_attribute("bias", Attribute::Tensor("b/value".into())),
        );
        g.nodes.push(Node::new("Relu", "r", ["z"], ["out"]));
        g.infer_inputs_outputs();
        assert_eq!(g.inputs, ["x", "c"]);
        assert_eq!(g.outputs, ["y", "out"]);
        assert_eq!(g.weights().collect::<Vec<_>>(), ["W", "b/value"]);
        assert_eq!(g.nodes[1].attribute("bias").and_then(|a| a.as_int()), None);
        let m = ModelGraph {
            graphs: vec![Graph::new("train"), g],
            executors: vec![Executor::new("runtime", "n")],
            ..ModelGraph::default()
        };
        assert_eq!(m.inference_graph().map(|g| g.name.as_str()), Some("n"));
        assert_eq!(ValueKind::from_nnabla("Parameter"), ValueKind::Weight);
        assert_eq!(ValueKind::Weight.as_str(), "Parameter");
    }
}
