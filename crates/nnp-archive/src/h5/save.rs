//! Writing parameter files: the dataset tree and the one-call writers.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use tensor_core::{DType, Tensor};

use crate::{Error, ParamSpec, Parameter, Result};

use super::{DatasetSpec, StreamWriter};

/// True for the element types the `.h5` writer stores (f16, f32, f64, the
/// integers and bool).
pub fn can_hold(dtype: DType) -> bool {
    super::write::can_hold(dtype)
}

pub(super) enum Node {
    Group(BTreeMap<String, Node>),
    Dataset(usize),
}

pub(super) fn insert_path(root: &mut BTreeMap<String, Node>, name: &str, idx: usize) -> Result<()> {
    let invalid = |reason| Error::InvalidName {
        name: name.to_string(),
        reason,
    };
    let parts: Vec<&str> = name.split('/').collect();
    for p in &parts {
        if p.is_empty() {
            return Err(invalid("it has an empty path component"));
        }
        if *p == "." {
            return Err(invalid("`.` is not a link name"));
        }
        if p.contains('\0') {
            return Err(invalid("it contains NUL"));
        }
    }
    let (leaf, groups) = match parts.split_last() {
        Some(x) => x,
        None => return Err(invalid("it is empty")),
    };
    let mut cur = root;
    for g in groups {
        let node = cur
            .entry((*g).to_string())
            .or_insert_with(|| Node::Group(BTreeMap::new()));
        cur = match node {
            Node::Group(m) => m,
            Node::Dataset(_) => return Err(invalid("a prefix of it is another parameter")),
        };
    }
    match cur.get(*leaf) {
        Some(Node::Dataset(_)) => Err(invalid("it is given twice")),
        Some(Node::Group(_)) => Err(invalid("it is also a prefix of another parameter")),
        None => {
            cur.insert((*leaf).to_string(), Node::Dataset(idx));
            Ok(())
        }
    }
}

/// Writes the datasets of `specs` with the data of `tensors` (same order).
pub(super) fn write_all_of<'t, 'b: 't, W: Write>(
    w: W,
    specs: &[DatasetSpec],
    tensors: impl IntoIterator<Item = &'t Tensor<'b>>,
) -> Result<()> {
    let mut sw = StreamWriter::with_datasets(w, specs)?;
    for t in tensors {
        sw.write_data(t)?;
    }
    sw.finish().map(|_| ())
}

/// Writes an nnabla `.h5` parameter file to `w`: one dataset per
/// `(name, tensor, need_grad)`, `index` = position in the iteration (the
/// same as [`write()`], from borrowed tensors).
///
/// Streams through [`StreamWriter`]: metadata first, then each tensor's
/// bytes straight from the tensor (a column-major tensor is reordered into
/// one temporary buffer at a time).
pub fn write_tensors<'t, 'b: 't, W: Write>(
    w: W,
    params: impl IntoIterator<Item = (&'t str, &'t Tensor<'b>, bool)>,
) -> Result<()> {
    let items: Vec<(&str, &Tensor<'b>, bool)> = params.into_iter().collect();
    let specs = items
        .iter()
        .enumerate()
        .map(|(i, (name, t, need_grad))| {
            DatasetSpec::parameter(&ParamSpec::new(*name, t.dtype(), t.dims(), *need_grad), i)
        })
        .collect::<Result<Vec<_>>>()?;
    write_all_of(w, &specs, items.iter().map(|(_, t, _)| *t))
}

/// Writes an nnabla `.h5` parameter file to `w`: one dataset per parameter,
/// in their order (see [`write_tensors`]).
pub fn write<'t, 'b: 't, W: Write>(
    w: W,
    params: impl IntoIterator<Item = &'t Parameter<'b>>,
) -> Result<()> {
    write_tensors(
        w,
        params
            .into_iter()
            .map(|p| (p.name.as_str(), &p.tensor, p.need_grad)),
    )
}

/// Saves parameters as an `.h5` file at `path`, atomically (temporary file, then rename).
pub fn save<'t, 'b: 't>(
    path: impl AsRef<Path>,
    params: impl IntoIterator<Item = &'t Parameter<'b>>,
) -> Result<()> {
    tensor_core::io::write_atomic(path, |w| write(w, params))
}
