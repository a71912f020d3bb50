//! NNabla text (`.nntxt`, `.prototxt`) and binary (`.protobuf`) files by
//! random access. A `.protobuf` is walked field by field through
//! [`ReadAt`] by `nnabla-proto`'s index ([`merge_index`], the walk its
//! whole-file reader makes too): its `parameter` entries' names and shapes
//! read and their packed float data located, never read; every other field
//! merged into the model (the networks, shown as the graph). The `.nnp`
//! members are walked the same way (`nnp.rs`).
//!
//! A `.protobuf` whose parameter data is unpacked or split into several
//! runs, and every `.nntxt`, is parsed whole by `nnabla-proto`
//! (`formats::nnabla::load`), its parameters held in memory
//! ([`Layout::Held`]); so are the NNabla files `nnp.rs` and `h5.rs` do not
//! locate. Either way the tensors, graph and metadata are the ones the
//! whole-file parser gives: a name stored twice is listed once, at its
//! first position, with the last stored value and `need_grad`.

use std::collections::HashMap;
use std::sync::Arc;

use nnabla_proto::index::{ParamData, Scattered, merge_index};
use nnabla_proto::{NNablaProtoBuf, ParamTensor};
use serde_json::json;
use tensor_core::{DType, Limits, MappedFile};

use super::{FileIndex, IndexedTensor, Layout, ReadAt, count, overflow};
use crate::codec::StoredTensor;
use crate::{Error, Format, Result};

/// The walk stops: an error (the whole-file path has one too), or a layout
/// this path does not index (the whole-file path reads it).
pub(super) enum Stop {
    Err(Error),
    Whole,
}

impl<E: Into<Error>> From<E> for Stop {
    fn from(e: E) -> Self {
        Stop::Err(e.into())
    }
}

pub(super) type Walk<T> = std::result::Result<T, Stop>;

/// One `parameter` entry: name, dims, `need_grad` and its data's place.
pub(super) struct Entry {
    pub(super) name: String,
    pub(super) dtype: DType,
    pub(super) dims: Vec<usize>,
    pub(super) need_grad: bool,
    pub(super) offset: u64,
    pub(super) len: u64,
    /// How the data is laid out from `offset` (in a deflated member).
    pub(super) layout: Layout,
}

impl Entry {
    /// A parameter the whole-file reader gave: the tensor held, its bytes
    /// shared, not copied, where the reader's are ([`super::layout::held`]).
    /// `map` is the file the reader read (the tensor's bytes inside it
    /// are shared with it).
    pub(super) fn held(p: &ParamTensor<'_>, map: &Arc<MappedFile>) -> Result<Entry> {
        Ok(Entry {
            name: p.name.clone(),
            dtype: p.tensor.dtype(),
            dims: p.tensor.dims().to_vec(),
            need_grad: p.need_grad,
            offset: 0,
            len: p.tensor.bytes().len() as u64,
            layout: super::layout::held(p.tensor.clone().rebase(map))?,
        })
    }
}

/// `e`, met in the `.protobuf` message `name`, in this path's words: a
/// wire error names the member and the byte.
pub(super) fn in_message(name: &str, e: nnabla_proto::Error) -> Error {
    match e {
        nnabla_proto::Error::Wire { offset, message } => Error::Malformed {
            part: "protobuf message",
            at: Some(offset as u64),
            why: format!("{name}: {message} (at byte {offset} of the archive)"),
        },
        nnabla_proto::Error::Tensor(e) => Error::Core(e),
        nnabla_proto::Error::Read(e) => Error::Io(e),
        e @ nnabla_proto::Error::Parameter { .. } => Error::Malformed {
            part: "protobuf parameter",
            at: None,
            why: e.to_string(),
        },
        e => e.into(),
    }
}

/// Walks the `.protobuf` message `name` at `[at, at + size)` of `r` (a
/// member, or a whole `.protobuf` file) with `nnabla-proto`'s index: its
/// parameters in `found`, every other field merged into `model`;
/// [`Stop::Whole`] for a parameter whose data is not one packed run.
pub(super) fn protobuf_member<R: ReadAt + ?Sized>(
    r: &R,
    (name, at, size): (&str, u64, u64),
    limits: &Limits,
    model: &mut NNablaProtoBuf,
    found: &mut Vec<Entry>,
) -> Walk<()> {
    let opts = nnabla_proto::ReadOptions::default().with_limits(*limits);
    let mut located = true;
    let all = merge_index(model, r, at, size, &opts, Scattered::Stop, |p| {
        // (with `Stop`, every parameter the walk gives is one packed run)
        let ParamData::Packed { offset, len } = p.data else {
            located = false;
            return Ok(());
        };
        found.push(Entry {
            name: p.name,
            dtype: DType::F32,
            dims: p.dims,
            need_grad: p.need_grad,
            offset,
            len,
            layout: Layout::Contiguous,
        });
        Ok(())
    })
    .map_err(|e| in_message(name, e))?;
    if all && located {
        Ok(())
    } else {
        Err(Stop::Whole)
    }
}

impl FileIndex {
    /// A `.nntxt` or `.protobuf` file (see the module): a `.protobuf`
    /// walked, its packed parameters located; anything else parsed whole.
    pub(crate) fn read_nnabla<R: ReadAt + ?Sized>(&mut self, r: &R, format: Format) -> Result<()> {
        if format == Format::NnablaProtobuf {
            let limits = self.limits;
            let mut model = NNablaProtoBuf::default();
            let mut entries = Vec::new();
            let msg = ("the file", 0, r.len());
            match protobuf_member(r, msg, &limits, &mut model, &mut entries) {
                Ok(()) => {
                    self.push_entries(entries, true)?;
                    return self.set_model(model);
                }
                Err(Stop::Whole) => {}
                Err(Stop::Err(e)) => return Err(e),
            }
        }
        let src = self.whole(r, format)?;
        let (model, params) = crate::formats::nnabla::load(&src, &self.limits)?;
        // (the parser counted them against the limits, if it does)
        let entries = params.iter().map(|p| Entry::held(p, &src.map));
        self.push_entries(entries.collect::<Result<_>>()?, false)?;
        self.set_model(model)
    }

    /// The model read (the networks, shown as the graph).
    pub(super) fn set_model(&mut self, model: NNablaProtoBuf) -> Result<()> {
        self.graph = Some(crate::formats::nnabla::graph(&model, &self.limits)?);
        self.nnabla_model = model != NNablaProtoBuf::default();
        self.nnabla = Some(std::sync::Arc::new(model));
        Ok(())
    }

    /// The parameters found, as the whole-file path registers them: a name
    /// given twice keeps its first position and takes the last entry;
    /// `counted`: each counted against [`Limits::max_tensors`] (false for
    /// parameters a whole-file parser gave, which counted them as it does).
    pub(super) fn push_entries(&mut self, entries: Vec<Entry>, counted: bool) -> Result<()> {
        let limits = self.limits;
        // a name given twice keeps its first position and takes the last entry
        let mut at: HashMap<String, usize> = HashMap::new();
        for e in entries {
            let numel = count(&e.dims).ok_or_else(|| overflow(&e.name))?;
            let stored = StoredTensor::from_parts(e.name.clone(), e.dims)
                .with("need_grad", json!(e.need_grad));
            let t = IndexedTensor::row_major(stored, e.dtype, e.offset, e.len, numel)
                .with_layout(e.layout);
            // as nnp-archive counts: before each registration
            if counted {
                limits.check_tensors(self.tensors.len() as u64 + 1)?;
            }
            match at.get(&e.name) {
                Some(&i) => {
                    self.tensors[i] = t;
                    self.repeated_names = true;
                }
                None => {
                    at.insert(e.name, self.tensors.len());
                    self.tensors.push(t);
                }
            }
        }
        Ok(())
    }
}
