//! ONNX → TenniS: the lowering context (the TenniS [`Target`] of the
//! shared driver, [`super::driver`], which walks the graph, folds constants
//! and dispatches through [`super::tennis_table`]) and the building of the
//! TenniS module (`<param>` inputs, `<const>` nodes, operators).

use std::collections::{HashMap, HashSet};

use bubble_module::{Module, ModuleBuilder, NodeId, Packed};
use tensor_core::{DType, Tensor};

use super::LowerError;
use super::driver::{self, Target, Values};
use super::onnx_graph::{self, Node, OnnxGraph, elem};
use super::{
    ImportError, ImportOptions, ImportTarget, Reason, Refusal, Refusals, tennis_ops_range,
    tennis_table,
};

pub(crate) use super::driver::{Lowered, broadcast_shapes as broadcast};

/// Operator parameters (key, value).
pub(crate) type Params = Vec<(String, Packed<'static>)>;

/// The state of one TenniS lowering: the values it knows (it derefs to
/// them) and the module it builds.
pub(crate) struct Tx {
    v: Values,
    b: ModuleBuilder<'static>,
    ids: HashMap<String, NodeId>,
    node_names: HashMap<usize, String>,
    /// Set while a dtype-agnostic lowering runs: [`Tx::fin`] then takes
    /// every element type TenniS has.
    any_dtype: bool,
    /// Node indices that depend on a module input.
    live: HashSet<usize>,
    /// Output names no computing node may take (outputs tied to an input
    /// by [`Tx::tie_to_input`], whose own node takes the name).
    avoid: HashSet<String>,
    /// The input of each `Softplus` output lowered so far: a `Tanh` of one
    /// is computed from that input (`tennis_ops_act::tanh_softplus`).
    pub(crate) softplus_of: HashMap<String, String>,
    /// `Softplus` outputs only `Tanh`s read ([`softplus_for_tanh_only`]):
    /// no `softplus` is written for them.
    pub(crate) softplus_unread: HashSet<String>,
}

/// The outputs of the graph's `Softplus` nodes that only `Tanh` nodes read
/// (not graph outputs); none when a node has a subgraph, whose reads of
/// outer values its inputs do not list.
fn softplus_for_tanh_only(g: &OnnxGraph) -> HashSet<String> {
    if g.nodes.iter().any(onnx_graph::has_subgraph) {
        return HashSet::new();
    }
    let mut readers: HashMap<&str, Vec<&str>> = HashMap::new();
    for n in &g.nodes {
        for i in n.inputs.iter().filter(|i| !i.is_empty()) {
            readers.entry(i.as_str()).or_default().push(n.op.as_str());
        }
    }
    g.nodes
        .iter()
        .filter(|n| n.op == "Softplus")
        .filter_map(|n| n.outputs.first())
        .filter(|o| !g.outputs.contains(o))
        .filter(|o| {
            readers
                .get(o.as_str())
                .is_some_and(|r| r.iter().all(|&op| op == "Tanh"))
        })
        .cloned()
        .collect()
}

impl std::ops::Deref for Tx {
    type Target = Values;
    fn deref(&self) -> &Values {
        &self.v
    }
}

impl std::ops::DerefMut for Tx {
    fn deref_mut(&mut self) -> &mut Values {
        &mut self.v
    }
}

impl Target for Tx {
    const FOLD_MORE: bool = true;

    fn values(&self) -> &Values {
        &self.v
    }

    fn values_mut(&mut self) -> &mut Values {
        &mut self.v
    }

    fn opsets(op: &str) -> Option<(i64, i64)> {
        tennis_table::entry(op).map(|e| e.row.opsets)
    }

    fn refusal_reason(op: &str) -> Option<&'static str> {
        tennis_table::refusal_reason(op)
    }

    /// A dtype-agnostic lowering takes every element type TenniS has, and
    /// its outputs keep the type of its first input.
    fn lower(&mut self, node: &Node) -> Option<Lowered> {
        let e = tennis_table::entry(&node.op)?;
        let agnostic = e.any_dtype;
        let e0 = node.input(0).map(|n| self.elem(n));
        let lower = e.lower?;
        self.any_dtype = agnostic;
        let r = (lower.0)(self, node);
        self.any_dtype = false;
        if let (true, Ok(()), Some(e0)) = (agnostic, &r, e0) {
            for o in node.outputs.iter().filter(|o| !o.is_empty()) {
                if self.ids.contains_key(o) {
                    self.v.elems.insert(o.clone(), e0);
                }
            }
        }
        Some(r)
    }
}

/// The TenniS `DTYPE` code of an ONNX element type this import computes
/// with (f32, f64, the integers and bool), `None` for the others.
pub(crate) fn ts_code(e: i32) -> Option<i32> {
    Some(match e {
        elem::FLOAT => 10,
        elem::DOUBLE => 11,
        elem::INT32 => 5,
        elem::INT64 => 7,
        elem::BOOL => 21,
        2 => 2,  // UINT8
        3 => 1,  // INT8
        4 => 4,  // UINT16
        5 => 3,  // INT16
        12 => 6, // UINT32
        13 => 8, // UINT64
        _ => return None,
    })
}

/// Whether ONNX element type `e` is an integer type.
pub(crate) fn is_int(e: i32) -> bool {
    matches!(e, 2 | 3 | 4 | 5 | 6 | 7 | 12 | 13)
}

/// An int32 vector parameter.
pub(crate) fn p_ints(v: &[i64]) -> Packed<'static> {
    let v: Vec<i32> = v.iter().map(|&x| x as i32).collect();
    Packed::from(
        Tensor::from_values::<i32>([v.len()], &v)
            .expect("1-D")
            .into_static(),
    )
}

/// An int32 `[4, 2]` padding parameter (TenniS's `padding`).
pub(crate) fn p_pad(v: &[i64]) -> Packed<'static> {
    let v: Vec<i32> = v.iter().map(|&x| x as i32).collect();
    Packed::from(
        Tensor::from_values::<i32>([4, 2], &v)
            .expect("4x2")
            .into_static(),
    )
}

/// An int32 scalar parameter.
pub(crate) fn p_int(v: i64) -> Packed<'static> {
    Packed::from(
        Tensor::from_values::<i32>([], &[v as i32])
            .expect("0-D")
            .into_static(),
    )
}

/// A float32 scalar parameter.
pub(crate) fn p_float(v: f32) -> Packed<'static> {
    Packed::from(
        Tensor::from_values::<f32>([], &[v])
            .expect("0-D")
            .into_static(),
    )
}

/// A boolean scalar parameter.
pub(crate) fn p_bool(v: bool) -> Packed<'static> {
    Packed::from(
        Tensor::new(DType::Bool, Vec::<usize>::new(), vec![u8::from(v)])
            .expect("0-D")
            .into_static(),
    )
}

/// A string parameter.
pub(crate) fn p_str(s: &str) -> Packed<'static> {
    Packed::string(s)
}

/// Shorthand for a parameter list entry.
pub(crate) fn kv(k: &str, v: Packed<'static>) -> (String, Packed<'static>) {
    (k.to_string(), v)
}

impl Tx {
    fn new(g: &OnnxGraph) -> Self {
        Tx {
            v: Values::new(g),
            b: ModuleBuilder::new(),
            ids: HashMap::new(),
            node_names: HashMap::new(),
            any_dtype: false,
            live: HashSet::new(),
            avoid: HashSet::new(),
            softplus_of: HashMap::new(),
            softplus_unread: softplus_for_tanh_only(g),
        }
    }

    /// A `<const>` node holding `vals` (f32) with `dims`.
    pub fn const_f32(
        &mut self,
        hint: &str,
        dims: &[i64],
        vals: &[f64],
    ) -> Result<NodeId, LowerError> {
        let name = self.fresh(hint);
        let udims: Vec<usize> = dims.iter().map(|&d| d.max(0) as usize).collect();
        let v: Vec<f32> = vals.iter().map(|&v| v as f32).collect();
        let t = Tensor::from_values(udims, &v).map_err(|e| e.to_string())?;
        let id = self.b.constant(&name, t).map_err(|e| e.to_string())?;
        self.node_names.insert(id.index(), name.clone());
        self.ids.insert(name.clone(), id);
        self.shapes.insert(name.clone(), dims.to_vec());
        Ok(id)
    }

    /// A `<const>` node holding int32 `vals` with `dims` (indices,
    /// paddings, shapes fed to TenniS operators as inputs).
    pub fn const_i32(
        &mut self,
        hint: &str,
        dims: &[usize],
        vals: &[i64],
    ) -> Result<NodeId, LowerError> {
        let v: Vec<i32> = vals
            .iter()
            .map(|&x| i32::try_from(x).map_err(|_| format!("value {x} does not fit in int32")))
            .collect::<Result<_, _>>()?;
        let name = self.fresh(hint);
        let t = Tensor::from_values(dims.to_vec(), &v).map_err(|e| e.to_string())?;
        let id = self.b.constant(&name, t).map_err(|e| e.to_string())?;
        self.node_names.insert(id.index(), name.clone());
        self.ids.insert(name.clone(), id);
        self.shapes
            .insert(name.clone(), dims.iter().map(|&d| d as i64).collect());
        self.elems.insert(name, elem::INT32);
        Ok(id)
    }

    /// A 0-d f32 constant.
    pub fn scalar(&mut self, hint: &str, v: f64) -> Result<NodeId, LowerError> {
        self.const_f32(hint, &[], &[v])
    }

    /// The node of value `name` (a float constant becomes a `<const>`).
    pub fn node_of(&mut self, name: &str) -> Result<NodeId, LowerError> {
        if let Some(&id) = self.ids.get(name) {
            return Ok(id);
        }
        if let Some(c) = self.consts.get(name).cloned() {
            if ts_code(c.elem).is_none() {
                return Err(LowerError::Other(format!(
                    "{} constant {name:?} (TenniS has no such element type)",
                    onnx_format::dtype::onnx_name(c.elem)
                )));
            }
            let own = if self.avoid.contains(name) {
                self.fresh(name)
            } else {
                name.to_string()
            };
            let id = self.b.constant(&own, c.tensor).map_err(|e| e.to_string())?;
            self.node_names.insert(id.index(), own);
            self.ids.insert(name.to_string(), id);
            return Ok(id);
        }
        Err(LowerError::Other(format!("value {name:?} is not computed")))
    }

    /// Input `i` of `node` as an f32 node (other element types refused).
    pub fn fin(&mut self, node: &Node, i: usize) -> Result<NodeId, LowerError> {
        let name = node.input(i).ok_or(LowerError::MissingInput { index: i })?;
        let e = self.elem(name);
        if self.any_dtype && ts_code(e).is_some() {
            return self.node_of(name);
        }
        if e != elem::FLOAT {
            return Err(LowerError::ElemType {
                elem: e,
                what: "input",
                why: "the TenniS import computes in f32",
            });
        }
        self.node_of(name)
    }

    /// Emits operator `op` computing the value `out` with `dims` (f32).
    pub fn emit(
        &mut self,
        op: &str,
        out: &str,
        inputs: &[NodeId],
        params: Params,
        dims: &[i64],
    ) -> Result<NodeId, LowerError> {
        let own = if self.avoid.contains(out) {
            self.fresh(out)
        } else {
            out.to_string()
        };
        let id = self
            .b
            .op_with(op, &own, inputs, params)
            .map_err(|e| e.to_string())?;
        if inputs.iter().any(|i| self.live.contains(&i.index())) {
            self.live.insert(id.index());
        }
        self.node_names.insert(id.index(), own);
        self.ids.insert(out.to_string(), id);
        self.shapes.insert(out.to_string(), dims.to_vec());
        self.elems.insert(out.to_string(), elem::FLOAT);
        Ok(id)
    }

    /// Input `i` of `node` of any element type TenniS has, with its type.
    pub fn tin(&mut self, node: &Node, i: usize) -> Result<(NodeId, i32), LowerError> {
        let name = node.input(i).ok_or(LowerError::MissingInput { index: i })?;
        let e = self.elem(name);
        if ts_code(e).is_none() {
            return Err(LowerError::ElemType {
                elem: e,
                what: "input",
                why: "TenniS has no such element type",
            });
        }
        Ok((self.node_of(name)?, e))
    }

    /// [`Tx::emit`] of a value of ONNX element type `e`.
    pub fn emit_e(
        &mut self,
        op: &str,
        out: &str,
        inputs: &[NodeId],
        params: Params,
        dims: &[i64],
        e: i32,
    ) -> Result<NodeId, LowerError> {
        let id = self.emit(op, out, inputs, params, dims)?;
        self.elems.insert(out.to_string(), e);
        Ok(id)
    }

    /// An intermediate [`Tx::emit_e`] (a fresh name derived from `hint`).
    pub fn tmp_e(
        &mut self,
        op: &str,
        hint: &str,
        inputs: &[NodeId],
        params: Params,
        dims: &[i64],
        e: i32,
    ) -> Result<NodeId, LowerError> {
        let name = self.fresh(hint);
        self.emit_e(op, &name, inputs, params, dims, e)
    }

    /// A `<const>` of element type `e` holding `vals` (0-d when `dims` is
    /// empty).
    pub fn const_e(
        &mut self,
        hint: &str,
        e: i32,
        dims: &[usize],
        vals: &[f64],
    ) -> Result<NodeId, LowerError> {
        fn ints<T: tensor_core::Element>(
            dims: &[usize],
            vals: &[f64],
            f: fn(f64) -> T,
        ) -> Result<Tensor<'static>, LowerError> {
            let v: Vec<T> = vals.iter().map(|&x| f(x)).collect();
            Tensor::from_values(dims.to_vec(), &v)
                .map(Tensor::into_static)
                .map_err(|e| LowerError::Other(e.to_string()))
        }
        let t = match e {
            // (the values are small integers: the casts are exact)
            2 => ints::<u8>(dims, vals, |x| x as u8)?,
            3 => ints::<i8>(dims, vals, |x| x as i8)?,
            4 => ints::<u16>(dims, vals, |x| x as u16)?,
            5 => ints::<i16>(dims, vals, |x| x as i16)?,
            12 => ints::<u32>(dims, vals, |x| x as u32)?,
            13 => ints::<u64>(dims, vals, |x| x as u64)?,
            _ => {
                onnx_graph::Const::from_f64(e, dims.to_vec(), vals)
                    .ok_or_else(|| {
                        format!("no constant of type {}", onnx_format::dtype::onnx_name(e))
                    })?
                    .tensor
            }
        };
        let name = self.fresh(hint);
        let id = self.b.constant(&name, t).map_err(|e| e.to_string())?;
        self.node_names.insert(id.index(), name.clone());
        self.ids.insert(name.clone(), id);
        self.shapes
            .insert(name.clone(), dims.iter().map(|&d| d as i64).collect());
        self.elems.insert(name, e);
        Ok(id)
    }

    /// Emits an intermediate operator (a fresh name derived from `hint`).
    pub fn tmp(
        &mut self,
        op: &str,
        hint: &str,
        inputs: &[NodeId],
        params: Params,
        dims: &[i64],
    ) -> Result<NodeId, LowerError> {
        let name = self.fresh(hint);
        self.emit(op, &name, inputs, params, dims)
    }

    /// `min(a, b)` as `−max(−a, −b)` (TenniS's CPU has no `minimum`);
    /// negation is exact. The result is named `out` (`tmp`: a fresh name).
    pub fn minimum(
        &mut self,
        out: &str,
        a: NodeId,
        b: NodeId,
        dims: &[i64],
        tmp: bool,
    ) -> Result<NodeId, LowerError> {
        let m = self.scalar(out, -1.0)?;
        let (da, db) = (dims.to_vec(), dims.to_vec());
        let na = self.tmp("mul", out, &[a, m], vec![], &da)?;
        let nb = self.tmp("mul", out, &[b, m], vec![], &db)?;
        let mx = self.tmp("maximum", out, &[na, nb], vec![], dims)?;
        if tmp {
            self.tmp("mul", out, &[mx, m], vec![], dims)
        } else {
            self.emit("mul", out, &[mx, m], vec![], dims)
        }
    }

    /// Makes `out` another name of value `src` (no node).
    pub fn alias(&mut self, out: &str, src: &str) -> Lowered {
        let id = self.node_of(src)?;
        let d = self.shape(src)?;
        self.ids.insert(out.to_string(), id);
        let e = self.elem(src);
        self.shapes.insert(out.to_string(), d);
        self.set_elem(out, e);
        Ok(())
    }

    /// `x` reshaped to `dims` (static, or `-1` for the batch only).
    pub fn reshape(&mut self, out: &str, x: NodeId, dims: &[i64]) -> Result<NodeId, LowerError> {
        if dims.iter().filter(|&&d| d < 0).count() > 1 {
            return Err("a reshape with more than one unknown dimension".into());
        }
        self.emit("_reshape", out, &[x], vec![kv("shape", p_ints(dims))], dims)
    }
}

/// Imports an ONNX model as a TenniS module: its inputs become `<param>`
/// nodes (with `#dtype` and `#shape`), initializers `<const>` nodes, its
/// outputs the module outputs (in order, each named after its ONNX value).
///
/// Refuses, before producing anything, every node the TenniS import
/// cannot express, with counts.
pub fn onnx_to_tennis(
    model: &onnx_format::Model,
    opts: &ImportOptions,
) -> Result<Module<'static>, ImportError> {
    let g = onnx_graph::load(model, opts)?;
    match lower_graph(&g, &HashMap::new())? {
        Ok(m) => Ok(m),
        Err(ties) => lower_graph(&g, &ties)?.map_err(|_| {
            ImportError::Invalid("the outputs tied to the inputs still use no input".into())
        }),
    }
}

/// Outputs to tie to an input: output name -> input name.
type Ties = HashMap<String, String>;

/// Lowers `g`; `Ok(Err(ties))` asks for another pass tying those outputs
/// to an input (no output uses an input, yet the ONNX graph computes them
/// from one: from its shape, fixed at import).
fn lower_graph(g: &OnnxGraph, ties: &Ties) -> Result<Result<Module<'static>, Ties>, ImportError> {
    // the export's pattern for non_max_suppression_v3, imported back whole
    let nms = tennis_ops_range::nms_v3_patterns(g);
    let in_pattern: HashSet<usize> = nms.values().flat_map(|m| m.nodes.iter().copied()).collect();
    let mut refusals = driver::prescan::<Tx>(g, &in_pattern);
    if !refusals.is_empty() {
        return Err(refusals.into_error(ImportTarget::TenniS));
    }
    let mut cx = Tx::new(g);
    cx.avoid = ties.keys().cloned().collect();
    for i in &g.inputs {
        let dt = onnx_format::dtype::from_onnx(i.elem).filter(|_| ts_code(i.elem).is_some());
        // TenniS's C API builds no BOOLEAN tensors: a boolean input is a
        // uint8 0/1 `<param>` (every lowering reads booleans as uint8).
        let dt = dt.map(|d| if d == DType::Bool { DType::U8 } else { d });
        let Some(dt) = dt else {
            refusals.add(Refusal::input(&i.name, Reason::TennisElemType(i.elem)));
            continue;
        };
        let shape: Vec<i32> = i
            .dims
            .iter()
            .map(|&d| i32::try_from(d).unwrap_or(-1))
            .collect();
        let id =
            cx.b.input_with(&i.name, dt, &shape)
                .map_err(|e| ImportError::Invalid(e.to_string()))?;
        cx.ids.insert(i.name.clone(), id);
        cx.live.insert(id.index());
        cx.node_names.insert(id.index(), i.name.clone());
        cx.shapes.insert(i.name.clone(), i.dims.clone());
        cx.elems.insert(i.name.clone(), i.elem);
    }
    let mut poisoned: HashSet<String> = HashSet::new();
    for (k, orig) in g.nodes.iter().enumerate() {
        if let Some(m) = nms.get(&k) {
            if [&m.boxes, &m.scores].iter().any(|v| poisoned.contains(*v)) {
                poisoned.insert(m.out.clone());
            } else if let Err(why) = m.lower(&mut cx) {
                refusals.op(&orig.op, why);
                poisoned.insert(m.out.clone());
            }
            continue;
        }
        if in_pattern.contains(&k) {
            continue;
        }
        driver::lower_original(&mut cx, g, orig, &mut refusals, &mut poisoned);
    }
    // No output uses an input (each folded into a constant, computed from
    // the inputs' shapes fixed at import, or from constants alone): the
    // TenniS runtime cannot run such a module, so each output the ONNX
    // graph computes from an input keeps that dependency
    // ([`Tx::tie_to_input`]).
    if ties.is_empty() && refusals.is_empty() {
        let live = |cx: &Tx, o: &str| cx.ids.get(o).is_some_and(|i| cx.live.contains(&i.index()));
        let used = g.outputs.iter().filter(|o| !poisoned.contains(*o));
        if !g.outputs.is_empty() && used.clone().all(|o| !live(&cx, o)) {
            let want: Ties = used
                .filter_map(|o| input_behind(g, o).map(|x| (o.clone(), x)))
                .collect();
            if !want.is_empty() {
                return Ok(Err(want));
            }
        }
    }
    let mut outs: Vec<NodeId> = Vec::new();
    for o in &g.outputs {
        if poisoned.contains(o) {
            continue;
        }
        if let Some(x) = ties.get(o) {
            match cx.tie_to_input(o, x) {
                Ok(id) => outs.push(id),
                Err(why) => refusals.add(Refusal::output(o, why)),
            }
            continue;
        }
        let id = match cx.node_of(o) {
            Ok(id) => id,
            Err(why) => {
                refusals.add(Refusal::output(o, why));
                continue;
            }
        };
        // Every output gets a node of its own named after it.
        let own = cx.b_node_name(id) == o.as_str()
            && !g.inputs.iter().any(|i| &i.name == o)
            && !outs.contains(&id);
        let id = if own {
            id
        } else {
            let d = cx.shape(o).unwrap_or_default();
            cx.emit("_copy", o, &[id], vec![], &d)
                .map_err(|e| ImportError::Invalid(e.to_string()))?
        };
        outs.push(id);
    }
    if !refusals.is_empty() {
        return Err(refusals.into_error(ImportTarget::TenniS));
    }
    for id in outs {
        cx.b.output(id)
            .map_err(|e| ImportError::Invalid(e.to_string()))?;
    }
    let module =
        cx.b.build()
            .map_err(|e| ImportError::Invalid(e.to_string()))?;
    refuse_unused_inputs(&module)?;
    Ok(Ok(module))
}

/// The first graph input (in input order) value `v` of the ONNX graph
/// depends on, through any chain of nodes (its shape included).
fn input_behind(g: &OnnxGraph, v: &str) -> Option<String> {
    let producer: HashMap<&str, &Node> = g
        .nodes
        .iter()
        .flat_map(|n| n.outputs.iter().map(move |o| (o.as_str(), n)))
        .collect();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        if !seen.insert(v) {
            continue;
        }
        if let Some(n) = producer.get(v) {
            stack.extend(
                n.inputs
                    .iter()
                    .map(String::as_str)
                    .filter(|s| !s.is_empty()),
            );
        }
    }
    g.inputs
        .iter()
        .find(|i| seen.contains(i.name.as_str()))
        .map(|i| i.name.clone())
}

/// Refuses a module none of whose inputs any output depends on (say, one
/// whose outputs fold into constants once the input shapes are fixed): the
/// TenniS runtime then leaves every input on its stack and the run fails
/// ("Got unexpected output number"). An unused input beside used ones runs.
fn refuse_unused_inputs(module: &Module<'_>) -> Result<(), ImportError> {
    let g = module.to_graph();
    let producer: HashMap<&str, &tensor_core::graph::Node> = g
        .nodes
        .iter()
        .flat_map(|n| n.outputs.iter().map(move |o| (o.as_str(), n)))
        .collect();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut stack: Vec<&str> = g.outputs.iter().map(String::as_str).collect();
    while let Some(v) = stack.pop() {
        if !seen.insert(v) {
            continue;
        }
        if let Some(n) = producer.get(v) {
            stack.extend(n.inputs.iter().map(String::as_str));
        }
    }
    if g.inputs.is_empty() || g.inputs.iter().any(|i| seen.contains(i.as_str())) {
        return Ok(());
    }
    let mut refusals = Refusals::default();
    for i in &g.inputs {
        refusals.add(Refusal::input(i, Reason::NoOutputUsesAnInput));
    }
    Err(refusals.into_error(ImportTarget::TenniS))
}

impl Tx {
    /// Output `o`, computed without any input (a constant the ONNX graph
    /// computes from input `x`'s shape, fixed at import, or an operator of
    /// constants), as `sub(o, _cast(sub(_dims(x), _dims(x))))` named `o`:
    /// `v - 0` is `v` exactly in every type TenniS subtracts (`-0.0`, NaN
    /// and infinities included), and the module now takes `x`.
    fn tie_to_input(&mut self, o: &str, x: &str) -> Result<NodeId, LowerError> {
        let e = self.elem(o);
        let code = ts_code(e).filter(|_| e != elem::BOOL).ok_or_else(|| {
            format!(
                "a {} output computed from input {x:?} without its values, which TenniS cannot subtract zero from",
                onnx_format::dtype::onnx_name(e)
            )
        })?;
        let dims = self.shape(o)?;
        let v = self.node_of(o)?;
        let xid = self.node_of(x)?;
        let d = self.tmp_e("_dims", o, &[xid], vec![], &[], elem::INT32)?;
        let mut z = self.tmp_e("sub", o, &[d, d], vec![], &[], elem::INT32)?;
        if e != elem::INT32 {
            let p = vec![kv("dtype", p_int(i64::from(code)))];
            z = self.tmp_e("_cast", o, &[z], p, &[], e)?;
        }
        self.avoid.remove(o);
        self.emit_e("sub", o, &[v, z], vec![], &dims, e)
    }

    fn b_node_name(&self, id: NodeId) -> &str {
        self.node_names
            .get(&id.index())
            .map(String::as_str)
            .unwrap_or("")
    }
}

/// The first output of `node` (the one a lowering names its result by).
pub(crate) fn out(node: &Node) -> Result<&str, LowerError> {
    node.outputs
        .first()
        .map(String::as_str)
        .filter(|s| !s.is_empty())
        .ok_or(LowerError::NoOutput)
}

/// The first output of `node` that is read (a lowering of several
/// outputs names its temporaries by it).
pub(crate) fn read_out(node: &Node) -> Result<String, LowerError> {
    let o = node.outputs.iter().find(|o| !o.is_empty());
    o.cloned().ok_or(LowerError::NoOutput)
}
