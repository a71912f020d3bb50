//! ONNX → NNabla: the lowering context (the NNabla [`Target`] of the
//! shared driver, [`super::driver`], which walks the graph, folds constants
//! and dispatches through [`super::nnabla_table`]) and the assembly of the
//! NNabla model (one network, one executor, parameters).

use std::collections::HashSet;

use nnabla_proto::proto::function::Parameter as P;
use nnabla_proto::proto::{
    Context, DataVariable, Executor, Function, GlobalConfig, NNablaProtoBuf, Network,
    OutputVariable, ParameterVariable, ReshapeParameter, Shape, Variable,
};
use tensor_core::{DType, Tensor};

use super::LowerError;
use super::driver::{self, Target, Values};
use super::onnx_graph::{self, Const, Node, OnnxGraph, elem};
use super::{ImportError, ImportOptions, ImportTarget, Refusal, nnabla_table};

/// An ONNX model as an NNabla model: the model (network `network`,
/// executor `runtime`, global config; no parameter messages) and its
/// parameters (f32), in executor order.
#[derive(Debug, Clone)]
pub struct NnablaImport {
    /// The model without parameter data.
    pub model: NNablaProtoBuf,
    /// The parameters (initializers and the constants the graph uses), f32.
    pub parameters: Vec<(String, Tensor<'static>)>,
}

pub(crate) use super::driver::{Lowered, broadcast_shapes};

/// The state of one NNabla lowering: the values it knows (it derefs to
/// them) and the network it builds.
pub(crate) struct Cx<'g> {
    v: Values,
    g: &'g OnnxGraph,
    vars: Vec<Variable>,
    var_set: HashSet<String>,
    funcs: Vec<Function>,
    params: Vec<(String, Tensor<'static>)>,
}

impl std::ops::Deref for Cx<'_> {
    type Target = Values;
    fn deref(&self) -> &Values {
        &self.v
    }
}

impl std::ops::DerefMut for Cx<'_> {
    fn deref_mut(&mut self) -> &mut Values {
        &mut self.v
    }
}

impl Target for Cx<'_> {
    const FOLD_MORE: bool = false;

    fn values(&self) -> &Values {
        &self.v
    }

    fn values_mut(&mut self) -> &mut Values {
        &mut self.v
    }

    fn opsets(op: &str) -> Option<(i64, i64)> {
        nnabla_table::entry(op).map(|e| (e.since(), e.until()))
    }

    fn lower(&mut self, node: &Node) -> Option<Lowered> {
        nnabla_table::entry(&node.op)
            .and_then(|e| e.lower)
            .map(|l| (l.0)(self, node))
    }
}

/// Largest integer an f32 holds exactly.
const F32_EXACT: f64 = 16_777_216.0;

fn shape(d: &[i64]) -> Option<Shape> {
    Some(Shape { dim: d.to_vec() })
}

impl<'g> Cx<'g> {
    fn new(g: &'g OnnxGraph) -> Self {
        Cx {
            v: Values::new(g),
            g,
            vars: Vec::new(),
            var_set: HashSet::new(),
            funcs: Vec::new(),
            params: Vec::new(),
        }
    }

    fn add_var(&mut self, name: &str, kind: &str, dims: &[i64]) {
        if self.var_set.insert(name.to_string()) {
            self.vars.push(Variable {
                name: name.to_string(),
                r#type: kind.to_string(),
                shape: shape(dims),
                ..Default::default()
            });
        }
        self.shapes.insert(name.to_string(), dims.to_vec());
    }

    /// A parameter variable holding `vals` with `dims` (f32).
    pub fn param(&mut self, name: &str, dims: &[i64], vals: &[f64]) -> Result<String, LowerError> {
        let name = if self.var_set.contains(name) {
            self.fresh(name)
        } else {
            name.to_string()
        };
        let udims: Vec<usize> = dims.iter().map(|&d| d.max(0) as usize).collect();
        let v: Vec<f32> = vals.iter().map(|&v| v as f32).collect();
        let t = Tensor::from_values(udims, &v).map_err(|e| e.to_string())?;
        Ok(self.param_tensor(name, dims, t))
    }

    /// A parameter variable holding the f32 tensor `t` as it is: an
    /// initializer's stays shared with the mapped model (no copy).
    fn param_tensor(&mut self, name: String, dims: &[i64], t: Tensor<'static>) -> String {
        self.params.push((name.clone(), t));
        self.add_var(&name, "Parameter", dims);
        self.elems.insert(name.clone(), elem::FLOAT);
        name
    }

    /// The values of a constant, checked to be exact in f32 when integral.
    fn const_f32_values(&self, name: &str, c: &Const) -> Result<Vec<f64>, LowerError> {
        let v = c.values();
        if c.elem == elem::FLOAT || c.elem == 10 || c.elem == 16 {
            return Ok(v);
        }
        if c.elem == elem::DOUBLE {
            return Err(LowerError::Other(format!(
                "double constant {name:?} (NNabla computes in f32)"
            )));
        }
        if v.iter().any(|x| x.abs() > F32_EXACT) {
            return Err(LowerError::Other(format!(
                "integer constant {name:?} with values f32 cannot hold exactly"
            )));
        }
        Ok(v)
    }

    /// The runtime variable of value `name`: a constant becomes a
    /// parameter (f32, with its own dimensions, or `dims` when given).
    pub fn var(&mut self, name: &str) -> Result<String, LowerError> {
        if self.var_set.contains(name) {
            return Ok(name.to_string());
        }
        if let Some(c) = self.consts.get(name).cloned() {
            if c.elem == elem::FLOAT && c.tensor.dtype() == DType::F32 {
                let name = name.to_string();
                return Ok(self.param_tensor(name, &c.dims_i64(), c.tensor));
            }
            let v = self.const_f32_values(name, &c)?;
            return self.param(name, &c.dims_i64(), &v);
        }
        Err(LowerError::Other(format!("value {name:?} is not computed")))
    }

    /// The variable of constant `b`, the `[K, N]` weight of an `Affine`
    /// ([`Cx::var`]), named after the model's weight it was folded from
    /// when it is a transpose of one ([`Cx::transposed_weight`]).
    pub fn weight_var(&mut self, b: &str) -> Result<String, LowerError> {
        match self.transposed_weight(b)? {
            Some(t) => Ok(t),
            None => self.var(b),
        }
    }

    /// The `Affine` weight `b` (a constant `[K, N]`) as the parameter
    /// `{W}__T` when it is the folded `Transpose` of a 2-D f32 constant `W`
    /// of the model (how torch's dynamo exporter writes `Linear`): the
    /// NNabla → ONNX export turns `{W}__T` back into `W` (for a `Gemm` with
    /// `transB` 1), so that a round trip gives the weight its name. One
    /// parameter for every `Affine` reading it; `None` when `b` is no such
    /// fold or an ONNX value has that name.
    fn transposed_weight(&mut self, b: &str) -> Result<Option<String>, LowerError> {
        let from = self.g.nodes.iter().find(|n| {
            n.op == "Transpose"
                && n.outputs.first().is_some_and(|o| o == b)
                && n.ints("perm").is_none_or(|p| p == [1, 0])
        });
        let Some(src) = from.and_then(|n| n.inputs.first()) else {
            return Ok(None);
        };
        let is_matrix = |c: &Const| c.elem == elem::FLOAT && c.dims_i64().len() == 2;
        let (Some(w), Some(c)) = (self.g.consts.get(src), self.consts.get(b).cloned()) else {
            return Ok(None);
        };
        if !is_matrix(w) || !is_matrix(&c) {
            return Ok(None);
        }
        let tname = format!("{src}__T");
        if self.made_param(&tname) {
            return Ok(Some(tname));
        }
        if self.names_onnx_value(&tname) || self.shape(&tname).is_ok() {
            return Ok(None);
        }
        self.param(&tname, &c.dims_i64(), &c.values()).map(Some)
    }

    /// Input `i` of `node` as a float variable: refuses integer, boolean
    /// and double runtime values (NNabla computes in f32).
    pub fn fvar(&mut self, node: &Node, i: usize) -> Result<String, LowerError> {
        let name = node.input(i).ok_or(LowerError::MissingInput { index: i })?;
        if !self.consts.contains_key(name) {
            let e = self.elem(name);
            if e != elem::FLOAT {
                return Err(LowerError::ElemType {
                    elem: e,
                    what: "input",
                    why: "NNabla computes in f32",
                });
            }
        }
        self.var(name)
    }

    /// Input `i` of `node` as a variable of any element type (data
    /// movement and comparisons, exact for what f32 holds).
    pub fn avar(&mut self, node: &Node, i: usize) -> Result<String, LowerError> {
        let name = node.input(i).ok_or(LowerError::MissingInput { index: i })?;
        if !self.consts.contains_key(name) {
            let e = self.elem(name);
            if !matches!(e, 1..=7 | 9 | 12 | 13) {
                return Err(LowerError::ElemType {
                    elem: e,
                    what: "input",
                    why: "NNabla computes in f32",
                });
            }
        }
        self.var(name)
    }

    /// Emits one function; its outputs become buffer variables.
    pub fn emit(&mut self, ty: &str, inputs: &[&str], outputs: &[(&str, &[i64])], p: Option<P>) {
        for (o, d) in outputs {
            self.add_var(o, "Buffer", d);
        }
        let idx = self.funcs.len();
        self.funcs.push(Function {
            name: format!("{ty}_{idx}"),
            r#type: ty.to_string(),
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: outputs.iter().map(|(o, _)| o.to_string()).collect(),
            parameter: p,
            ..Default::default()
        });
    }

    /// Whether `name` is a parameter this lowering made (not an ONNX
    /// value: the model names none so, or it would be a constant).
    pub fn made_param(&self, name: &str) -> bool {
        !self.g.consts.contains_key(name)
            && !self.names_onnx_value(name)
            && self.params.iter().any(|(n, _)| n == name)
    }

    /// Whether the ONNX model has a value named `name` (an input, an
    /// initializer or constant, a node's input or output).
    pub fn names_onnx_value(&self, name: &str) -> bool {
        self.g.consts.contains_key(name)
            || self.g.inputs.iter().any(|i| i.name == name)
            || self
                .g
                .nodes
                .iter()
                .any(|n| n.outputs.iter().chain(&n.inputs).any(|o| o == name))
    }

    /// Whether a value is read by a node or is a graph output.
    pub fn is_used(&self, name: &str) -> bool {
        self.g.outputs.iter().any(|o| o == name)
            || self
                .g
                .nodes
                .iter()
                .any(|n| n.inputs.iter().any(|i| i == name))
    }

    /// `x` reshaped to `dims` (a new variable), or `x` itself when it has
    /// them already. A batch dimension (`-1`) stays `-1`.
    pub fn reshape(&mut self, x: &str, dims: &[i64]) -> Result<String, LowerError> {
        let cur = self.shape(x)?;
        if cur == dims {
            return Ok(x.to_string());
        }
        check_reshape(&cur, dims)?;
        let e = self.elem(x);
        let y = self.fresh(x);
        self.emit(
            "Reshape",
            &[x],
            &[(&y, dims)],
            Some(P::ReshapeParam(ReshapeParameter {
                shape: shape(dims),
                inplace: false,
            })),
        );
        self.set_elem(&y, e);
        Ok(y)
    }

    /// `x` reshaped into `out` (named) with `dims`.
    pub fn reshape_to(&mut self, x: &str, out: &str, dims: &[i64]) -> Lowered {
        let cur = self.shape(x)?;
        check_reshape(&cur, dims)?;
        let e = self.elem(x);
        self.emit(
            "Reshape",
            &[x],
            &[(out, dims)],
            Some(P::ReshapeParam(ReshapeParameter {
                shape: shape(dims),
                inplace: false,
            })),
        );
        self.set_elem(out, e);
        Ok(())
    }

    /// `x` with leading 1s added up to rank `r` (numpy broadcasting).
    pub fn with_rank(&mut self, x: &str, r: usize) -> Result<String, LowerError> {
        let s = self.shape(x)?;
        if s.len() >= r {
            return Ok(x.to_string());
        }
        if let Some(c) = self.consts.get(x).cloned()
            && !self.var_set.contains(x)
        {
            let mut d = vec![1i64; r - s.len()];
            d.extend_from_slice(&s);
            let v = self.const_f32_values(x, &c)?;
            return self.param(&format!("{x}__r{r}"), &d, &v);
        }
        let mut d = vec![1i64; r - s.len()];
        d.extend_from_slice(&s);
        self.reshape(x, &d)
    }

    /// Refuses inputs of `node` with a dimension above 2^31 (a hostile
    /// file), so that sums and products of two dimensions fit in `i64`.
    pub fn dims_within_limits(&self, node: &Node) -> Lowered {
        for i in 0..node.inputs.len() {
            if let Some(n) = node.input(i)
                && let Ok(s) = self.shape(n)
                && s.iter().any(|&d| d > 1 << 31)
            {
                return Err(LowerError::Other(format!(
                    "input {n:?} with a dimension above 2^31"
                )));
            }
        }
        Ok(())
    }
}

/// A reshape is only emitted where the element count is known to match:
/// a batch dimension (`-1`) must stay the first dimension on both sides.
fn check_reshape(from: &[i64], to: &[i64]) -> Lowered {
    let dyn_from = from.iter().filter(|&&d| d < 0).count();
    let dyn_to = to.iter().filter(|&&d| d < 0).count();
    let p = |d: &[i64]| {
        d.iter()
            .filter(|&&v| v >= 0)
            .try_fold(1i64, |p, &v| p.checked_mul(v))
    };
    if dyn_from != dyn_to
        || dyn_from > 1
        || (dyn_from == 1 && (from[0] >= 0 || to.first().is_none_or(|&d| d >= 0)))
        || p(from) != p(to)
        || p(to).is_none()
    {
        return Err(LowerError::Other(format!(
            "reshape {} to {} across the symbolic batch dimension (fix it with --input-shape)",
            onnx_graph::dims_text(from),
            onnx_graph::dims_text(to)
        )));
    }
    Ok(())
}

/// Imports an ONNX model as an NNabla model (one network `network`, an
/// executor `runtime` with the model's inputs as data variables, its
/// outputs as output variables and every parameter).
///
/// Refuses, before producing anything, every node NNabla cannot express,
/// with counts.
pub fn onnx_to_nnabla(
    model: &onnx_format::Model,
    opts: &ImportOptions,
) -> Result<NnablaImport, ImportError> {
    let g = onnx_graph::load(model, opts)?;
    let mut refusals = driver::prescan::<Cx<'_>>(&g, &HashSet::new());
    if !refusals.is_empty() {
        return Err(refusals.into_error(ImportTarget::NNabla));
    }
    let mut cx = Cx::new(&g);
    for i in &g.inputs {
        cx.add_var(&i.name, "Buffer", &i.dims);
        cx.elems.insert(i.name.clone(), i.elem);
    }
    let mut poisoned: HashSet<String> = HashSet::new();
    for orig in &g.nodes {
        driver::lower_original(&mut cx, &g, orig, &mut refusals, &mut poisoned);
    }
    let mut outputs: Vec<(String, String)> = Vec::new();
    for o in &g.outputs {
        if poisoned.contains(o) {
            continue;
        }
        if g.inputs.iter().any(|i| &i.name == o) {
            // An input that is also an output: an Identity gives the output
            // a variable of its own (its data name stays the ONNX name).
            let v = cx.fresh(o);
            let d = cx.shape(o).unwrap_or_default();
            let e = cx.elem(o);
            cx.emit("Identity", &[o], &[(&v, &d)], None);
            cx.set_elem(&v, e);
            outputs.push((v, o.clone()));
            continue;
        }
        if !cx.var_set.contains(o) {
            let Some(c) = cx.konst(o).cloned() else {
                return Err(ImportError::Invalid(format!(
                    "graph output {o:?} is computed by no node"
                )));
            };
            match cx.const_f32_values(o, &c) {
                Ok(v) => {
                    let p = cx
                        .param(&format!("{o}__const"), &c.dims_i64(), &v)
                        .map_err(|e| ImportError::Invalid(e.to_string()))?;
                    let d = c.dims_i64();
                    cx.emit("Identity", &[&p], &[(o, &d)], None);
                    cx.set_elem(o, c.elem);
                }
                Err(why) => {
                    refusals.add(Refusal::output(o, why));
                    continue;
                }
            }
        }
        outputs.push((o.clone(), o.clone()));
    }
    if !refusals.is_empty() {
        return Err(refusals.into_error(ImportTarget::NNabla));
    }
    // NNabla builds only the variables its functions reach: an input no
    // function reads gets an Identity of its own.
    for i in &g.inputs {
        if !cx.funcs.iter().any(|f| f.input.contains(&i.name)) {
            let v = cx.fresh(&i.name);
            cx.emit("Identity", &[&i.name], &[(&v, &i.dims)], None);
        }
    }
    Ok(finish(cx, &g, outputs))
}

fn finish(cx: Cx<'_>, g: &OnnxGraph, outputs: Vec<(String, String)>) -> NnablaImport {
    let batch = g
        .inputs
        .first()
        .and_then(|i| i.dims.first().copied())
        .filter(|&d| d > 0)
        .unwrap_or(1);
    let data: Vec<DataVariable> = g
        .inputs
        .iter()
        .map(|i| DataVariable {
            variable_name: i.name.clone(),
            data_name: i.name.clone(),
        })
        .collect();
    let executor = Executor {
        name: "runtime".into(),
        network_name: "network".into(),
        data_variable: data,
        output_variable: outputs
            .iter()
            .map(|(v, d)| OutputVariable {
                variable_name: v.clone(),
                data_name: d.clone(),
                ..Default::default()
            })
            .collect(),
        parameter_variable: cx
            .params
            .iter()
            .map(|(n, _)| ParameterVariable {
                variable_name: n.clone(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    let model = NNablaProtoBuf {
        global_config: Some(GlobalConfig {
            default_context: Some(Context {
                backends: vec!["cpu:float".into()],
                array_class: "CpuCachedArray".into(),
                ..Default::default()
            }),
        }),
        network: vec![Network {
            name: "network".into(),
            batch_size: batch,
            variable: cx.vars,
            function: cx.funcs,
            ..Default::default()
        }],
        executor: vec![executor],
        ..Default::default()
    };
    NnablaImport {
        model,
        parameters: cx.params,
    }
}
