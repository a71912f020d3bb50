//! A typed view of a model, and loop-control expansion (`docs/formats/nnabla.md` §6).
//!
//! [`Model::new`] borrows a decoded [`NNablaProtoBuf`] and presents what a
//! user looks for: networks with their variables and functions (type,
//! inputs, outputs and the function's parameter message), executors,
//! optimizers with their solvers, datasets, monitors and the parameters as
//! f32 tensors. Nothing is expanded implicitly: networks are as stored.
//!
//! [`expand_loops`] is the explicit step that unrolls Neural Network
//! Console loop control the way nnabla's loader does: `repeat_info` times
//! copies of every variable and function carrying a `repeat_id`, names
//! suffixed `_<id>[i]` (or `{<id>}` placeholders replaced by `[i]`), the
//! pass-through functions `RepeatStart`, `RepeatEnd` and `Delay` removed
//! with their consumers wired to what they pass on, `RecurrentInput`
//! becoming one `Split` and `RecurrentOutput` one `Stack`.

use tensor_core::Limits;

use crate::params::{ParamTensor, parameters};
use crate::proto::{
    Dataset, Executor, Function, Initializer, Monitor, Network, Optimizer, Solver, function, solver,
};
use crate::{NNablaProtoBuf, Result};

mod unroll;
use unroll::{Unroll, resolve_aliases};

/// The typed view of a whole model (borrows the message).
#[derive(Debug, Clone)]
pub struct Model<'m> {
    /// Networks, as stored (loops not expanded; see [`expand_loops`]).
    pub networks: Vec<NetworkView<'m>>,
    /// Executors (what runs a network for inference).
    pub executors: Vec<ExecutorView<'m>>,
    /// Optimizers with their solvers.
    pub optimizers: Vec<OptimizerView<'m>>,
    /// Datasets.
    pub datasets: Vec<DatasetView<'m>>,
    /// Monitors.
    pub monitors: Vec<MonitorView<'m>>,
    /// Parameters stored in the message, as f32 tensors, in stored order.
    pub parameters: Vec<ParamTensor<'m>>,
}

/// The role of a variable (`Variable.type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VariableKind {
    /// `"Buffer"`: inputs and activations.
    Buffer,
    /// `"Parameter"`: learned values, supplied by parameter files.
    Parameter,
    /// Any other string (nnabla's Python loader only knows the two above).
    Other,
}

/// One network.
#[derive(Debug, Clone)]
pub struct NetworkView<'m> {
    /// `Network.name`.
    pub name: &'m str,
    /// `Network.batch_size` (dims `< 1` in buffer shapes stand for it).
    pub batch_size: i64,
    /// `(id, times)` of each loop (`repeat_info`).
    pub repeat_info: Vec<(&'m str, i64)>,
    /// Variables in stored order.
    pub variables: Vec<VariableView<'m>>,
    /// Functions in stored (forward) order.
    pub functions: Vec<FunctionView<'m>>,
    /// The underlying message.
    pub proto: &'m Network,
}

/// One variable of a network.
#[derive(Debug, Clone)]
pub struct VariableView<'m> {
    /// `Variable.name`.
    pub name: &'m str,
    /// Buffer or Parameter.
    pub kind: VariableKind,
    /// `Variable.type` as stored.
    pub type_name: &'m str,
    /// Dimensions as stored (`-1` for the batch dimension).
    pub shape: &'m [i64],
    /// Loops the variable is repeated in.
    pub repeat_ids: &'m [String],
    /// How a missing parameter is initialised.
    pub initializer: Option<&'m Initializer>,
}

/// One function of a network.
#[derive(Debug, Clone)]
pub struct FunctionView<'m> {
    /// `Function.name`.
    pub name: &'m str,
    /// `Function.type`, e.g. `"Affine"` (what loaders dispatch on).
    pub type_name: &'m str,
    /// Input variable names.
    pub inputs: &'m [String],
    /// Output variable names.
    pub outputs: &'m [String],
    /// Loops the function is repeated in.
    pub repeat_ids: &'m [String],
    /// The function's arguments (`affine_param { base_axis: 1 }` is
    /// `function::Parameter::AffineParam(..)`), if stored.
    pub parameter: Option<&'m function::Parameter>,
    /// The underlying message.
    pub proto: &'m Function,
}

/// One executor.
#[derive(Debug, Clone)]
pub struct ExecutorView<'m> {
    /// `Executor.name`.
    pub name: &'m str,
    /// The network it runs.
    pub network_name: &'m str,
    /// `(variable_name, data_name)` of each input.
    pub data_variables: Vec<(&'m str, &'m str)>,
    /// `(variable_name, data_name)` of each output.
    pub output_variables: Vec<(&'m str, &'m str)>,
    /// The parameters it uses.
    pub parameter_variables: Vec<&'m str>,
    /// The underlying message.
    pub proto: &'m Executor,
}

/// One optimizer.
#[derive(Debug, Clone)]
pub struct OptimizerView<'m> {
    /// `Optimizer.name`.
    pub name: &'m str,
    /// The network it trains.
    pub network_name: &'m str,
    /// The datasets it reads.
    pub dataset_names: &'m [String],
    /// Its solver, if stored.
    pub solver: Option<SolverView<'m>>,
    /// `Optimizer.update_interval`.
    pub update_interval: i64,
    /// The underlying message.
    pub proto: &'m Optimizer,
}

/// A solver.
#[derive(Debug, Clone)]
pub struct SolverView<'m> {
    /// `Solver.type`, e.g. `"Adam"`.
    pub type_name: &'m str,
    /// The solver's arguments (`function`-style oneof: `solver::Parameter::AdamParam(..)`).
    pub parameter: Option<&'m solver::Parameter>,
    /// `Solver.weight_decay`.
    pub weight_decay: f32,
    /// `Solver.lr_scheduler_type`.
    pub lr_scheduler_type: &'m str,
    /// The underlying message (scheduler fields, states …).
    pub proto: &'m Solver,
}

/// One dataset.
#[derive(Debug, Clone)]
pub struct DatasetView<'m> {
    /// `Dataset.name`.
    pub name: &'m str,
    /// `Dataset.uri`.
    pub uri: &'m str,
    /// `Dataset.batch_size`.
    pub batch_size: i64,
    /// The variables (columns) it provides.
    pub variables: &'m [String],
    /// The underlying message.
    pub proto: &'m Dataset,
}

/// One monitor.
#[derive(Debug, Clone)]
pub struct MonitorView<'m> {
    /// `Monitor.name`.
    pub name: &'m str,
    /// The network it evaluates.
    pub network_name: &'m str,
    /// The datasets it reads.
    pub dataset_names: &'m [String],
    /// The underlying message.
    pub proto: &'m Monitor,
}

impl<'m> Model<'m> {
    /// The view of `proto`. Fails only when a stored parameter is invalid
    /// (negative dimension, or data that does not fill its shape).
    pub fn new(proto: &'m NNablaProtoBuf) -> Result<Self> {
        Ok(Model {
            networks: proto.network.iter().map(NetworkView::new).collect(),
            executors: proto.executor.iter().map(ExecutorView::new).collect(),
            optimizers: proto.optimizer.iter().map(OptimizerView::new).collect(),
            datasets: proto
                .dataset
                .iter()
                .map(|d| DatasetView {
                    name: &d.name,
                    uri: &d.uri,
                    batch_size: d.batch_size,
                    variables: &d.variable,
                    proto: d,
                })
                .collect(),
            monitors: proto
                .monitor
                .iter()
                .map(|m| MonitorView {
                    name: &m.name,
                    network_name: &m.network_name,
                    dataset_names: &m.dataset_name,
                    proto: m,
                })
                .collect(),
            parameters: parameters(proto)?,
        })
    }

    /// The network named `name`.
    pub fn network(&self, name: &str) -> Option<&NetworkView<'m>> {
        self.networks.iter().find(|n| n.name == name)
    }

    /// The executor named `name`.
    pub fn executor(&self, name: &str) -> Option<&ExecutorView<'m>> {
        self.executors.iter().find(|e| e.name == name)
    }
}

impl<'m> NetworkView<'m> {
    /// The view of one network message.
    pub fn new(n: &'m Network) -> Self {
        NetworkView {
            name: &n.name,
            batch_size: n.batch_size,
            repeat_info: n
                .repeat_info
                .iter()
                .map(|r| (r.id.as_str(), r.times))
                .collect(),
            variables: n
                .variable
                .iter()
                .map(|v| VariableView {
                    name: &v.name,
                    kind: match v.r#type.as_str() {
                        "Buffer" => VariableKind::Buffer,
                        "Parameter" => VariableKind::Parameter,
                        _ => VariableKind::Other,
                    },
                    type_name: &v.r#type,
                    shape: v.shape.as_ref().map(|s| s.dim.as_slice()).unwrap_or(&[]),
                    repeat_ids: &v.repeat_id,
                    initializer: v.initializer.as_ref(),
                })
                .collect(),
            functions: n
                .function
                .iter()
                .map(|f| FunctionView {
                    name: &f.name,
                    type_name: &f.r#type,
                    inputs: &f.input,
                    outputs: &f.output,
                    repeat_ids: &f.repeat_id,
                    parameter: f.parameter.as_ref(),
                    proto: f,
                })
                .collect(),
            proto: n,
        }
    }

    /// The variable named `name`.
    pub fn variable(&self, name: &str) -> Option<&VariableView<'m>> {
        self.variables.iter().find(|v| v.name == name)
    }

    /// True when the network uses loop control (`repeat_info` is not empty).
    pub fn has_loops(&self) -> bool {
        !self.repeat_info.is_empty()
    }
}

impl<'m> ExecutorView<'m> {
    fn new(e: &'m Executor) -> Self {
        ExecutorView {
            name: &e.name,
            network_name: &e.network_name,
            data_variables: e
                .data_variable
                .iter()
                .map(|d| (d.variable_name.as_str(), d.data_name.as_str()))
                .collect(),
            output_variables: e
                .output_variable
                .iter()
                .map(|d| (d.variable_name.as_str(), d.data_name.as_str()))
                .collect(),
            parameter_variables: e
                .parameter_variable
                .iter()
                .map(|p| p.variable_name.as_str())
                .collect(),
            proto: e,
        }
    }
}

impl<'m> OptimizerView<'m> {
    fn new(o: &'m Optimizer) -> Self {
        OptimizerView {
            name: &o.name,
            network_name: &o.network_name,
            dataset_names: &o.dataset_name,
            solver: o.solver.as_ref().map(|s| SolverView {
                type_name: &s.r#type,
                parameter: s.parameter.as_ref(),
                weight_decay: s.weight_decay,
                lr_scheduler_type: &s.lr_scheduler_type,
                proto: s,
            }),
            update_interval: o.update_interval,
            proto: o,
        }
    }
}

/// A copy of `model` with every network's loop control expanded
/// ([`expand_loops`]); networks without `repeat_info` are unchanged.
pub fn expand_all_loops(model: &NNablaProtoBuf, limits: &Limits) -> Result<NNablaProtoBuf> {
    let mut out = model.clone();
    for n in &mut out.network {
        if !n.repeat_info.is_empty() {
            *n = expand_loops(n, limits)?;
        }
    }
    Ok(out)
}

/// Unrolls a network's loop control as nnabla's loader does (see the
/// module docs). The result has no `repeat_info` and no `repeat_id`s.
/// The number of expanded variables and functions is bounded by
/// `limits.max_tensors`.
pub fn expand_loops(net: &Network, limits: &Limits) -> Result<Network> {
    let unroll = Unroll::new(net, limits.max_tensors);
    let mut variables = unroll.variables()?;
    let (mut functions, alias) = unroll.functions(&variables)?;
    resolve_aliases(&mut functions, &mut variables, &alias);
    Ok(Network {
        name: net.name.clone(),
        batch_size: net.batch_size,
        repeat_info: Vec::new(),
        variable: variables,
        function: functions,
    })
}
