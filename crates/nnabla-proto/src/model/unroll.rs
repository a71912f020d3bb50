//! The steps of [`expand_loops`](super::expand_loops): the variables
//! copied per iteration, each function's iterations rewritten by its kind,
//! and the consumers of removed pass-through functions rewired.

use std::cell::Cell;
use std::collections::{HashMap, HashSet};

use crate::proto::{
    Function, Network, RecurrentParameter, SplitParameter, StackParameter, Variable, function,
};
use crate::{Error, Result};

/// One network's loop control being unrolled: the trip count of each loop
/// and how many more variables and functions the expansion may create.
pub(super) struct Unroll<'n> {
    net: &'n Network,
    times: HashMap<&'n str, usize>,
    budget: Cell<u64>,
    max: u64,
}

impl<'n> Unroll<'n> {
    /// Reads the loops of `net`; at most `max` variables and functions.
    pub(super) fn new(net: &'n Network, max: u64) -> Self {
        let times = net
            .repeat_info
            .iter()
            .map(|r| (r.id.as_str(), usize::try_from(r.times).unwrap_or(0)))
            .collect();
        Unroll {
            net,
            times,
            budget: Cell::new(max),
            max,
        }
    }

    /// A loop-control error of this network.
    fn fail(&self, m: String) -> Error {
        Error::Loop {
            network: self.net.name.clone(),
            message: m,
        }
    }

    /// Every index tuple of the loops `ids` (outermost first), each one
    /// charged to the budget.
    fn product(&self, ids: &[String]) -> Result<Vec<Vec<usize>>> {
        let mut counts = Vec::with_capacity(ids.len());
        let mut total: u64 = 1;
        for id in ids {
            let t = *self
                .times
                .get(id.as_str())
                .ok_or_else(|| self.fail(format!("repeat_id {id:?} has no repeat_info")))?;
            counts.push(t);
            total = total.saturating_mul(t as u64);
        }
        if total > self.budget.get() {
            return Err(self.fail(format!(
                "loop expansion would create more than {} variables and functions",
                self.max
            )));
        }
        self.budget.set(self.budget.get() - total);
        let mut out = vec![Vec::new()];
        for &c in &counts {
            out = out
                .into_iter()
                .flat_map(|p| {
                    (0..c).map(move |i| {
                        let mut q = p.clone();
                        q.push(i);
                        q
                    })
                })
                .collect();
        }
        Ok(out)
    }

    /// The variables, one copy per iteration of their loops: `{id}`
    /// placeholders replaced by `[i]`, or `_id[i]` appended.
    pub(super) fn variables(&self) -> Result<Vec<Variable>> {
        let mut variables: Vec<Variable> = Vec::new();
        for v in &self.net.variable {
            for idx in self.product(&v.repeat_id)? {
                let mut name = v.name.clone();
                for (id, i) in v.repeat_id.iter().zip(&idx) {
                    let ph = format!("{{{id}}}");
                    if name.contains(&ph) {
                        name = name.replace(&ph, &format!("[{i}]"));
                    } else {
                        name.push_str(&format!("_{id}[{i}]"));
                    }
                }
                variables.push(Variable {
                    name,
                    repeat_id: Vec::new(),
                    ..v.clone()
                });
            }
        }
        Ok(variables)
    }

    /// The functions, one copy per iteration of their loops, and the
    /// aliases the removed pass-through functions leave (`output → source`).
    pub(super) fn functions(
        &self,
        variables: &[Variable],
    ) -> Result<(Vec<Function>, HashMap<String, String>)> {
        let known: HashSet<String> = variables.iter().map(|v| v.name.clone()).collect();
        let mut functions: Vec<Function> = Vec::new();
        let mut alias: HashMap<String, String> = HashMap::new();
        for f in &self.net.function {
            for idx in self.product(&f.repeat_id)? {
                let it = Iteration::new(self, &known, f, &idx);
                match f.r#type.as_str() {
                    "RepeatStart" | "RepeatEnd" | "Delay" => {
                        let (out, source) = it.pass_through()?;
                        alias.insert(out, source);
                    }
                    "RecurrentInput" => {
                        if let Some(split) = it.recurrent_input(variables)? {
                            functions.push(split);
                        }
                    }
                    "RecurrentOutput" => functions.push(it.recurrent_output()?),
                    _ => functions.push(it.plain()),
                }
            }
        }
        Ok((functions, alias))
    }
}

/// One iteration of a function inside its loops.
struct Iteration<'a> {
    unroll: &'a Unroll<'a>,
    /// The names of the expanded variables.
    known: &'a HashSet<String>,
    f: &'a Function,
    idx: &'a [usize],
    /// The suffix of this iteration: `_id[i]` for every loop.
    full: String,
    /// The suffix of the enclosing loops' iteration (all but the innermost).
    low: String,
    /// The index in the innermost loop; `None` outside any loop.
    t: Option<usize>,
}

/// `_id[i]` for each loop id and index.
fn suffix(ids: &[String], idx: &[usize]) -> String {
    ids.iter()
        .zip(idx)
        .map(|(id, i)| format!("_{id}[{i}]"))
        .collect()
}

impl<'a> Iteration<'a> {
    fn new(
        unroll: &'a Unroll<'a>,
        known: &'a HashSet<String>,
        f: &'a Function,
        idx: &'a [usize],
    ) -> Self {
        let n = f.repeat_id.len();
        let full = suffix(&f.repeat_id, idx);
        let low = if n > 0 {
            suffix(&f.repeat_id[..n - 1], &idx[..n - 1])
        } else {
            String::new()
        };
        Iteration {
            unroll,
            known,
            f,
            idx,
            full,
            low,
            t: idx.last().copied(),
        }
    }

    fn fail(&self, m: String) -> Error {
        self.unroll.fail(m)
    }

    /// Input `k` of the function, which it must have.
    fn input(&self, k: usize) -> Result<&'a String> {
        let f = self.f;
        f.input.get(k).ok_or_else(|| {
            self.fail(format!(
                "{} function {:?} needs input {k}",
                f.r#type, f.name
            ))
        })
    }

    /// The first output, which the function must have.
    fn first_output(&self) -> Result<&'a String> {
        let f = self.f;
        f.output
            .first()
            .ok_or_else(|| self.fail(format!("{:?} has no output", f.name)))
    }

    fn recurrent_param(&self) -> Result<&'a RecurrentParameter> {
        let f = self.f;
        f.recurrent_param
            .as_ref()
            .ok_or_else(|| self.fail(format!("{:?} has no recurrent_param", f.name)))
    }

    /// The index in the innermost loop, which the function must be in.
    fn needs_loop(&self) -> Result<usize> {
        self.t.ok_or_else(|| {
            self.fail(format!(
                "{} function {:?} is not inside a loop",
                self.f.r#type, self.f.name
            ))
        })
    }

    /// `v` itself when it is an expanded variable, else `v` in the
    /// enclosing loops' iteration.
    fn or_low(&self, v: &String) -> String {
        if self.known.contains(v) {
            v.clone()
        } else {
            format!("{v}{}", self.low)
        }
    }

    /// `o` in this iteration when that variable exists, else `o` itself.
    fn output_name(&self, o: &String) -> String {
        let with = format!("{o}{}", self.full);
        if self.known.contains(&with) {
            with
        } else {
            o.clone()
        }
    }

    /// `RepeatStart`, `RepeatEnd` or `Delay`: removed; the name of its
    /// output and what it passes on.
    fn pass_through(&self) -> Result<(String, String)> {
        let (f, full, low) = (self.f, &self.full, &self.low);
        let (rid, prev) = match f.r#type.as_str() {
            "RepeatStart" | "RepeatEnd" => {
                let rp = f
                    .repeat_param
                    .as_ref()
                    .ok_or_else(|| self.fail(format!("{:?} has no repeat_param", f.name)))?;
                (rp.repeat_id.as_str(), rp.times)
            }
            _ => (self.recurrent_param()?.repeat_id.as_str(), 0),
        };
        let source = match f.r#type.as_str() {
            "RepeatStart" => match self.needs_loop()? {
                0 => self.or_low(self.input(0)?),
                t => format!("{}{low}_{rid}[{}]", self.input(1)?, t - 1),
            },
            "RepeatEnd" => format!("{}{full}_{rid}[{}]", self.input(0)?, prev - 1),
            _ => match self.needs_loop()? {
                0 => self.or_low(self.input(1)?),
                t => format!("{}{low}_{rid}[{}]", self.input(0)?, t - 1),
            },
        };
        Ok((self.output_name(self.first_output()?), source))
    }

    /// `RecurrentInput`: one `Split` along its axis, in the first iteration
    /// of its loop only.
    fn recurrent_input(&self, variables: &[Variable]) -> Result<Option<Function>> {
        let (f, low) = (self.f, &self.low);
        if self.t.is_some_and(|t| t > 0) {
            return Ok(None);
        }
        let rp = self.recurrent_param()?;
        let inputs: Vec<String> = f.input.iter().map(|v| self.or_low(v)).collect();
        let first = inputs
            .first()
            .ok_or_else(|| self.fail(format!("{:?} has no input", f.name)))?;
        let dims = variables
            .iter()
            .find(|v| v.name == *first)
            .map(|v| v.shape.as_ref().map(|s| s.dim.clone()).unwrap_or_default())
            .ok_or_else(|| self.fail(format!("{:?} reads unknown variable {first:?}", f.name)))?;
        let axis = usize::try_from(rp.axis).ok().filter(|&a| a < dims.len());
        let Some(axis) = axis else {
            return Err(self.fail(format!(
                "{:?}: axis {} is outside the shape {dims:?} of {first:?}",
                f.name, rp.axis
            )));
        };
        let mut len = dims[axis];
        if len < 1 {
            len = self.unroll.net.batch_size;
        }
        let len = usize::try_from(len).unwrap_or(0);
        if len as u64 > self.unroll.budget.get() {
            return Err(self.fail("RecurrentInput splits into too many outputs".into()));
        }
        let out = self.first_output()?;
        Ok(Some(Function {
            name: format!("{}{low}", f.name),
            r#type: "Split".into(),
            repeat_id: Vec::new(),
            input: inputs,
            output: (0..len)
                .map(|v| format!("{out}{low}_{}[{v}]", rp.repeat_id))
                .collect(),
            repeat_param: None,
            recurrent_param: None,
            parameter: Some(function::Parameter::SplitParam(SplitParameter {
                axis: rp.axis,
            })),
            ..f.clone()
        }))
    }

    /// `RecurrentOutput`: one `Stack` of its input's iterations.
    fn recurrent_output(&self) -> Result<Function> {
        let (f, full) = (self.f, &self.full);
        let rp = self.recurrent_param()?;
        let len = usize::try_from(rp.length).unwrap_or(0);
        if len as u64 > self.unroll.budget.get() {
            return Err(self.fail("RecurrentOutput stacks too many inputs".into()));
        }
        let i0 = self.input(0)?;
        Ok(Function {
            name: format!("{}{full}", f.name),
            r#type: "Stack".into(),
            repeat_id: Vec::new(),
            input: (0..len)
                .map(|v| format!("{i0}{full}_{}[{v}]", rp.repeat_id))
                .collect(),
            output: f.output.iter().map(|o| self.output_name(o)).collect(),
            repeat_param: None,
            recurrent_param: None,
            parameter: Some(function::Parameter::StackParam(StackParameter {
                axis: rp.axis,
            })),
            ..f.clone()
        })
    }

    /// Any other function: copied with its names in this iteration.
    fn plain(&self) -> Function {
        let (f, full, low) = (self.f, &self.full, &self.low);
        let inputs = f
            .input
            .iter()
            .map(|v| {
                let mut v = v.clone();
                for (id, i) in f.repeat_id.iter().zip(self.idx) {
                    v = v.replace(&format!("{{{id}}}"), &format!("[{i}]"));
                }
                if self.known.contains(&v) {
                    return v;
                }
                let with = format!("{v}{full}");
                if self.known.contains(&with) {
                    with
                } else {
                    format!("{v}{low}")
                }
            })
            .collect();
        Function {
            name: format!("{}{full}", f.name),
            repeat_id: Vec::new(),
            input: inputs,
            output: f.output.iter().map(|o| self.output_name(o)).collect(),
            ..f.clone()
        }
    }
}

/// Wires the consumers of removed pass-through functions to their sources
/// (following chains of aliases) and drops the aliased variables.
pub(super) fn resolve_aliases(
    functions: &mut [Function],
    variables: &mut Vec<Variable>,
    alias: &HashMap<String, String>,
) {
    let resolve = |name: &String| -> String {
        let mut cur = name;
        for _ in 0..=alias.len() {
            match alias.get(cur) {
                Some(next) => cur = next,
                None => break,
            }
        }
        cur.clone()
    };
    for f in functions.iter_mut() {
        for i in &mut f.input {
            *i = resolve(i);
        }
    }
    variables.retain(|v| !alias.contains_key(&v.name));
}
