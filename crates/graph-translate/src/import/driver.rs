//! The part of an import both targets share: the values a lowering knows
//! ([`Values`]: constants, static shapes, element types, fresh names), the
//! refusal pre-scan, and the walk that rewrites old-opset nodes, folds
//! constants and lowers the rest through the target's table
//! ([`Target`]). `nnabla_cx` and `tennis_cx` hold what differs: how a
//! value becomes a target variable or node, and how the model is built.

use std::collections::{HashMap, HashSet};

use super::error::ControlFlowError;
use super::onnx_graph::{self, Const, Node, OnnxGraph, elem};
use super::{LowerError, Reason, Refusal, Refusals, dims, fold, inline_if, legacy, unroll};

/// A lowering's result: a refusal reason ([`LowerError`], becomes `Op (reason)`
/// in the error).
pub(crate) type Lowered = Result<(), LowerError>;

/// What a lowering knows of the ONNX values: constants (initializers and
/// folds), static shapes and element types of computed values, and the
/// names taken (for fresh ones).
pub(crate) struct Values {
    /// The model's opset (of the default domain).
    pub opset: i64,
    pub(super) consts: HashMap<String, Const>,
    pub(super) shapes: HashMap<String, Vec<i64>>,
    pub(super) elems: HashMap<String, i32>,
    names: HashSet<String>,
    n: usize,
}

impl Values {
    /// The values of graph `g` before any node is lowered: its constants,
    /// and every name it uses taken.
    pub(super) fn new(g: &OnnxGraph) -> Self {
        let mut names: HashSet<String> = g.consts.keys().cloned().collect();
        for n in &g.nodes {
            names.extend(n.outputs.iter().cloned());
        }
        names.extend(g.inputs.iter().map(|i| i.name.clone()));
        Values {
            opset: g.opset,
            consts: g.consts.clone(),
            shapes: HashMap::new(),
            elems: HashMap::new(),
            names,
            n: 0,
        }
    }

    /// The constant `name`, if it is one.
    pub fn konst(&self, name: &str) -> Option<&Const> {
        self.consts.get(name)
    }

    /// The constant input `i` of `node` as integers.
    pub fn const_ints(&self, node: &Node, i: usize) -> Option<Vec<i64>> {
        node.input(i)
            .and_then(|n| self.konst(n))
            .and_then(Const::ints)
    }

    /// The `axes` of `node`: its attribute before opset `from`, its
    /// constant input 1 from then on (none: empty).
    pub fn axes(&self, node: &Node, from: i64) -> Result<Vec<i64>, LowerError> {
        if self.opset < from {
            return Ok(node.ints("axes").unwrap_or_default());
        }
        match node.input(1) {
            Some(_) => self
                .const_ints(node, 1)
                .ok_or(LowerError::NotConstant { what: "axes" }),
            None => Ok(vec![]),
        }
    }

    /// The constant input `i` of `node` as floats.
    pub fn const_floats(&self, node: &Node, i: usize) -> Option<Vec<f64>> {
        node.input(i).and_then(|n| self.konst(n)).map(Const::values)
    }

    /// The static shape of a value (`-1` for the batch dimension).
    pub fn shape(&self, name: &str) -> Result<Vec<i64>, LowerError> {
        if let Some(c) = self.consts.get(name) {
            return Ok(c.dims_i64());
        }
        self.shapes
            .get(name)
            .cloned()
            .ok_or_else(|| LowerError::UnknownShape {
                name: name.to_string(),
            })
    }

    /// The shape of input `i` of `node`.
    pub fn in_shape(&self, node: &Node, i: usize) -> Result<Vec<i64>, LowerError> {
        self.shape(node.input(i).ok_or("missing input")?)
    }

    /// The element type of a value (f32 when nothing says otherwise).
    pub fn elem(&self, name: &str) -> i32 {
        if let Some(c) = self.consts.get(name) {
            return c.elem;
        }
        self.elems.get(name).copied().unwrap_or(elem::FLOAT)
    }

    /// A fresh name derived from `hint`.
    pub fn fresh(&mut self, hint: &str) -> String {
        loop {
            self.n += 1;
            let name = format!("{hint}__{}", self.n);
            if self.names.insert(name.clone()) {
                return name;
            }
        }
    }

    /// Takes `name` for a value, when no other value has it.
    pub(super) fn take_name(&mut self, name: &str) -> bool {
        self.names.insert(name.to_string())
    }

    /// Records the element type of a value computed here (non-f32 results
    /// such as integer indices, which f32 lowerings then refuse).
    pub fn set_elem(&mut self, name: &str, e: i32) {
        self.elems.insert(name.to_string(), e);
    }

    /// Records a value as holding constant `c` (a fold, or an identity).
    pub fn set_const(&mut self, name: &str, c: Const) {
        self.consts.insert(name.to_string(), c);
    }
}

/// An import target: what its table takes, and the lowering of
/// one node through that table. The context implementing it holds the
/// [`Values`] (and derefs to them).
pub(crate) trait Target {
    /// Whether the target folds the operators of
    /// [`fold::Folds::OnRequest`] too.
    const FOLD_MORE: bool;

    /// The values the lowering knows.
    fn values(&self) -> &Values;

    /// The values the lowering knows, to record folds.
    fn values_mut(&mut self) -> &mut Values;

    /// The opsets the table takes operator `op` at, `None` when it has no
    /// entry for it.
    fn opsets(op: &str) -> Option<(i64, i64)>;

    /// Why the target refuses operator `op` outright, when it names a
    /// reason.
    fn refusal_reason(_op: &str) -> Option<&'static str> {
        None
    }

    /// Lowers `node` through the table; `None` when it has no entry.
    fn lower(&mut self, node: &Node) -> Option<Lowered>;
}

/// Every node of `g` (but those of `skip`, by index) the target refuses
/// before anything is lowered: other domains, subgraphs, operators that do
/// not exist at a legacy opset, opsets outside a table entry's range, and
/// operators neither in the table nor foldable.
pub(crate) fn prescan<T: Target>(g: &OnnxGraph, skip: &HashSet<usize>) -> Refusals {
    let mut refusals = Refusals::default();
    for (k, n) in g.nodes.iter().enumerate() {
        if !skip.contains(&k)
            && let Some(why) = refusal::<T>(g, n)
        {
            refusals.add(why);
        }
    }
    refusals
}

/// Why the target refuses node `n` before anything is lowered (an `If`
/// is decided when its condition is known).
fn refusal<T: Target>(g: &OnnxGraph, n: &Node) -> Option<Refusal> {
    if !n.domain.is_empty() && n.domain != "ai.onnx" {
        Some(Refusal::op(&n.op, Reason::Domain(n.domain.clone())))
    } else if matches!(n.op.as_str(), "If" | "Loop" | "Scan") {
        None
    } else if onnx_graph::has_subgraph(n) {
        Some(Refusal::op(&n.op, Reason::Subgraphs))
    } else if let Some(Err(why)) = g.legacy_opset.map(|o| legacy::exists_at(&n.op, o)) {
        Some(Refusal::op(&n.op, why))
    } else if let Some((since, until)) = T::opsets(&n.op) {
        (g.opset < since || g.opset > until).then(|| Refusal::op(&n.op, Reason::Opset(g.opset)))
    } else if let Some(why) = T::refusal_reason(&n.op) {
        Some(Refusal::op(&n.op, Reason::Target(why)))
    } else if !fold::folded_by_all(&n.op) {
        Some(Refusal::bare(&n.op))
    } else {
        None
    }
}

/// Lowers the `If` `node`: the branch its constant condition takes is
/// inlined and lowered node by node (each checked as [`prescan`] checks
/// the graph's); a condition computed at run time: both branches and a
/// `Where` per output, when the branches' outputs have one shape each;
/// else it is refused, naming the input `--input-value` would fix.
fn lower_if<T: Target>(
    cx: &mut T,
    g: &OnnxGraph,
    node: &Node,
    refusals: &mut Refusals,
    poisoned: &mut HashSet<String>,
) {
    let cond = node.input(0).and_then(|c| cx.values().konst(c)).cloned();
    let nodes = match cond {
        Some(c) => inline_if::inline(cx.values_mut(), node, &c).map(|n| (n, Vec::new())),
        None => inline_if::select(cx.values_mut(), node),
    };
    let (nodes, pairs) = match nodes {
        Ok(n) => n,
        Err(why) => {
            refusals.op("If", why);
            poisoned.extend(node.outputs.iter().cloned());
            return;
        }
    };
    // the branches' nodes, then the selects (the last `pairs.len()` nodes)
    let (branches, selects) = nodes.split_at(nodes.len() - pairs.len());
    for n in branches {
        lower_checked(cx, g, n, refusals, poisoned);
    }
    for (n, (t, e)) in selects.iter().zip(&pairs) {
        if poisoned.contains(t) || poisoned.contains(e) {
            poisoned.extend(n.outputs.iter().cloned());
            continue;
        }
        let (ts, es) = (cx.values().shape(t).ok(), cx.values().shape(e).ok());
        if ts.is_none() || ts != es {
            let why = ControlFlowError::BranchShapes {
                output: n.outputs[0].clone(),
                then_shape: ts,
                else_shape: es,
                inputs: inline_if::condition_inputs(g, node),
            };
            refusals.op("If", why);
            poisoned.extend(n.outputs.iter().cloned());
            continue;
        }
        lower_checked(cx, g, n, refusals, poisoned);
    }
}

/// Lowers a `Loop` with a constant trip count or a `Scan` over sequences
/// of static length as its body unrolled ([`unroll`]), each node checked
/// as [`prescan`] checks the graph's; else it is refused, saying why.
fn lower_unrolled<T: Target>(
    cx: &mut T,
    g: &OnnxGraph,
    node: &Node,
    refusals: &mut Refusals,
    poisoned: &mut HashSet<String>,
) {
    if node.op == "Loop" {
        return lower_loop(cx, g, node, refusals, poisoned);
    }
    match unroll::lower_scan(cx.values_mut(), node) {
        Ok(nodes) => {
            for n in &nodes {
                lower_checked(cx, g, n, refusals, poisoned);
            }
        }
        Err(why) => {
            refusals.add(Refusal::op(&node.op, why).named(&node.name));
            poisoned.extend(node.outputs.iter().cloned());
        }
    }
}

/// Lowers a `Loop` one iteration at a time ([`unroll::LoopUnroll`]): a
/// body that computes its condition goes on while that condition lowers to
/// a constant true.
fn lower_loop<T: Target>(
    cx: &mut T,
    g: &OnnxGraph,
    node: &Node,
    refusals: &mut Refusals,
    poisoned: &mut HashSet<String>,
) {
    let refuse =
        |why: ControlFlowError, refusals: &mut Refusals, poisoned: &mut HashSet<String>| {
            refusals.add(Refusal::op("Loop", why).named(&node.name));
            poisoned.extend(node.outputs.iter().cloned());
        };
    let mut u = match unroll::LoopUnroll::new(cx.values(), node) {
        Ok(u) => u,
        Err(why) => return refuse(why, refusals, poisoned),
    };
    loop {
        let (nodes, cond) = match u.next(cx.values_mut()) {
            Ok(Some(step)) => step,
            Ok(None) => break,
            Err(why) => return refuse(why, refusals, poisoned),
        };
        for n in &nodes {
            lower_checked(cx, g, n, refusals, poisoned);
        }
        let Some(c) = cond else { continue };
        if poisoned.contains(&c) {
            poisoned.extend(node.outputs.iter().cloned());
            return;
        }
        match cx.values().konst(&c).map(Const::values).as_deref() {
            Some([v]) if *v != 0.0 => {}
            Some([_]) => break,
            _ => {
                return refuse(ControlFlowError::BodyConditionAtRunTime, refusals, poisoned);
            }
        }
    }
    match u.finish() {
        Ok(nodes) => {
            for n in &nodes {
                lower_checked(cx, g, n, refusals, poisoned);
            }
        }
        Err(why) => refuse(why, refusals, poisoned),
    }
}

/// Lowers a node an `If` became, checked as [`prescan`] checks the graph's.
fn lower_checked<T: Target>(
    cx: &mut T,
    g: &OnnxGraph,
    n: &Node,
    refusals: &mut Refusals,
    poisoned: &mut HashSet<String>,
) {
    match refusal::<T>(g, n) {
        Some(why) => {
            refusals.add(why);
            poisoned.extend(n.outputs.iter().cloned());
        }
        None => lower_original(cx, g, n, refusals, poisoned),
    }
}

/// Rewrites node `orig` of `g` to its opset-7 meaning and folds or lowers
/// the nodes it becomes; a node that fails is refused and its outputs
/// poisoned (the nodes reading them are skipped, not refused again).
pub(crate) fn lower_original<T: Target>(
    cx: &mut T,
    g: &OnnxGraph,
    orig: &Node,
    refusals: &mut Refusals,
    poisoned: &mut HashSet<String>,
) {
    let v = cx.values();
    let nodes = match legacy::rewrite(g, orig, poisoned, &|n| v.shape(n).ok(), &|n| {
        v.konst(n).cloned()
    }) {
        Ok(n) => n,
        Err(why) => {
            refusals.op(&orig.op, why);
            poisoned.extend(orig.outputs.iter().cloned());
            return;
        }
    };
    for node in nodes.iter() {
        lower_node(cx, g, node, refusals, poisoned);
    }
}

/// Folds or lowers one (opset-7 or newer) node; a node that fails is
/// refused and its outputs poisoned.
fn lower_node<T: Target>(
    cx: &mut T,
    g: &OnnxGraph,
    node: &Node,
    refusals: &mut Refusals,
    poisoned: &mut HashSet<String>,
) {
    if node
        .inputs
        .iter()
        .any(|i| !i.is_empty() && poisoned.contains(i))
    {
        poisoned.extend(node.outputs.iter().cloned());
        return;
    }
    // every lowering writes its first output (as `onnx_graph::load`
    // checks of the model's nodes; these may come from a function body or
    // a rewrite)
    let recurrent = matches!(node.op.as_str(), "RNN" | "LSTM" | "GRU");
    if (recurrent && node.outputs.iter().all(String::is_empty))
        || (!recurrent && node.outputs.first().is_none_or(String::is_empty))
    {
        refusals.op(&node.op, Reason::NoFirstOutput);
        return;
    }
    if node.op == "If" {
        return lower_if(cx, g, node, refusals, poisoned);
    }
    if node.op == "Loop" || node.op == "Scan" {
        return lower_unrolled(cx, g, node, refusals, poisoned);
    }
    let v = cx.values();
    let folded = fold::fold_with(
        node,
        g.opset,
        &|n| v.consts.get(n).cloned(),
        &|n| v.shapes.get(n).cloned(),
        T::FOLD_MORE,
    );
    let res = match folded {
        Some(Ok(cs)) => {
            for (o, c) in node.outputs.iter().zip(cs) {
                cx.values_mut().set_const(o, c);
            }
            Ok(())
        }
        Some(Err(e)) => Err(e),
        None => cx
            .lower(node)
            .unwrap_or_else(|| Err("its inputs are computed at run time".into())),
    };
    let res = res.and_then(|()| outputs_bounded(cx.values(), node));
    if let Err(why) = res {
        refusals.op(&node.op, why);
        poisoned.extend(node.outputs.iter().cloned());
    }
}

/// Refuses a node whose outputs have a shape past [`dims::check_shape`]'s
/// bounds (a hostile file's sizes), so that the lowerings reading them
/// can multiply their dimensions.
fn outputs_bounded(v: &Values, node: &Node) -> Lowered {
    for o in node.outputs.iter().filter(|o| !o.is_empty()) {
        if let Ok(s) = v.shape(o) {
            dims::check_shape(&s)?;
        }
    }
    Ok(())
}

/// numpy broadcasting of two static shapes (`-1` batch allowed where the
/// other side is 1 or also `-1`).
pub(crate) fn broadcast_shapes(a: &[i64], b: &[i64]) -> Result<Vec<i64>, LowerError> {
    let r = a.len().max(b.len());
    let get = |s: &[i64], i: usize| {
        if i + s.len() >= r {
            s[i + s.len() - r]
        } else {
            1
        }
    };
    (0..r)
        .map(|i| {
            let (x, y) = (get(a, i), get(b, i));
            if x == y || y == 1 {
                Ok(x)
            } else if x == 1 {
                Ok(y)
            } else {
                Err(LowerError::NoBroadcast {
                    a: onnx_graph::dims_text(a),
                    b: onnx_graph::dims_text(b),
                })
            }
        })
        .collect()
}
