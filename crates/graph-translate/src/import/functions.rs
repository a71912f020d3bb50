//! Model-local functions (`ModelProto.functions`, which onnxscript and
//! torch's dynamo exporter write): each call of one is replaced by the
//! function's nodes before anything is lowered, its inputs and outputs
//! those of the call, its other values named after the call
//! (`CALL.value`), attributes the body takes by reference (`ref_attr_name`)
//! given the call's (or the function's default). Calls inside functions
//! are expanded too, at most [`MAX_DEPTH`] deep and [`MAX_NODES`] nodes
//! in all.

use std::collections::{HashMap, HashSet};

use onnx_format::proto::{AttributeProto, FunctionProto, GraphProto, NodeProto};

use super::onnx_graph::Node;
use super::{ImportError, Unsupported};

/// Deepest nesting of calls expanded.
const MAX_DEPTH: usize = 16;

/// The most nodes the graph may have once every call is expanded.
const MAX_NODES: usize = 1_000_000;

/// The function a node calls: same domain and name.
fn callee<'f>(functions: &'f [FunctionProto], n: &Node) -> Option<&'f FunctionProto> {
    functions.iter().find(|f| {
        f.name.as_deref() == Some(n.op.as_str()) && f.domain.as_deref().unwrap_or("") == n.domain
    })
}

/// `nodes` with every call of a function of `functions` replaced by the
/// function's nodes; `taken` holds every name the graph uses (new names
/// are added to it).
pub(crate) fn expand(
    nodes: Vec<Node>,
    functions: &[FunctionProto],
    taken: &mut HashSet<String>,
) -> Result<Vec<Node>, ImportError> {
    if functions.is_empty() {
        return Ok(nodes);
    }
    let mut out = Vec::with_capacity(nodes.len());
    // (node, depth), in order: a call's nodes go where the call was
    let mut stack: Vec<(Node, usize)> = nodes.into_iter().rev().map(|n| (n, 0)).collect();
    while let Some((n, depth)) = stack.pop() {
        let Some(f) = callee(functions, &n) else {
            out.push(n);
            continue;
        };
        if depth >= MAX_DEPTH {
            return Err(ImportError::Unsupported(Unsupported::NestedCalls {
                node: n.name.clone(),
                function: n.op.clone(),
                limit: MAX_DEPTH,
            }));
        }
        let body = inline_call(&n, f, taken)?;
        if out.len() + stack.len() + body.len() > MAX_NODES {
            return Err(ImportError::Unsupported(Unsupported::TooManyNodes {
                limit: MAX_NODES,
            }));
        }
        stack.extend(body.into_iter().rev().map(|b| (b, depth + 1)));
    }
    Ok(out)
}

/// A name not in `taken` from `want` (taken now).
fn fresh(taken: &mut HashSet<String>, want: String) -> String {
    if taken.insert(want.clone()) {
        return want;
    }
    (2..)
        .map(|k| format!("{want}#{k}"))
        .find(|c| taken.insert(c.clone()))
        .unwrap_or(want)
}

/// The nodes of function `f` called by node `call`.
fn inline_call(
    call: &Node,
    f: &FunctionProto,
    taken: &mut HashSet<String>,
) -> Result<Vec<Node>, ImportError> {
    let mut map: HashMap<String, String> = HashMap::new();
    for (i, formal) in f.input.iter().enumerate() {
        map.insert(
            formal.clone(),
            call.inputs.get(i).cloned().unwrap_or_default(),
        );
    }
    for (j, formal) in f.output.iter().enumerate() {
        let actual = match call.outputs.get(j).filter(|o| !o.is_empty()) {
            Some(o) => o.clone(),
            None => fresh(taken, format!("{}.{formal}", call.name)),
        };
        map.insert(formal.clone(), actual);
    }
    for n in &f.node {
        for o in n.output.iter().filter(|o| !o.is_empty()) {
            if !map.contains_key(o) {
                let name = fresh(taken, format!("{}.{o}", call.name));
                map.insert(o.clone(), name);
            }
        }
    }
    let mut nodes = Vec::with_capacity(f.node.len());
    for (k, n) in f.node.iter().enumerate() {
        let attrs = n.attribute.iter().filter_map(|a| resolve(a, call, f));
        nodes.push(copy_node(
            n,
            k,
            &format!("{}/", call.name),
            &map,
            attrs.collect(),
        ));
    }
    Ok(nodes)
}

/// Node `k` of a function body or a branch (`n`) copied into the graph
/// that holds it: named `prefix` and its own name (else `op#k`), its
/// inputs and outputs renamed by `map` (an empty name stays empty, a name
/// not in `map` is kept), with `attrs`, the reads of their subgraphs
/// renamed by `map` too.
pub(crate) fn copy_node(
    n: &NodeProto,
    k: usize,
    prefix: &str,
    map: &HashMap<String, String>,
    mut attrs: Vec<AttributeProto>,
) -> Node {
    let op = n.op_type.clone().unwrap_or_default();
    let local = n
        .name
        .clone()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| format!("{op}#{k}"));
    for a in &mut attrs {
        a.g.iter_mut()
            .chain(a.graphs.iter_mut())
            .for_each(|g| rename_reads(g, map));
    }
    let names = |v: &[String]| -> Vec<String> {
        v.iter()
            .map(|s| map.get(s).filter(|_| !s.is_empty()).unwrap_or(s).clone())
            .collect()
    };
    Node {
        op,
        domain: n.domain.clone().unwrap_or_default(),
        name: format!("{prefix}{local}"),
        inputs: names(&n.input),
        outputs: names(&n.output),
        attrs,
    }
}

/// Attribute `a` of a function's node as the call gives it: one that
/// refers to an attribute of the function (`ref_attr_name`) takes the
/// call's value, else the function's default, else it is left out.
fn resolve(a: &AttributeProto, call: &Node, f: &FunctionProto) -> Option<AttributeProto> {
    let Some(r) = a.ref_attr_name.as_deref().filter(|r| !r.is_empty()) else {
        return Some(a.clone());
    };
    let given = call
        .attrs
        .iter()
        .chain(&f.attribute_proto)
        .find(|x| x.name.as_deref() == Some(r))?;
    let mut v = given.clone();
    v.name = a.name.clone();
    v.ref_attr_name = None;
    Some(v)
}

/// Renames, in a subgraph of an inlined branch (or function), the names it
/// reads from the branch (ONNX names are unique across scopes, so no local name of
/// the subgraph is in `map`).
pub(crate) fn rename_reads(g: &mut GraphProto, map: &HashMap<String, String>) {
    for n in &mut g.node {
        for i in &mut n.input {
            if let Some(r) = map.get(i.as_str()) {
                *i = r.clone();
            }
        }
        for a in &mut n.attribute {
            a.g.iter_mut()
                .chain(a.graphs.iter_mut())
                .for_each(|g| rename_reads(g, map));
        }
    }
    for o in &mut g.output {
        if let Some(r) = o.name.as_ref().and_then(|n| map.get(n)) {
            o.name = Some(r.clone());
        }
    }
}
