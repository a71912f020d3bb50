//! `Loop` with a constant trip count and `Scan` over sequences of static
//! length, unrolled: the body inlined once per iteration (its local names
//! prefixed with the node's name and the iteration), each iteration reading
//! the state the one before gave, so that the nodes lower like any others.
//! A `Loop`'s per-iteration outputs, and a `Scan`'s, are stacked by
//! `Unsqueeze` and `Concat`; a `Scan` reads element `t` of each sequence by
//! a `Gather` of the constant index `t`. What cannot be unrolled so (a
//! trip count known only at run time, a condition the body changes, a
//! sequence of unknown length, too many iterations) is refused, saying
//! what would make it importable.

use onnx_format::proto::GraphProto;
use tensor_core::Tensor;

use super::driver::Values;
use super::error::ControlFlowError as E;
use super::inline_if::inline_graph;
use super::onnx_graph::{Const, Node, elem};

/// The most iterations unrolled.
pub(crate) const MAX_ITERATIONS: usize = 1024;

/// The most nodes an unrolled loop may become (iterations × body nodes).
const MAX_NODES: usize = 200_000;

/// A node with no attributes.
fn plain(op: &str, name: String, inputs: Vec<String>, outputs: Vec<String>) -> Node {
    Node {
        op: op.into(),
        domain: String::new(),
        name,
        inputs,
        outputs,
        attrs: Vec::new(),
    }
}

/// A new constant value holding `c`, named from `hint`.
fn constant(values: &mut Values, hint: &str, c: Const) -> String {
    let name = values.fresh(hint);
    values.set_const(&name, c);
    name
}

/// An int64 constant of shape `dims`.
fn ints(values: &mut Values, hint: &str, v: Vec<i64>, dims: Vec<usize>) -> Result<String, E> {
    let tensor = Tensor::from_values(dims, &v).map_err(|e| E::Internal(e.to_string()))?;
    Ok(constant(
        values,
        hint,
        Const {
            elem: elem::INT64,
            tensor,
        },
    ))
}

/// `value` with a new axis `axis` of length 1 (`Unsqueeze` in the form of
/// the graph's opset).
fn unsqueeze(
    values: &mut Values,
    name: String,
    value: &str,
    axis: i64,
    out: String,
) -> Result<Node, E> {
    let mut n = plain("Unsqueeze", name, vec![value.to_string()], vec![out]);
    if values.opset >= 13 {
        let axes = ints(values, "unroll.axes", vec![axis], vec![1])?;
        n.inputs.push(axes);
    } else {
        n.attrs.push(onnx_format::proto::AttributeProto {
            name: Some("axes".into()),
            r#type: Some(onnx_format::proto::attribute_proto::AttributeType::Ints as i32),
            ints: vec![axis],
            ..Default::default()
        });
    }
    Ok(n)
}

/// `Concat` of `parts` along `axis`.
fn concat(name: String, parts: Vec<String>, axis: i64, out: String) -> Node {
    let mut n = plain("Concat", name, parts, vec![out]);
    n.attrs.push(onnx_format::proto::AttributeProto {
        name: Some("axis".into()),
        r#type: Some(onnx_format::proto::attribute_proto::AttributeType::Int as i32),
        i: Some(axis),
        ..Default::default()
    });
    n
}

/// The body of `node` and its input and output names.
fn body(node: &Node) -> Result<(&GraphProto, Vec<String>, Vec<String>), E> {
    let g = node
        .attr("body")
        .and_then(|a| a.g.as_ref())
        .ok_or(E::NoBody)?;
    let names = |v: &[onnx_format::proto::ValueInfoProto]| -> Vec<String> {
        v.iter()
            .map(|i| i.name.clone().unwrap_or_default())
            .collect()
    };
    Ok((g, names(&g.input), names(&g.output)))
}

fn check_size(iterations: usize, body: &GraphProto) -> Result<(), E> {
    if iterations > MAX_ITERATIONS {
        return Err(E::TooManyIterations {
            iterations,
            limit: MAX_ITERATIONS,
        });
    }
    if iterations.saturating_mul(body.node.len().max(1)) > MAX_NODES {
        return Err(E::TooManyNodes {
            iterations,
            body: body.node.len(),
            limit: MAX_NODES,
        });
    }
    Ok(())
}

/// Whether the body gives back its condition unchanged: its first output
/// is its second input, or an `Identity` of it.
fn keeps_condition(g: &GraphProto, cond_in: &str, cond_out: &str) -> bool {
    if cond_in == cond_out {
        return true;
    }
    g.node.iter().any(|n| {
        n.op_type.as_deref() == Some("Identity")
            && n.output.first().map(String::as_str) == Some(cond_out)
            && n.input.first().map(String::as_str) == Some(cond_in)
    })
}

/// One iteration of an unrolled `Loop`: its nodes, and the name of the
/// condition it gives when the body computes it.
pub(crate) type Iteration = (Vec<Node>, Option<String>);

/// A `Loop` unrolled one iteration at a time: [`LoopUnroll::next`] gives
/// an iteration's nodes (and, when the body computes its condition, the
/// name of the condition it gives, which the caller lowers and reads: a
/// constant true goes on, false stops, anything else is refused);
/// [`LoopUnroll::finish`] the nodes that give the loop's outputs.
pub(crate) struct LoopUnroll<'n> {
    node: &'n Node,
    body: &'n GraphProto,
    ins: Vec<String>,
    /// Iterations at most: the trip count, or (a loop that may stop
    /// early without one) [`MAX_ITERATIONS`].
    limit: usize,
    /// The body computes its condition: read after each iteration.
    checked: bool,
    i: usize,
    state: Vec<String>,
    stacked: Vec<Vec<String>>,
}

impl<'n> LoopUnroll<'n> {
    /// Checks what unrolling `node` needs: a constant trip count (or a
    /// condition the body computes), a constant true condition to start.
    pub(crate) fn new(values: &Values, node: &'n Node) -> Result<Self, E> {
        let (g, ins, outs) = body(node)?;
        let n_state = node.inputs.len().saturating_sub(2);
        if ins.len() != n_state + 2 || outs.len() < n_state + 1 {
            return Err(E::LoopArity {
                ins: ins.len(),
                outs: outs.len(),
                state: n_state,
            });
        }
        let checked = !keeps_condition(g, &ins[1], &outs[0]);
        let trip = match node.input(0) {
            None if checked => None,
            None => {
                return Err(E::NeverStops);
            }
            Some(m) => match values.konst(m).and_then(Const::ints).as_deref() {
                Some([t]) => Some(*t),
                _ => {
                    return Err(E::TripCountAtRunTime {
                        name: m.to_string(),
                    });
                }
            },
        };
        // a constant false condition: no iteration
        let mut runs = true;
        if let Some(c) = node.input(1) {
            match values.konst(c).map(Const::values).as_deref() {
                Some([v]) => runs = *v != 0.0,
                _ => {
                    return Err(E::ConditionAtRunTime {
                        name: c.to_string(),
                    });
                }
            }
        }
        let limit = match trip {
            _ if !runs => 0,
            Some(t) => {
                let t = usize::try_from(t).map_err(|_| E::TripCount(t))?;
                // a loop that stops itself may say a huge trip count
                if checked { t.min(MAX_ITERATIONS) } else { t }
            }
            None => MAX_ITERATIONS,
        };
        let n_scan = outs.len() - 1 - n_state;
        if limit == 0 && n_scan > 0 {
            return Err(E::NoIteration);
        }
        check_size(limit, g)?;
        Ok(LoopUnroll {
            node,
            body: g,
            ins,
            limit,
            checked,
            i: 0,
            // none when the node has no loop-carried value (or no condition)
            state: node
                .inputs
                .get(2..)
                .map(<[String]>::to_vec)
                .unwrap_or_default(),
            stacked: vec![Vec::new(); n_scan],
        })
    }

    /// The nodes of the next iteration and the name of the condition it
    /// gives when the body computes it; `None` after the last.
    pub(crate) fn next(&mut self, values: &mut Values) -> Result<Option<Iteration>, E> {
        if self.i >= self.limit {
            if self.checked && self.limit == MAX_ITERATIONS {
                return Err(E::StillRunning {
                    limit: MAX_ITERATIONS,
                });
            }
            return Ok(None);
        }
        let (node, i, n_state) = (self.node, self.i, self.state.len());
        let prefix = format!("{}.iter{i}", node.name);
        let counter = ints(values, &format!("{prefix}.i"), vec![i as i64], Vec::new())?;
        let truth = Const {
            elem: elem::BOOL,
            tensor: Tensor::new(tensor_core::DType::Bool, Vec::<usize>::new(), vec![1u8])
                .map_err(|e| E::Internal(e.to_string()))?
                .into_static(),
        };
        let cond = constant(values, &format!("{prefix}.cond"), truth);
        let mut inputs = vec![(self.ins[0].clone(), counter), (self.ins[1].clone(), cond)];
        inputs.extend(
            self.ins[2..]
                .iter()
                .cloned()
                .zip(self.state.iter().cloned()),
        );
        // a loop of known length names its last iteration's state as its
        // outputs; one that stops itself passes them on at the end
        let last = !self.checked && i + 1 == self.limit;
        let cond_out = if self.checked {
            values.fresh(&format!("{prefix}.cond_out"))
        } else {
            String::new()
        };
        let mut names = vec![cond_out.clone()];
        for j in 0..n_state {
            names.push(match (last, node.outputs.get(j)) {
                (true, Some(o)) if !o.is_empty() => o.clone(),
                _ => values.fresh(&format!("{prefix}.state{j}")),
            });
        }
        for k in 0..self.stacked.len() {
            names.push(values.fresh(&format!("{prefix}.scan{k}")));
        }
        let mut nodes = inline_graph(values, self.body, "body", &prefix, &inputs, &names)?;
        self.state = names[1..=n_state].to_vec();
        for (k, s) in self.stacked.iter_mut().enumerate() {
            let each = names[1 + n_state + k].clone();
            let out = values.fresh(&format!("{prefix}.stack{k}"));
            nodes.push(unsqueeze(
                values,
                format!("{prefix}.unsqueeze{k}"),
                &each,
                0,
                out.clone(),
            )?);
            s.push(out);
        }
        self.i += 1;
        Ok(Some((nodes, self.checked.then_some(cond_out))))
    }

    /// The nodes that give the loop's outputs from the iterations made.
    pub(crate) fn finish(self) -> Result<Vec<Node>, E> {
        let node = self.node;
        let n_state = self.state.len();
        let mut nodes = Vec::new();
        if self.checked || self.i == 0 {
            for (j, o) in node.outputs.iter().take(n_state).enumerate() {
                if !o.is_empty() {
                    nodes.push(plain(
                        "Identity",
                        format!("{}.state{j}", node.name),
                        vec![self.state[j].clone()],
                        vec![o.clone()],
                    ));
                }
            }
        }
        for (k, parts) in self.stacked.into_iter().enumerate() {
            if let Some(o) = node.outputs.get(n_state + k).filter(|o| !o.is_empty()) {
                if parts.is_empty() {
                    return Err(E::NothingStacked);
                }
                nodes.push(concat(
                    format!("{}.concat{k}", node.name),
                    parts,
                    0,
                    o.clone(),
                ));
            }
        }
        Ok(nodes)
    }
}

/// The integer list attribute `key` of `node`, or `n` zeros.
fn axes_attr(node: &Node, key: &str, n: usize) -> Vec<i64> {
    node.attr(key)
        .map(|a| a.ints.clone())
        .filter(|v| v.len() == n)
        .unwrap_or_else(|| vec![0; n])
}

/// A `Gather` of element `index` (a new constant) along `axis` of `value`,
/// into `out`.
fn gather_at(
    values: &mut Values,
    (name, hint): (String, &str),
    value: &str,
    (index, axis): (usize, i64),
    out: String,
) -> Result<Node, E> {
    let index = ints(values, hint, vec![index as i64], Vec::new())?;
    let mut gather = plain("Gather", name, vec![value.to_string(), index], vec![out]);
    gather.attrs.push(onnx_format::proto::AttributeProto {
        name: Some("axis".into()),
        r#type: Some(onnx_format::proto::attribute_proto::AttributeType::Int as i32),
        i: Some(axis),
        ..Default::default()
    });
    Ok(gather)
}

/// One `Scan` run over its sequences: the body, its input names, the
/// sequences (each scanned along its axis, in its direction), the initial
/// state, and where its outputs go.
struct ScanRun<'g> {
    body: &'g GraphProto,
    ins: &'g [String],
    /// The prefix of the names of the nodes made.
    base: String,
    state: Vec<String>,
    /// Each sequence, its scan axis and whether it is read backwards.
    seqs: Vec<(String, i64, bool)>,
    steps: usize,
    /// Each stacked output's axis and whether it is stacked backwards.
    outs: Vec<(i64, bool)>,
    /// The names of the final states and of the stacked outputs (an empty
    /// name: a new name for a state, no output for a stacked one).
    names: Vec<String>,
}

/// The nodes of `run`: its body once per step, each reading the state
/// the step before gave and element `t` of each sequence, then each
/// stacked output's `Concat`.
fn scan_steps(values: &mut Values, run: &ScanRun<'_>) -> Result<Vec<Node>, E> {
    let (n_state, n_out, steps) = (run.state.len(), run.outs.len(), run.steps);
    let mut state = run.state.clone();
    let mut stacked: Vec<Vec<String>> = vec![Vec::new(); n_out];
    let mut nodes = Vec::new();
    for t in 0..steps {
        let prefix = format!("{}.step{t}", run.base);
        let mut inputs: Vec<(String, String)> = run.ins[..n_state]
            .iter()
            .cloned()
            .zip(state.iter().cloned())
            .collect();
        for (k, (seq, axis, back)) in run.seqs.iter().enumerate() {
            let at = if *back { steps - 1 - t } else { t };
            let name = (format!("{prefix}.gather{k}"), &*format!("{prefix}.t"));
            // the index is named before the element
            let mut g = gather_at(values, name, seq, (at, *axis), String::new())?;
            let element = values.fresh(&format!("{prefix}.in{k}"));
            g.outputs = vec![element.clone()];
            nodes.push(g);
            inputs.push((run.ins[n_state + k].clone(), element));
        }
        let last = t + 1 == steps;
        let mut names = Vec::with_capacity(n_state + n_out);
        for j in 0..n_state {
            names.push(match (last, run.names.get(j)) {
                (true, Some(o)) if !o.is_empty() => o.clone(),
                _ => values.fresh(&format!("{prefix}.state{j}")),
            });
        }
        for k in 0..n_out {
            names.push(values.fresh(&format!("{prefix}.out{k}")));
        }
        nodes.extend(inline_graph(
            values, run.body, "body", &prefix, &inputs, &names,
        )?);
        state = names[..n_state].to_vec();
        for (k, s) in stacked.iter_mut().enumerate() {
            let out = values.fresh(&format!("{prefix}.stack{k}"));
            // the axis of the element's rank + 1 the stacked output has
            let each = &names[n_state + k];
            let un = format!("{prefix}.unsqueeze{k}");
            nodes.push(unsqueeze(values, un, each, run.outs[k].0, out.clone())?);
            s.push(out);
        }
    }
    for (k, mut parts) in stacked.into_iter().enumerate() {
        let (axis, back) = run.outs[k];
        if back {
            parts.reverse();
        }
        if let Some(o) = run.names.get(n_state + k).filter(|o| !o.is_empty()) {
            let name = format!("{}.concat{k}", run.base);
            nodes.push(concat(name, parts, axis, o.clone()));
        }
    }
    Ok(nodes)
}

/// The static length of axis `axis` of `seq` (negative: from the end),
/// and that axis counted from the front.
fn seq_len(values: &Values, seq: &str, axis: i64) -> Result<(i64, i64), E> {
    let unknown = || E::UnknownLength {
        name: seq.to_string(),
    };
    let shape = values.shape(seq).map_err(|_| unknown())?;
    let a = if axis < 0 {
        axis + shape.len() as i64
    } else {
        axis
    };
    let d = usize::try_from(a)
        .ok()
        .and_then(|a| shape.get(a))
        .copied()
        .filter(|d| *d >= 0)
        .ok_or_else(unknown)?;
    Ok((d, a))
}

/// The one length of the sequences `seqs` along `axes`, and each axis
/// counted from the front.
fn common_len(values: &Values, seqs: &[String], axes: &[i64]) -> Result<(usize, Vec<i64>), E> {
    let mut len = None;
    let mut out = Vec::with_capacity(seqs.len());
    for (seq, &axis) in seqs.iter().zip(axes) {
        let (d, a) = seq_len(values, seq, axis)?;
        if len.is_some_and(|l| l != d) {
            return Err(E::DifferentLengths);
        }
        len = Some(d);
        out.push(a);
    }
    let steps =
        usize::try_from(len.ok_or(E::NoSequence)?).map_err(|e| E::Internal(e.to_string()))?;
    if steps == 0 {
        return Err(E::EmptySequences);
    }
    Ok((steps, out))
}

/// The numbers of sequences, states and stacked outputs of the `Scan`
/// `node`, whose body has `body` inputs and outputs; `lead` inputs come
/// before the states (opset 8's sequence lengths).
fn scan_counts(
    node: &Node,
    (body_ins, body_outs): (usize, usize),
    lead: usize,
) -> Result<(usize, usize, usize), E> {
    let n_in = node
        .attr("num_scan_inputs")
        .and_then(|a| a.i)
        .and_then(|v| usize::try_from(v).ok())
        .ok_or(E::NoScanInputs)?;
    let n_state = n_in
        .checked_add(lead)
        .and_then(|n| node.inputs.len().checked_sub(n))
        .ok_or(E::FewerInputs)?;
    if body_ins.checked_add(lead) != Some(node.inputs.len()) || body_outs < n_state {
        return Err(E::ScanArity);
    }
    Ok((n_in, n_state, body_outs - n_state))
}

/// The nodes a `Scan` becomes: its body once per element of its
/// sequences, whose length along their scan axis is static (opset 8: once
/// per element of each item of the batch axis, the sequence lengths absent
/// or the full length).
pub(crate) fn lower_scan(values: &mut Values, node: &Node) -> Result<Vec<Node>, E> {
    if values.opset < 9 {
        return lower_scan8(values, node);
    }
    let (g, ins, outs) = body(node)?;
    let (n_in, n_state, n_out) = scan_counts(node, (ins.len(), outs.len()), 0)?;
    let in_axes = axes_attr(node, "scan_input_axes", n_in);
    let in_dirs = axes_attr(node, "scan_input_directions", n_in);
    let out_axes = axes_attr(node, "scan_output_axes", n_out);
    let out_dirs = axes_attr(node, "scan_output_directions", n_out);
    let seqs = &node.inputs[n_state..];
    let (steps, axes) = common_len(values, seqs, &in_axes)?;
    check_size(steps, g)?;
    let names: Vec<String> = (0..outs.len())
        .map(|j| node.outputs.get(j).cloned().unwrap_or_default())
        .collect();
    let run = ScanRun {
        body: g,
        ins: &ins,
        base: node.name.clone(),
        state: node.inputs[..n_state].to_vec(),
        seqs: (seqs.iter().cloned().zip(axes))
            .zip(&in_dirs)
            .map(|((s, a), d)| (s, a, *d == 1))
            .collect(),
        steps,
        outs: out_axes
            .iter()
            .zip(&out_dirs)
            .map(|(a, d)| (*a, *d == 1))
            .collect(),
        names,
    };
    scan_steps(values, &run)
}

/// The opset-8 `Scan`: input 0 the sequence lengths (absent, or constant
/// and all the full length), every state, sequence and output with a
/// batch axis 0, the sequences scanned along axis 1 in their `directions`.
/// Each item of the batch is scanned on its own (its states and sequences
/// taken by a `Gather` along axis 0), and the results stacked on axis 0.
fn lower_scan8(values: &mut Values, node: &Node) -> Result<Vec<Node>, E> {
    let (g, ins, outs) = body(node)?;
    let (n_in, n_state, n_out) = scan_counts(node, (ins.len(), outs.len()), 1)?;
    let dirs = axes_attr(node, "directions", n_in);
    let seqs = &node.inputs[1 + n_state..];
    let (steps, _) = common_len(values, seqs, &vec![1; n_in])?;
    let (batch, _) = common_len(values, &node.inputs[1..], &vec![0; node.inputs.len() - 1])
        .map_err(|e| E::AlongBatch(Box::new(e)))?;
    if let Some(l) = node.input(0) {
        match values.konst(l).and_then(Const::ints) {
            Some(v) if v.len() == batch && v.iter().all(|&x| x == steps as i64) => {}
            Some(_) => {
                return Err(E::PartialLengths {
                    name: l.to_string(),
                    steps,
                });
            }
            None => {
                return Err(E::LengthsAtRunTime {
                    name: l.to_string(),
                    steps,
                });
            }
        }
    }
    check_size(batch.saturating_mul(steps), g)?;
    let mut nodes = Vec::new();
    let mut per_item: Vec<Vec<String>> = vec![Vec::new(); outs.len()];
    for b in 0..batch {
        let base = format!("{}.item{b}", node.name);
        let take = |values: &mut Values, nodes: &mut Vec<Node>, k: usize, v: &str| {
            let out = values.fresh(&format!("{base}.in{k}"));
            let name = (format!("{base}.gather{k}"), &*format!("{base}.b"));
            nodes.push(gather_at(values, name, v, (b, 0), out.clone())?);
            Ok::<_, E>(out)
        };
        let mut items = Vec::with_capacity(node.inputs.len() - 1);
        for (k, v) in node.inputs[1..].iter().enumerate() {
            items.push(take(values, &mut nodes, k, v)?);
        }
        let names: Vec<String> = (0..outs.len())
            .map(|j| values.fresh(&format!("{base}.out{j}")))
            .collect();
        let run = ScanRun {
            body: g,
            ins: &ins,
            base: base.clone(),
            state: items[..n_state].to_vec(),
            seqs: (items[n_state..].iter().zip(&dirs))
                .map(|(s, d)| (s.clone(), 0, *d == 1))
                .collect(),
            steps,
            outs: vec![(0, false); n_out],
            names: names.clone(),
        };
        nodes.extend(scan_steps(values, &run)?);
        for (j, name) in names.into_iter().enumerate() {
            let out = values.fresh(&format!("{base}.stack{j}"));
            let un = format!("{base}.unsqueeze{j}");
            nodes.push(unsqueeze(values, un, &name, 0, out.clone())?);
            per_item[j].push(out);
        }
    }
    for (j, parts) in per_item.into_iter().enumerate() {
        if let Some(o) = node.outputs.get(j).filter(|o| !o.is_empty()) {
            let name = format!("{}.batch{j}", node.name);
            nodes.push(concat(name, parts, 0, o.clone()));
        }
    }
    Ok(nodes)
}
