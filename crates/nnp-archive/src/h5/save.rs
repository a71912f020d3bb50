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

/// The name of the attribute that keeps a parameter's own name on a
/// dataset stored under another path (see [`h5_path`]). nnabla's loaders
/// read only `need_grad` and `index`, so they ignore it.
pub const NAME_ATTRIBUTE: &str = "original_name";

/// The HDF5 path (without the leading `/`) a parameter named `name` is
/// stored at: `name` itself when HDF5 can hold it, else `name` with each
/// empty path component written `_` and each `.` component `_.` (the
/// torch.onnx 2.x names: `/model.22/Unsqueeze_12_output_0` is stored at
/// `_/model.22/Unsqueeze_12_output_0`). A dataset stored under another path
/// than its name keeps the name in its [`NAME_ATTRIBUTE`] attribute, which
/// [`crate::h5`]'s readers give back; nnabla, which ignores it, registers
/// the parameter under the path. A name with a NUL character is refused.
///
/// ```
/// use nnp_archive::h5::h5_path;
/// assert_eq!(h5_path("fc/W").unwrap(), "fc/W");
/// assert_eq!(h5_path("/model.0/w").unwrap(), "_/model.0/w");
/// assert_eq!(h5_path("a//b/").unwrap(), "a/_/b/_");
/// assert!(h5_path("a\0b").is_err());
/// ```
pub fn h5_path(name: &str) -> Result<std::borrow::Cow<'_, str>> {
    if name.contains('\0') {
        return Err(Error::InvalidName {
            name: name.to_string(),
            reason: "it contains NUL",
        });
    }
    if name.split('/').all(|c| !c.is_empty() && c != ".") {
        return Ok(std::borrow::Cow::Borrowed(name));
    }
    let parts: Vec<&str> = name
        .split('/')
        .map(|c| match c {
            "" => "_",
            "." => "_.",
            c => c,
        })
        .collect();
    Ok(std::borrow::Cow::Owned(parts.join("/")))
}

/// The type and value of the [`NAME_ATTRIBUTE`] a dataset named `name`
/// has: `None` when it is stored at its name. The value is a fixed-length
/// UTF-8 string padded with NULs (what h5py and hdf5-pure write for a
/// fixed-length string attribute), of at least one byte.
pub(super) fn name_attribute(name: &str) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
    if h5_path(name)? == name {
        return Ok(None);
    }
    let mut value = name.as_bytes().to_vec();
    if value.is_empty() {
        value.push(0);
    }
    let size = u32::try_from(value.len()).map_err(|_| Error::InvalidName {
        name: name.to_string(),
        reason: "it is too long for an HDF5 string",
    })?;
    // class 3 (string), version 1; padding 1 (null pad), character set 1 (UTF-8)
    let mut dt = vec![0x13, 0x11, 0, 0];
    dt.extend_from_slice(&size.to_le_bytes());
    Ok(Some((dt, value)))
}

/// Places the dataset `idx` named `name` in the tree at its [`h5_path`].
pub(super) fn insert_path(root: &mut BTreeMap<String, Node>, name: &str, idx: usize) -> Result<()> {
    let invalid = |reason| Error::InvalidName {
        name: name.to_string(),
        reason,
    };
    let path = h5_path(name)?;
    let parts: Vec<&str> = path.split('/').collect();
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
        Some(Node::Dataset(_)) => Err(invalid(
            "it is given twice, or another name is stored at the same HDF5 path",
        )),
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
