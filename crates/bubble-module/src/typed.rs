//! Unique names for modules whose node names repeat, and the module as the
//! shared typed graph ([`tensor_core::graph`]).
//!
//! TenniS does not require node names to be unique (the official SeetaFace6
//! face detector repeats some), so names that identify a tensor or a value
//! are made unique by one documented, stable rule: the first node with a
//! name keeps it; the `n`-th node with the same name (n = 2, 3, ...) is
//! called `<name>#<n>`, or `<name>#<n+1>`, ... if a node is already called
//! that.
//!
//! [`Module::unique_named_tensors`] also names the tensor of a `<const>`
//! node (its one-field `value`) by the node alone: a tensor `W` written as a
//! constant comes back as `W`, not `W/value`, so converting to a module and
//! back keeps names. [`Module::named_tensors`] keeps the contract's names.

use std::collections::{HashMap, HashSet};

use tensor_core::graph::{Attribute, Graph, Node as GraphNode, ValueInfo, ValueKind};
use tensor_core::{DType, Tensor};

use crate::module::{Module, NodeKind, Param};

impl<'a> Module<'a> {
    /// Every node's name, made unique (see the module docs): equal to
    /// [`crate::Node::name`] for every node whose name is not repeated.
    pub fn unique_node_names(&self) -> Vec<String> {
        let taken: HashSet<&str> = self.nodes().iter().map(|n| n.name()).collect();
        let mut seen: HashMap<&str, usize> = HashMap::new();
        let mut given: HashSet<String> = HashSet::new();
        let mut out = Vec::with_capacity(self.len());
        for node in self.nodes() {
            let count = seen.entry(node.name()).or_insert(0);
            *count += 1;
            let mut name = node.name().to_string();
            if *count > 1 {
                let mut n = *count;
                loop {
                    name = format!("{}#{n}", node.name());
                    if !taken.contains(name.as_str()) && !given.contains(&name) {
                        break;
                    }
                    n += 1;
                }
            }
            given.insert(name.clone());
            out.push(name);
        }
        out
    }

    /// Every tensor of the non-reserved parameters, in the order of
    /// [`Module::named_tensors`] and named as it names them but with the node
    /// names of [`Module::unique_node_names`], so that no two share a name
    /// when node names repeat (only a parameter key repeated within one node
    /// can still repeat a name), and a `<const>` node's one-field `value`
    /// named by the node alone.
    pub fn unique_named_tensors(&self) -> Vec<(String, &Tensor<'a>)> {
        let names = self.unique_node_names();
        let mut out = Vec::new();
        for (node, uname) in self.nodes().iter().zip(&names) {
            for p in node.params().iter().filter(|p| !p.is_reserved()) {
                if let Some(t) = const_value(node, p) {
                    out.push((uname.clone(), t));
                } else {
                    push_fields(&mut out, uname, p);
                }
            }
        }
        out
    }

    /// The module as a typed graph: one value per node, named by
    /// [`Module::unique_node_names`]; every node's parameters, reserved
    /// ones included, as attributes in file order (strings, scalars and
    /// short integer lists inline; other tensors by their tensor name, as in
    /// [`Module::unique_named_tensors`]). `<const>` nodes are constants
    /// whose tensor is named by the node, `<param>` nodes the graph inputs.
    pub fn to_graph(&self) -> Graph {
        let names = self.unique_node_names();
        let mut g = Graph::new("");
        g.inputs = self
            .inputs()
            .iter()
            .filter_map(|&i| names.get(i).cloned())
            .collect();
        g.outputs = self
            .outputs()
            .iter()
            .filter_map(|&i| names.get(i).cloned())
            .collect();
        for (node, uname) in self.nodes().iter().zip(&names) {
            let kind = match node.kind() {
                NodeKind::Const => ValueKind::Constant,
                _ => ValueKind::Buffer,
            };
            let mut value = ValueInfo::new(uname, kind.clone());
            if kind == ValueKind::Constant {
                value = value.with_tensor(uname.clone());
            }
            g.values.push(value);
            let inputs: Vec<String> = node
                .inputs()
                .iter()
                .filter_map(|&i| names.get(i).cloned())
                .collect();
            let mut n = GraphNode::new(node.op(), node.name(), inputs, [uname.clone()]);
            for p in node.params() {
                // a constant's value is the tensor named by the node alone
                let a = match (const_value(node, p), attribute(uname, p)) {
                    (Some(_), Attribute::Tensor(_)) => Attribute::Tensor(uname.clone()),
                    (_, a) => a,
                };
                n.attributes.push((p.key().into_owned(), a));
            }
            g.nodes.push(n);
        }
        g
    }
}

/// The tensor of a `<const>` node's one-field `value` parameter.
fn const_value<'m, 'a>(node: &'m crate::Node<'a>, p: &'m Param<'a>) -> Option<&'m Tensor<'a>> {
    match (node.kind(), p.fields()) {
        (NodeKind::Const, [t]) if p.key_bytes() == b"value" => Some(t),
        _ => None,
    }
}

fn push_fields<'m, 'a>(out: &mut Vec<(String, &'m Tensor<'a>)>, node: &str, p: &'m Param<'a>) {
    let fields = p.fields();
    for (i, t) in fields.iter().enumerate() {
        let name = if fields.len() > 1 {
            format!("{node}/{}[{i}]", p.key())
        } else {
            format!("{node}/{}", p.key())
        };
        out.push((name, t));
    }
}

/// Integer lists up to this length are inlined as attributes.
const INLINE_INTS: usize = 64;

/// Whether the graph ([`Module::to_graph`]) or the walk's own checks read
/// the data of a field of `dtype` and `dims` (of a reserved parameter when
/// `reserved`): reserved values (`#op`, `#name`, `#output_count`, ...),
/// 1-D strings and values of rank 0 or 1 short enough to inline. The graph
/// only names every other field ([`attribute`] gives it by name whatever
/// its data), so a walk that locates tensors reads just these
/// ([`crate::ModuleIndex`]).
pub(crate) fn graph_reads(reserved: bool, dtype: DType, dims: &[usize]) -> bool {
    let numel = dims.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
    reserved
        || dims.len() <= 1 && (dtype == DType::Char8 || numel.is_some_and(|n| n <= INLINE_INTS))
}

fn attribute(node: &str, p: &Param<'_>) -> Attribute {
    if let Some(s) = p.as_str() {
        return Attribute::String(s.into_owned());
    }
    let by_name = || Attribute::Tensor(format!("{node}/{}", p.key()));
    let [t] = p.fields() else {
        // the names the tensors have (`<node>/<key>[i]`, as in
        // `Module::unique_named_tensors`), one per field
        return Attribute::Tensors(
            (0..p.fields().len())
                .map(|i| format!("{node}/{}[{i}]", p.key()))
                .collect(),
        );
    };
    let inline = t.dims().len() <= 1 && (t.numel() <= INLINE_INTS || p.is_reserved());
    if !inline {
        return by_name();
    }
    let scalar = t.dims().is_empty();
    let d = t.dtype();
    if d == DType::Bool {
        let v: Vec<bool> = t.bytes().iter().map(|&b| b != 0).collect();
        return match (scalar, v.as_slice()) {
            (true, [b]) => Attribute::Bool(*b),
            _ => Attribute::Bools(v),
        };
    }
    let Some(values) = t.to_f64_vec() else {
        return by_name();
    };
    if d.is_float() {
        return match (scalar, values.as_slice()) {
            (true, [v]) => Attribute::Float(*v),
            _ => Attribute::Floats(values),
        };
    }
    let ints: Vec<i64> = values.iter().map(|&v| v as i64).collect();
    match (scalar, ints.as_slice()) {
        (true, [v]) => Attribute::Int(*v),
        _ => Attribute::Ints(ints),
    }
}
