//! A model read through [`ReadAt`] without its tensor data
//! ([`Model::index`]): the `ModelProto` walked field by field, every field
//! copied except each main-graph initializer's `raw_data` and typed fields
//! of numbers (`float_data`, `int32_data`, `int64_data`, `double_data`,
//! `uint64_data`), whose places are recorded (the typed fields checked
//! where that is cheap; a packed varint run passed over by its length, its
//! values counted at open or at the tensor's first read: see `index/typed.rs`).
//! The copy (nodes, attributes, inputs, outputs, initializers' names,
//! types and shapes) is then read by [`Model::parse_with`], with its
//! checks, and each initializer's layout checked as [`tensor_from_proto`]
//! checks it. The tensors of `Constant` nodes follow the initializers, as
//! [`Model::constants`] lists them.
//!
//! Read this way: every model [`Model::from_map`] reads but for proto2
//! groups (`Ok(None)`: read it whole). An initializer's `raw_data`
//! (contiguous little-endian bytes, what exporters write) and one packed
//! run of `float_data` or `double_data` are byte ranges
//! ([`TensorData::Contiguous`]); other typed fields are decoded a slice at
//! a time ([`TensorData::Typed`]). `string_data` is copied and refused as
//! [`tensor_from_proto`] refuses it (no string type), as is external data.
//!
//! [`tensor_from_proto`]: crate::tensor_from_proto

use std::sync::Arc;

use tensor_core::wire::ReadAt;
use tensor_core::{DType, Limits};

use crate::read::{check_raw_len, tensor_layout};
use crate::{ConstantValue, Error, Model, ReadOptions, Result, TensorProto};

mod typed;
mod walk;

pub use typed::TypedField;
use typed::{Meta, OPEN_COUNT};
use walk::{Init, Stop, strip, walk};

/// Where a tensor's bytes are.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum TensorData {
    /// Contiguous little-endian bytes, in the tensor's dtype, at its offset.
    Contiguous,
    /// A typed field's values, decoded a slice at a time
    /// ([`TypedField::read`]); the offset is where the field starts.
    Typed(Box<TypedField>),
    /// The bytes themselves (a `Constant` node's value that is not one
    /// `TensorProto` in the file: `value_float(s)`, `value_int(s)`); the
    /// offset is 0.
    Held(Arc<[u8]>),
}

/// One tensor of a [`ModelIndex`]: its name, type, shape and where its
/// data is.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct IndexedTensor {
    /// The initializer's name, or a `Constant` node's first output.
    pub name: String,
    /// Its element type.
    pub dtype: DType,
    /// Its dimensions.
    pub dims: Vec<usize>,
    /// How many elements it has.
    pub numel: u64,
    /// Where its data starts in the file (see [`TensorData`]).
    pub offset: u64,
    /// Its length in bytes, once decoded.
    pub len: u64,
    /// How its bytes are laid out.
    pub data: TensorData,
}

/// A model read by [`Model::index`]: the model without its main-graph
/// initializers' data, and every tensor [`Model::initializers`] then
/// [`Model::constants`] give, located.
#[derive(Debug, Clone)]
pub struct ModelIndex {
    /// The model, its initializers without `raw_data` and typed fields.
    pub model: Model,
    /// The initializers, then the tensors of `Constant` nodes.
    pub tensors: Vec<IndexedTensor>,
}

/// The tensor `name` of `dtype` and `dims` with its data at `offset`.
fn located(
    name: String,
    dtype: DType,
    dims: Vec<usize>,
    offset: u64,
    len: u64,
    data: TensorData,
) -> Result<IndexedTensor> {
    let numel = dims
        .iter()
        .try_fold(1u64, |n, &d| n.checked_mul(u64::try_from(d).ok()?))
        .ok_or_else(|| Error::Invalid(format!("tensor {name:?}: its size overflows")))?;
    Ok(IndexedTensor {
        name,
        dtype,
        dims,
        numel,
        offset,
        len,
        data,
    })
}

/// The data of the tensor `t` (its `TensorProto` walked as `init`) as
/// [`crate::tensor_from_proto`] checks it.
fn locate<R: ReadAt + ?Sized>(
    r: &R,
    t: &TensorProto,
    name: String,
    init: Init,
    limits: &Limits,
    budget: &mut u64,
) -> Result<IndexedTensor> {
    let (dtype, dims, byte_len) = tensor_layout(t, limits)?;
    let len = byte_len as u64;
    if let Some((offset, raw)) = init.raw {
        check_raw_len(&name, dtype, &dims, byte_len, raw)?;
        return located(name, dtype, dims, offset, len, TensorData::Contiguous);
    }
    // as `tensor_from_proto` checks them (the count maybe at the first
    // read: see `typed`)
    limits.check_alloc("tensor data", len)?;
    let numel = dims
        .iter()
        .try_fold(1u64, |n, &d| n.checked_mul(d as u64))
        .unwrap_or(u64::MAX);
    let meta = Meta {
        name: &name,
        dtype,
        dims: &dims,
        numel,
        at: init.at,
        end: init.end,
    };
    let (offset, data) = init.typed.layout(r, &meta, budget)?;
    located(name, dtype, dims, offset, len, data)
}

/// The tensor of a `Constant` node's value `v`: located in the file when
/// it is a `TensorProto` walked once (`found`), else held (decoded from the
/// model). `None` for a type `tensor-core` has no equivalent of (left out,
/// as [`Model::constants`] leaves it out).
fn constant<R: ReadAt + ?Sized>(
    r: &R,
    name: String,
    v: ConstantValue<'_>,
    found: Option<Init>,
    limits: &Limits,
    budget: &mut u64,
) -> Result<Option<IndexedTensor>> {
    if let ConstantValue::Tensor(t) = v {
        if let Err(Error::UnsupportedDataType { .. }) = tensor_layout(t, limits) {
            return Ok(None);
        }
        if let Some(init) = found {
            return locate(r, t, name, init, limits, budget).map(Some);
        }
    }
    let t = v.tensor(None, limits)?;
    let held = TensorData::Held(Arc::from(t.bytes()));
    let len = t.bytes().len() as u64;
    located(name, t.dtype(), t.dims().to_vec(), 0, len, held).map(Some)
}

impl Model {
    /// Reads the model in `r` without its tensor data (see the
    /// [module](crate::index)), under `opts`' limits. `Ok(None)` for a
    /// model with proto2 groups, which [`Model::from_map`] reads whole.
    pub fn index<R: ReadAt + ?Sized>(r: &R, opts: &ReadOptions) -> Result<Option<ModelIndex>> {
        let limits = opts.limits;
        let (stripped, found, mut nodes) = match strip(r, &limits) {
            Ok(x) => x,
            Err(Stop::Whole) => return Ok(None),
            Err(Stop::Err(e)) => return Err(e),
        };
        let model = Model::parse_with(&stripped, opts)?;
        drop(stripped);
        let graph = model.graph_proto();
        let inits = &graph.initializer;
        if inits.len() != found.len() {
            return Ok(None);
        }
        // the typed fields the values are not read from, checked first (as
        // prost checks every field before any tensor is looked at)
        for (t, init) in inits.iter().zip(&found) {
            let source = match init.raw {
                Some(_) => None,
                None => tensor_layout(t, &limits).ok().map(|(dtype, _, _)| dtype),
            };
            init.typed.check_others(r, source, init.end)?;
        }
        let mut budget = OPEN_COUNT;
        let mut tensors = Vec::with_capacity(inits.len());
        for (t, init) in inits.iter().zip(found) {
            let name = t.name.clone().unwrap_or_default();
            tensors.push(locate(r, t, name, init, &limits, &mut budget)?);
        }
        // then the tensors of the `Constant` nodes, as `Model::constants`
        // lists them
        for (i, n) in graph.node.iter().enumerate() {
            let Some((a, v)) = crate::constant_attribute(n) else {
                continue;
            };
            // (both recorded in increasing position)
            let walked = nodes
                .binary_search_by_key(&i, |(at, _)| *at)
                .ok()
                .and_then(|k| nodes.get_mut(k))
                .and_then(|(_, attrs)| {
                    let k = attrs.binary_search_by_key(&a, |(at, _)| *at).ok()?;
                    attrs.get_mut(k)?.1.take()
                });
            let name = n.output.first().cloned().unwrap_or_default();
            if let Some(t) = constant(r, name, v, walked, &limits, &mut budget)? {
                tensors.push(t);
            }
        }
        Ok(Some(ModelIndex { model, tensors }))
    }

    /// The model in `r` without its main-graph initializers' `raw_data`
    /// (the rest, typed fields of numbers included, read into memory), and
    /// for each initializer (in order) whether it had one: what a writer
    /// that streams those initializers' data from the file starts from.
    /// `Ok(None)` for a model with proto2 groups.
    pub fn without_raw_data<R: ReadAt + ?Sized>(
        r: &R,
        opts: &ReadOptions,
    ) -> Result<Option<(Model, Vec<bool>)>> {
        let limits = opts.limits;
        let mut had_raw = Vec::new();
        let walked = walk(
            r,
            0,
            r.len(),
            &limits,
            &[walk::MODEL_GRAPH],
            None,
            &mut |c, _, at, n, out| {
                let graph = walk(
                    c.r,
                    at,
                    n,
                    &limits,
                    &[walk::GRAPH_INITIALIZER],
                    None,
                    &mut |c, _, at, n, out| {
                        let mut raw = false;
                        let tensor = walk(
                            c.r,
                            at,
                            n,
                            &limits,
                            &[walk::TENSOR_RAW_DATA],
                            None,
                            &mut |_, _, _, _, _| {
                                raw = true;
                                Ok(())
                            },
                        )?;
                        had_raw.push(raw);
                        walk::put_message(out, walk::GRAPH_INITIALIZER, &tensor);
                        Ok(())
                    },
                )?;
                walk::put_message(out, walk::MODEL_GRAPH, &graph);
                Ok(())
            },
        );
        let bytes = match walked {
            Ok(b) => b,
            Err(Stop::Whole) => return Ok(None),
            Err(Stop::Err(e)) => return Err(e),
        };
        Ok(Some((Model::parse_with(&bytes, opts)?, had_raw)))
    }
}
