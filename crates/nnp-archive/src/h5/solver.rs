//! Solver states (`Solver.save_states` files): reading and writing.

use std::io::Write;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use tensor_core::{Bytes, MappedFile, Tensor};

use crate::{Error, ReadOptions, Result};

use super::decode::tensors;
use super::{DatasetSpec, read_map_range, write_all_of};

/// A solver state as `Solver.save_states` writes it: per-parameter state
/// datasets (`<param>/m`, `<param>/v`, a scalar int64 `<param>/t`, ...)
/// without `need_grad`, which nnabla reads with `Solver.load_states` (its
/// parameter loaders refuse such a file). The tensors are in path order,
/// as h5py lists them.
#[derive(Debug, Clone)]
pub struct SolverState<'a> {
    /// `(dataset path without the leading '/', tensor)`, in path order.
    pub tensors: Vec<(String, Tensor<'a>)>,
    /// Each dataset's `index` attribute (nnabla writes the state's position
    /// in the solver for all but `t`), in the order of `tensors`.
    pub index: Vec<Option<i64>>,
}

impl SolverState<'_> {
    /// True when `e` is what reading a solver state as parameters gives
    /// (some dataset has no `need_grad`): try [`solver_state_from_map_range`].
    pub fn may_be(e: &Error) -> bool {
        matches!(e, Error::MissingNeedGrad { .. })
    }
}

/// Reads the solver state at `range` of a memory map (a standalone `.h5`
/// or an `.optimizer` member of an `.nnp`). Nothing is copied. Refused when
/// no dataset path has a state name after the parameter's
/// (`<param>/<state>`), or when datasets carry `need_grad` (a parameter
/// file).
pub fn solver_state_from_map_range(
    map: &Arc<MappedFile>,
    range: Range<usize>,
    opts: &ReadOptions,
) -> Result<SolverState<'static>> {
    let (mut raw, base) = read_map_range(map, range, opts)?;
    if let Some(r) = raw.iter().find(|r| r.need_grad.is_some()) {
        return Err(Error::BadData {
            dataset: r.name.clone(),
            reason: "has need_grad: a parameter file, not a solver state".into(),
        });
    }
    if let Some(r) = raw.iter().find(|r| !r.name.contains('/')) {
        return Err(Error::BadData {
            dataset: r.name.clone(),
            reason: "a solver state names its datasets <parameter>/<state>".into(),
        });
    }
    raw.sort_by(|a, b| a.name.cmp(&b.name));
    let index = raw.iter().map(|r| r.index).collect();
    let tensors = tensors(raw, |r| {
        Ok(Bytes::Mapped(Arc::clone(map), base + r.start..base + r.end))
    })?;
    Ok(SolverState {
        tensors: tensors.into_iter().map(|(n, t, _)| (n, t)).collect(),
        index,
    })
}

/// Writes a solver state as `Solver.save_states` does: one dataset per
/// tensor, with its `index` attribute where it has one and no `need_grad`.
/// Streams through [`StreamWriter`](super::StreamWriter).
pub fn write_solver_state<W: Write>(w: W, state: &SolverState<'_>) -> Result<()> {
    let specs: Vec<DatasetSpec> = state
        .tensors
        .iter()
        .zip(state.index.iter().chain(std::iter::repeat(&None)))
        .map(|((name, t), index)| {
            let s = DatasetSpec::new(name.clone(), t.dtype(), t.dims());
            match index {
                Some(i) => s.with_index(*i),
                None => s,
            }
        })
        .collect();
    write_all_of(w, &specs, state.tensors.iter().map(|(_, t)| t))
}

/// Saves a solver state at `path`, atomically (see [`write_solver_state`]).
pub fn save_solver_state(path: impl AsRef<Path>, state: &SolverState<'_>) -> Result<()> {
    tensor_core::io::write_atomic(path, |w| write_solver_state(w, state))
}
