//! `If` on a constant condition (an input fixed with `--input-value`, or
//! shape arithmetic folded at import): the branch it takes is inlined into
//! the graph, its local names prefixed with the `If`'s name and its
//! outputs renamed to the `If`'s, so that the nodes lower like any others.
//! An `If` whose condition is computed at run time is computed as both
//! branches and a select: each branch inlined (names prefixed with the
//! `If`'s name and `then`/`else`), and each output a `Where` of the
//! condition over the two branches' outputs, which must have one shape
//! (checked once lowered); otherwise it is refused, naming the graph input
//! that would decide it.

use std::collections::{HashMap, HashSet};

use tensor_core::Limits;

use super::driver::Values;
use super::error::ControlFlowError as E;
use onnx_format::proto::GraphProto;

use super::fold;
use super::functions::copy_node;
use super::onnx_graph::{Const, Node, OnnxGraph};

/// The nodes the `If` `node` becomes when its condition is `cond`: the
/// taken branch with its local names made unique (its initializers are
/// recorded in `values` as constants), an `Identity` for each output the
/// branch does not compute itself (an outer value, an initializer, or one
/// value given as two outputs).
pub(crate) fn inline(values: &mut Values, node: &Node, cond: &Const) -> Result<Vec<Node>, E> {
    let taken = match cond.values().as_slice() {
        [c] => *c != 0.0,
        v => return Err(E::ConditionSize(v.len())),
    };
    let key = if taken { "then_branch" } else { "else_branch" };
    branch(values, node, key, &node.name, &node.outputs)
}

/// The nodes an `If` becomes, and the pairs of branch outputs its
/// selects choose between (the selects are the last nodes, one per pair).
pub(crate) type Inlined = (Vec<Node>, Vec<(String, String)>);

/// The nodes the `If` `node` becomes when its condition is known only at
/// run time: both branches, each output `Where(cond, then, else)`; and
/// the pairs of branch outputs whose shapes must agree, for the caller to
/// check once they are lowered.
pub(crate) fn select(values: &mut Values, node: &Node) -> Result<Inlined, E> {
    let cond = node.input(0).ok_or(E::NoCondition)?.to_string();
    let mut nodes = Vec::new();
    let mut outs: Vec<Vec<String>> = Vec::new();
    for (key, tag) in [("then_branch", "then"), ("else_branch", "else")] {
        let prefix = format!("{}.{tag}", node.name);
        let names: Vec<String> = node
            .outputs
            .iter()
            .enumerate()
            .map(|(i, o)| {
                if o.is_empty() {
                    String::new()
                } else {
                    values.fresh(&format!("{prefix}.output{i}"))
                }
            })
            .collect();
        nodes.extend(branch(values, node, key, &prefix, &names)?);
        outs.push(names);
    }
    let mut pairs = Vec::new();
    for (i, o) in node.outputs.iter().enumerate() {
        if o.is_empty() {
            continue;
        }
        let (t, e) = (outs[0][i].clone(), outs[1][i].clone());
        nodes.push(Node {
            op: "Where".into(),
            domain: String::new(),
            name: format!("{}.select{i}", node.name),
            inputs: vec![cond.clone(), t.clone(), e.clone()],
            outputs: vec![o.clone()],
            attrs: Vec::new(),
        });
        pairs.push((t, e));
    }
    Ok((nodes, pairs))
}

/// The nodes of the `If` `node`'s branch `key`, its local names prefixed
/// with `prefix` and its outputs named `outputs` (an empty name: not
/// needed).
fn branch(
    values: &mut Values,
    node: &Node,
    key: &'static str,
    prefix: &str,
    outputs: &[String],
) -> Result<Vec<Node>, E> {
    let branch = node
        .attr(key)
        .and_then(|a| a.g.as_ref())
        .ok_or(E::NoBranch { key })?;
    inline_graph(values, branch, key, prefix, &[], outputs)
}

/// The nodes of subgraph `branch` (called `key` in messages) inlined: its
/// local names prefixed with `prefix`, its inputs read from the values
/// `inputs` pairs with them (input name, value), its outputs named
/// `outputs` (an empty name: not needed). `If` branches and the bodies of
/// unrolled `Loop`s and `Scan`s (`unroll`) are inlined so.
pub(crate) fn inline_graph(
    values: &mut Values,
    branch: &GraphProto,
    key: &'static str,
    prefix: &str,
    inputs: &[(String, String)],
    outputs: &[String],
) -> Result<Vec<Node>, E> {
    if branch.output.len() != outputs.len() {
        return Err(E::SubgraphOutputs {
            key,
            has: branch.output.len(),
            node: outputs.len(),
        });
    }
    if !branch.sparse_initializer.is_empty() {
        return Err(E::SparseInitializers { key });
    }
    let out_name = |i: usize| branch.output[i].name.clone().unwrap_or_default();
    let computed: HashSet<&str> = branch
        .node
        .iter()
        .flat_map(|n| n.output.iter().map(String::as_str))
        .filter(|s| !s.is_empty())
        .collect();
    let mut map: HashMap<String, String> = inputs.iter().cloned().collect();
    // A branch output computed by a branch node, named once, takes the
    // output name directly.
    for (i, o) in outputs.iter().enumerate() {
        let b = out_name(i);
        let once = (0..outputs.len()).filter(|&j| out_name(j) == b).count() == 1;
        if !o.is_empty() && computed.contains(b.as_str()) && once {
            map.insert(b, o.clone());
        }
    }
    let locals = branch
        .initializer
        .iter()
        .filter_map(|t| t.name.as_deref())
        .chain(computed.iter().copied());
    for l in locals {
        if !map.contains_key(l) {
            let want = format!("{prefix}.{l}");
            let name = if values.take_name(&want) {
                want
            } else {
                values.fresh(&want)
            };
            map.insert(l.to_string(), name);
        }
    }
    let rename = |s: &String| map.get(s).cloned().unwrap_or_else(|| s.clone());
    for t in &branch.initializer {
        let tensor = onnx_format::tensor_from_proto(t, None, &Limits::default()).map_err(|e| {
            E::Initializer {
                key,
                error: e.to_string(),
            }
        })?;
        let elem = t.data_type.unwrap_or(super::onnx_graph::elem::FLOAT);
        values.set_const(
            &rename(&t.name.clone().unwrap_or_default()),
            Const { elem, tensor },
        );
    }
    let mut nodes = Vec::with_capacity(branch.node.len() + outputs.len());
    for (k, n) in branch.node.iter().enumerate() {
        let p = format!("{prefix}.");
        nodes.push(copy_node(n, k, &p, &map, n.attribute.clone()));
    }
    for (i, o) in outputs.iter().enumerate() {
        let b = out_name(i);
        if o.is_empty() || map.get(&b) == Some(o) {
            continue;
        }
        nodes.push(Node {
            op: "Identity".into(),
            domain: String::new(),
            name: format!("{prefix}.output{i}"),
            inputs: vec![rename(&b)],
            outputs: vec![o.clone()],
            attrs: Vec::new(),
        });
    }
    Ok(nodes)
}

/// The graph inputs the condition of the `If` `node` is computed from
/// through foldable nodes (those `--input-value` would make constant),
/// sorted.
pub(crate) fn condition_inputs(g: &OnnxGraph, node: &Node) -> Vec<String> {
    let producer: HashMap<&str, &Node> = g
        .nodes
        .iter()
        .flat_map(|n| n.outputs.iter().map(move |o| (o.as_str(), n)))
        .collect();
    let mut found: Vec<&str> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut stack: Vec<&str> = node.input(0).into_iter().collect();
    while let Some(v) = stack.pop() {
        if !seen.insert(v) {
            continue;
        }
        if g.inputs.iter().any(|i| i.name == v) {
            found.push(v);
        } else if let Some(p) = producer.get(v).filter(|p| fold::foldable(&p.op).is_some()) {
            stack.extend(
                p.inputs
                    .iter()
                    .map(String::as_str)
                    .filter(|s| !s.is_empty()),
            );
        }
    }
    found.sort_unstable();
    found.into_iter().map(String::from).collect()
}
