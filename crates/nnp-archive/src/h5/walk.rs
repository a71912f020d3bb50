//! The walk of an `.h5` file's groups that [`super::parse_with`] and
//! [`super::locate`] share: every object visited once, as h5py's
//! `visititems` visits it (nnabla's loader lists datasets that way).
//!
//! Children are visited depth first, in name order (byte order, as HDF5's
//! name index sorts them), each object at most once by the address of its
//! object header ([`super::links`], whatever the group's storage: symbol
//! table, compact links or dense links): a dataset behind several hard
//! links is one parameter, named by the first path in that order, and read
//! once; a group behind several links is walked once; a link back to a
//! group being walked (a cycle) is passed over. Soft and external links are
//! not followed (h5py's `visititems` does not follow them). A group's links
//! are read before `hdf5-pure` lists its children, so their structures are
//! checked by the bounded reader first; a child `hdf5-pure` lists that those
//! links do not name is walked without an address, and the depth limit
//! [`MAX_DEPTH`] stays as a guard for it. Dense link storage reads at most
//! twice the file's bytes over the whole walk ([`super::dense`]).
//!
//! Chunked data read whole is charged to the input's [`InflateBudget`]
//! before it is inflated: every chunk of the grid at its decoded size; a
//! chunk larger than both its dataset and [`MAX_CHUNK_OVER`] is refused.

use std::collections::{HashMap, HashSet};

use hdf5_pure::{Layout, Source};
use tensor_core::{InflateBudget, Limits, Shape};

use super::dense::Budget;
use super::links::{self, Geometry, LinkError, Target};
use super::{
    Calls, MAX_DEPTH, Mode, RawData, RawParam, chunks, describe, h5err, map_dtype, truthy,
};
use crate::{Error, Result};

/// The largest chunk (decoded) a dataset smaller than it may have: a chunk
/// may pass its dataset's edge (an extendible dataset), not by more.
pub const MAX_CHUNK_OVER: u64 = 4 << 20;

/// What a walk reads from and charges.
pub(super) struct Input<'s> {
    /// The file's bytes (for the link structures `hdf5-pure` does not expose).
    pub src: &'s dyn Source,
    /// The file's length.
    pub len: u64,
    /// Inflation of chunked data read whole is charged here.
    pub budget: &'s InflateBudget,
}

/// One object to visit.
enum Item {
    Group {
        prefix: String,
        group: hdf5_pure::Group,
        depth: usize,
    },
    Dataset {
        path: String,
        ds: hdf5_pure::Dataset,
    },
}

/// Walks the file and collects every dataset, in visit order, each
/// hdf5-pure call run through `calls`.
pub(super) fn read_core<C: Calls>(
    file: &hdf5_pure::File,
    input: &Input<'_>,
    limits: &Limits,
    mode: Mode,
    calls: &C,
) -> Result<Vec<RawParam>> {
    let sb = file.superblock();
    let geometry = Geometry {
        offsets: usize::from(sb.offset_size),
        lengths: usize::from(sb.length_size),
        base: sb.base_address.get(),
    };
    // what dense link storage may read, for the whole walk
    let budget = Budget::for_file(input.len, limits);
    let mut out: Vec<RawParam> = Vec::new();
    let mut visited: u64 = 0;
    let mut seen: HashSet<u64> = HashSet::new();
    let root = Item::Group {
        prefix: String::new(),
        group: file.root(),
        depth: 0,
    };
    let mut stack: Vec<(Item, Option<u64>)> = vec![(root, Some(sb.root_group_address))];
    while let Some((item, addr)) = stack.pop() {
        // visited already (through another link)?
        if let Some(a) = addr
            && !seen.insert(a)
        {
            continue;
        }
        let (prefix, group, depth) = match item {
            Item::Dataset { path, ds } => {
                out.push(read_dataset(&path, &ds, input, limits, mode, calls)?);
                continue;
            }
            Item::Group {
                prefix,
                group,
                depth,
            } => (prefix, group, depth),
        };
        let here = if prefix.is_empty() { "/" } else { &prefix };
        // the links first: read by this crate's bounded reader, which checks
        // their structures before `hdf5-pure` walks them
        let targets = match addr {
            Some(a) => {
                let v = calls
                    .call(|| links::links_of(input.src, &geometry, a, &budget))?
                    .map_err(|e| match e {
                        LinkError::Format(message) => Error::Hdf5 {
                            context: here.to_string(),
                            message,
                        },
                        LinkError::Limit(e) => Error::Tensor(e),
                    })?;
                let mut m = HashMap::new();
                for (name, t) in v {
                    m.entry(name).or_insert(t);
                }
                Some(m)
            }
            None => None,
        };
        let datasets = calls
            .call(|| group.iter_datasets().map(Iterator::collect::<Vec<_>>))?
            .map_err(|e| h5err(here, e))?;
        let groups = calls
            .call(|| group.iter_groups().map(Iterator::collect::<Vec<_>>))?
            .map_err(|e| h5err(here, e))?;
        let mut children: Vec<(String, Item)> = Vec::new();
        for (name, ds) in datasets {
            let path = format!("{prefix}{name}");
            limits.check_name_len(path.len() as u64)?;
            children.push((name, Item::Dataset { path, ds }));
        }
        for (name, g) in groups {
            let p = format!("{prefix}{name}/");
            if depth + 1 > MAX_DEPTH {
                return Err(Error::Hdf5 {
                    context: p,
                    message: format!("groups nested deeper than {MAX_DEPTH} (a hard-link cycle?)"),
                });
            }
            limits.check_name_len(p.len() as u64)?;
            let item = Item::Group {
                prefix: p,
                group: g,
                depth: depth + 1,
            };
            children.push((name, item));
        }
        // pushed last name first: popped in name order, each group's
        // children before its next sibling (depth first)
        children.sort_by(|a, b| b.0.cmp(&a.0));
        for (name, item) in children {
            visited += 1;
            limits.check_tensors(visited)?;
            let addr = match targets.as_ref().map(|t| t.get(&name)) {
                // a soft or external link: not followed
                Some(Some(Target::Other)) => continue,
                Some(Some(Target::Hard(a))) => Some(*a),
                // not resolved here: visited without an address
                Some(None) | None => None,
            };
            stack.push((item, addr));
        }
    }
    Ok(out)
}

/// Reads one dataset's metadata, and its data unless contiguous (or, in
/// [`Mode::Locate`], unless compact).
fn read_dataset<C: Calls>(
    path: &str,
    ds: &hdf5_pure::Dataset,
    input: &Input<'_>,
    limits: &Limits,
    mode: Mode,
    calls: &C,
) -> Result<RawParam> {
    let datatype = calls.call(|| ds.datatype())?.map_err(|e| h5err(path, e))?;
    let (dtype, big_endian) = map_dtype(&datatype).ok_or_else(|| Error::UnsupportedDtype {
        dataset: path.to_string(),
        datatype: describe(&datatype),
    })?;
    let shape64 = calls.call(|| ds.shape())?.map_err(|e| h5err(path, e))?;
    limits.check_rank(shape64.len() as u64)?;
    let dims: Vec<usize> = shape64
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| Error::BadData {
            dataset: path.to_string(),
            reason: format!("dimensions {shape64:?} do not fit this platform"),
        })?;
    let nbytes = Shape::from(dims.clone()).byte_len(dtype)?;

    let attrs = calls.call(|| ds.attrs())?.map_err(|e| h5err(path, e))?;
    let need_grad = match attrs.get("need_grad") {
        Some(v) => Some(truthy(path, v)?),
        None => None,
    };
    let index = match attrs.get("index") {
        None => None,
        Some(v) => Some(v.as_i64().ok_or_else(|| Error::BadAttribute {
            dataset: path.to_string(),
            attr: "index",
            reason: format!("a {} is not an integer", v.type_name()),
        })?),
    };

    // a name HDF5 cannot hold, kept beside the path it is stored at (the
    // attribute is taken only where that path is the name's)
    let name = match attrs.get(super::NAME_ATTRIBUTE) {
        Some(hdf5_pure::AttrValue::String(n) | hdf5_pure::AttrValue::AsciiString(n))
            if super::h5_path(n).is_ok_and(|p| p == path) =>
        {
            n.clone()
        }
        _ => path.to_string(),
    };

    let layout = calls.call(|| ds.layout())?.map_err(|e| h5err(path, e))?;
    let data = data_of(
        path, ds, &layout, &dims, dtype, nbytes, input, limits, mode, calls,
    )?;
    Ok(RawParam {
        name,
        dtype,
        dims,
        need_grad,
        index,
        data,
        swap: big_endian && dtype.size() > 1,
    })
}

/// Where a dataset's data is, or its bytes.
#[allow(clippy::too_many_arguments)]
fn data_of<C: Calls>(
    path: &str,
    ds: &hdf5_pure::Dataset,
    layout: &Layout,
    dims: &[usize],
    dtype: tensor_core::DType,
    nbytes: usize,
    input: &Input<'_>,
    limits: &Limits,
    mode: Mode,
    calls: &C,
) -> Result<RawData> {
    let data_len = input.len;
    let bad = |reason: String| Error::BadData {
        dataset: path.to_string(),
        reason,
    };
    // what inflating every chunk of the grid makes, checked before any is
    let inflated = match layout {
        Layout::Chunked { chunk_shape, .. } => {
            grid_bytes(dims, dtype.size(), chunk_shape, nbytes).map_err(bad)?
        }
        _ => 0,
    };
    // let the HDF5 layer assemble the data, after bounding the size
    let read_all = || -> Result<RawData> {
        limits.check_alloc("HDF5 dataset", nbytes as u64)?;
        if inflated > 0 {
            input
                .budget
                .charge(&format!("HDF5 dataset {path:?}"), inflated)?;
        }
        if let Layout::Chunked { chunk_shape, .. } = layout {
            super::chunks::check_places(path, ds, dims, chunk_shape, calls)?;
        }
        let v = calls.call(|| ds.read_raw())?.map_err(|e| h5err(path, e))?;
        if v.len() != nbytes {
            return Err(bad(format!(
                "read {} bytes, the shape needs {nbytes}",
                v.len()
            )));
        }
        Ok(RawData::Owned(v))
    };
    Ok(match layout {
        Layout::Contiguous {
            address: Some(addr),
            size,
        } => {
            if *size != nbytes as u64 {
                return Err(bad(format!(
                    "contiguous storage is {size} bytes but shape {dims:?} of {dtype} needs {nbytes}"
                )));
            }
            match addr.checked_add(*size) {
                Some(e) if e <= data_len => RawData::Range(*addr..e),
                _ => {
                    return Err(bad(format!(
                        "data at offset {addr} ({nbytes} bytes) runs past the end of the {data_len}-byte file"
                    )));
                }
            }
        }
        Layout::Virtual => return Err(bad("virtual datasets are not supported".into())),
        // Chunked (maybe compressed): each chunk located
        Layout::Chunked { chunk_shape, .. } if mode == Mode::Locate && nbytes > 0 => chunks::index(
            path,
            ds,
            dims,
            dtype.size(),
            chunk_shape,
            data_len,
            limits,
            calls,
        )?,
        // Never-written contiguous storage or another layout: not located
        // (a zero-size one is read: it has no bytes; compact data is in
        // the object header, read as it is)
        Layout::Compact { .. } => read_all()?,
        _ if mode == Mode::Locate && nbytes > 0 => RawData::Elsewhere,
        _ => read_all()?,
    })
}

/// The bytes inflating every chunk of a dataset of `dims` (`nbytes` bytes)
/// makes, chunks of `chunk_shape`; an error for a chunk larger than both
/// the dataset and [`MAX_CHUNK_OVER`].
fn grid_bytes(
    dims: &[usize],
    element: usize,
    chunk_shape: &[u64],
    nbytes: usize,
) -> std::result::Result<u64, String> {
    if nbytes == 0 {
        return Ok(0);
    }
    if chunk_shape.len() != dims.len() || chunk_shape.contains(&0) {
        return Err(format!(
            "chunks of {chunk_shape:?} for a dataset of {dims:?}"
        ));
    }
    let chunk = chunk_shape
        .iter()
        .try_fold(element as u64, |n, &c| n.checked_mul(c));
    let count = dims
        .iter()
        .zip(chunk_shape)
        .try_fold(1u64, |n, (&d, &c)| n.checked_mul((d as u64).div_ceil(c)));
    match (chunk, count) {
        (Some(c), _) if c > (nbytes as u64).max(MAX_CHUNK_OVER) => Err(format!(
            "a chunk of {chunk_shape:?} ({c} bytes) is larger than the {nbytes}-byte dataset"
        )),
        (Some(c), Some(n)) => n
            .checked_mul(c)
            .ok_or_else(|| format!("{n} chunks of {c} bytes overflow")),
        _ => Err(format!("chunks of {chunk_shape:?} overflow")),
    }
}
