//! NNabla `.nnp` archives and standalone `.protobuf` files by random
//! access: the network members read whole (they are small), each
//! `.protobuf` member (or the whole `.protobuf` file) walked field by field
//! through [`ReadAt`] by `nnabla-proto`'s index
//! ([`nnabla_proto::index::merge_index`], the walk its whole-file reader
//! makes too), its `parameter` entries' names and shapes read and their
//! packed float data located, never read; every other field merged into
//! the model (the networks, shown as the graph).
//!
//! A stored `parameter.h5` member is located the same way, dataset by
//! dataset (see [`super::h5`]).
//!
//! A deflated `.protobuf` member is walked the same way over its inflated
//! bytes, once, as they are inflated (`deflate::walk_inflated`: the last
//! 64 KiB kept, never the whole member), its end and CRC-32 checked; each
//! parameter's data is located in the inflated bytes and inflated when it
//! is read (see [`super::deflate`]).
//!
//! A deflated `.h5` member likewise: its HDF5 structure walked once over
//! its inflated bytes as they are inflated, no further than its last
//! header (the last 64 KiB kept; a read further back, an object header
//! before the last one read, inflates again from the member's start), its
//! end and CRC-32 checked at the first read of one of its tensors; each
//! contiguous dataset (either byte order) located in the inflated bytes
//! and inflated when read, a compact one's bytes kept. Memory: that of
//! `deflate.rs`'s cursors and of the walk's page cache, never the member.
//!
//! One inflation budget for the file, as the whole path has (its listing
//! refuses a zip bomb from the declared sizes): deflated text members are
//! charged when read whole, the others as far as they are inflated, once
//! (see [`super::deflate`]).
//!
//! Read this way: archives whose `.protobuf` parameter members are stored
//! or deflated, with each parameter as one packed run, and whose `.h5`
//! ones are stored (see [`super::h5`]) or deflated with contiguous or
//! compact datasets. Anything else (chunked datasets in a deflated `.h5`
//! member, a deflated `.h5` whose structure the walk refuses, unpacked
//! data, parameters written in the text) is read whole; so is a
//! `.protobuf` file whose parameters are unpacked or split into several
//! runs.

use std::collections::HashMap;
use std::io;

use nnabla_proto::NNablaProtoBuf;
use nnabla_proto::index::{ParamData, Scattered, merge_index};
use nnp_archive::archive::{Compression, list, read_member};
use nnp_archive::{MemberInfo, MemberKind};
use serde_json::json;
use tensor_core::{DType, Limits, MemoryOrder};

use super::deflate::{self, Coding, Member, Pool};
use super::{FileIndex, IndexedTensor, Layout, ReadAt, Stream, count, overflow, read_vec};
use crate::codec::StoredTensor;
use crate::{Error, Result};

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
struct Entry {
    name: String,
    dtype: DType,
    dims: Vec<usize>,
    need_grad: bool,
    offset: u64,
    len: u64,
    /// How the data is laid out from `offset` (in a deflated member).
    layout: Layout,
}

/// `e`, met in the `.protobuf` message `name`, in this path's words: a
/// wire error names the member and the byte.
fn in_message(name: &str, e: nnabla_proto::Error) -> Error {
    match e {
        nnabla_proto::Error::Wire { offset, message } => Error::Invalid(format!(
            "{name}: {message} (at byte {offset} of the archive)"
        )),
        nnabla_proto::Error::Tensor(e) => Error::Core(e),
        nnabla_proto::Error::Read(e) => Error::Io(e),
        e @ nnabla_proto::Error::Parameter { .. } => Error::Invalid(e.to_string()),
        e => e.into(),
    }
}

/// Walks the `.protobuf` message `name` at `[at, at + size)` of `r` (a
/// member, or a whole `.protobuf` file) with `nnabla-proto`'s index: its
/// parameters in `found`, every other field merged into `model`;
/// [`Stop::Whole`] for a parameter whose data is not one packed run.
fn protobuf_member<R: ReadAt + ?Sized>(
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
    /// An `.nnp` whose parameters are all in stored `.protobuf` or `.h5` members;
    /// false (read it whole) for anything else (see the module).
    pub(crate) fn read_nnp<R: ReadAt + ?Sized>(&mut self, r: &R) -> Result<bool> {
        let limits = self.limits;
        // one inflation budget for the file, as the whole path has: the
        // listing checks the declared sizes against it, text members read
        // whole and the others as they inflate charge it (see deflate.rs)
        let budget = tensor_core::InflateBudget::new(&limits, r.len());
        let opts = nnp_archive::ReadOptions::default()
            .with_limits(limits)
            .with_budget(budget.clone());
        let stream = io::BufReader::with_capacity(16 << 10, Stream { r, pos: 0 });
        let members = list(stream, &opts)?;
        // what the whole path refuses on its declared sizes: the data
        // reads are refused with it (see read_npz)
        let over = nnp_archive::archive::over_declared_budget(&members, &budget, r.len());
        let stored = |m: &MemberInfo| matches!(m.compression, Compression::Stored);
        if members.iter().any(|m| m.kind == MemberKind::NestedNnp) {
            return Ok(false);
        }
        let mut model = NNablaProtoBuf::default();
        let mut entries: Vec<Entry> = Vec::new();
        let mut states = Vec::new();
        let pool = std::sync::Arc::new(Pool::new(budget));
        for (i, m) in members.iter().enumerate() {
            // every deflated member is inflated (and its CRC checked), as
            // the whole-file path does: a text read whole, a `.protobuf`
            // walked as it inflates, any other member inflated and dropped
            let deflated = (!stored(m)).then(|| Member::new(m, Error::Nnp, &pool));
            let inflated = match &deflated {
                Some(_) if m.kind == MemberKind::Text => {
                    let stream = io::BufReader::with_capacity(16 << 10, Stream { r, pos: 0 });
                    Some(read_member(stream, i, m, &opts)?)
                }
                Some(z) if !matches!(m.kind, MemberKind::Protobuf | MemberKind::H5) => {
                    deflate::verify(r, z)?;
                    None
                }
                _ => None,
            };
            match m.kind {
                MemberKind::Text => {
                    let bytes = match inflated {
                        Some(b) => b,
                        None => {
                            limits.check_alloc("zip member", m.size)?;
                            read_vec(r, m.data_start, m.size)?
                        }
                    };
                    let text = std::str::from_utf8(&bytes).map_err(|e| {
                        Error::Invalid(format!(
                            "{}: text is not UTF-8 (at byte {})",
                            m.name,
                            e.valid_up_to()
                        ))
                    })?;
                    nnabla_proto::text::merge(&mut model, text)?;
                    if !model.parameter.is_empty() {
                        return Ok(false); // parameters in the text: read whole
                    }
                }
                MemberKind::Protobuf => {
                    let before = entries.len();
                    let walked = match deflated {
                        None => {
                            let msg = (m.name.as_str(), m.data_start, m.size);
                            protobuf_member(r, msg, &limits, &mut model, &mut entries)
                        }
                        Some(z) => {
                            // walked once as it inflates; each parameter's
                            // data located in the inflated bytes
                            let msg = (m.name.as_str(), 0, z.size());
                            let z = std::sync::Arc::new(z);
                            deflate::walk_inflated(r, &z, |bytes| {
                                protobuf_member(bytes, msg, &limits, &mut model, &mut entries)
                            })
                            .inspect(|()| {
                                for e in &mut entries[before..] {
                                    e.layout = Layout::Coded(Coding::Deflated {
                                        member: std::sync::Arc::clone(&z),
                                        at: e.offset,
                                        lane: 0,
                                    });
                                    e.offset = m.data_start;
                                }
                            })
                        }
                    };
                    match walked {
                        Ok(()) => {}
                        Err(Stop::Whole) => return Ok(false),
                        Err(Stop::Err(e)) => return Err(e),
                    }
                }
                MemberKind::H5 => match deflated {
                    None => match super::h5::located(r, m.data_start, m.size, &limits)? {
                        Some(found) => {
                            let cache = super::h5chunks::ChunkCache::new(&limits, r.len());
                            for mut p in found {
                                let layout = Layout::of(&mut p, m.data_start, &cache)?;
                                entries.push(Entry {
                                    name: p.name,
                                    dtype: p.dtype,
                                    dims: p.dims,
                                    need_grad: p.need_grad,
                                    offset: p.offset,
                                    len: p.len,
                                    layout,
                                });
                            }
                        }
                        None => return Ok(false),
                    },
                    Some(z) => match deflated_h5(r, z, m.data_start, &limits) {
                        Ok(found) => entries.extend(found),
                        Err(Stop::Whole) => return Ok(false),
                        Err(Stop::Err(e)) => return Err(e),
                    },
                },
                MemberKind::Optimizer => states.push(m.name.clone()),
                _ => {}
            }
        }
        crate::formats::nnp::original_names(&mut model, entries.iter().map(|e| e.name.as_str()));
        self.push_entries(entries)?;
        if !states.is_empty() {
            self.metadata.insert("solver_states".into(), json!(states));
        }
        self.set_model(model)?;
        pool.refuse_reads(over);
        Ok(true)
    }

    /// A standalone `.protobuf` (a whole `NNablaProtoBuf`: a model, its
    /// parameters, or both): the walk of the members above over the whole
    /// file; false (read it whole) for a parameter whose data is unpacked
    /// or split into several runs.
    pub(crate) fn read_protobuf<R: ReadAt + ?Sized>(&mut self, r: &R) -> Result<bool> {
        let limits = self.limits;
        let mut model = NNablaProtoBuf::default();
        let mut entries = Vec::new();
        let msg = ("the file", 0, r.len());
        match protobuf_member(r, msg, &limits, &mut model, &mut entries) {
            Ok(()) => {}
            Err(Stop::Whole) => return Ok(false),
            Err(Stop::Err(e)) => return Err(e),
        }
        self.push_entries(entries)?;
        self.set_model(model)?;
        Ok(true)
    }

    /// The model read (the networks, shown as the graph).
    fn set_model(&mut self, model: NNablaProtoBuf) -> Result<()> {
        self.graph = Some(crate::formats::nnabla::graph(&model, &self.limits)?);
        self.nnabla_model = model != NNablaProtoBuf::default();
        self.nnabla = Some(std::sync::Arc::new(model));
        Ok(())
    }

    /// The parameters found, as the whole-file path registers them.
    fn push_entries(&mut self, entries: Vec<Entry>) -> Result<()> {
        let limits = self.limits;
        // a name given twice keeps its first position and takes the last entry
        let mut at: HashMap<String, usize> = HashMap::new();
        for e in entries {
            let numel = count(&e.dims).ok_or_else(|| overflow(&e.name))?;
            let stored = StoredTensor::from_parts(e.name.clone(), e.dims)
                .with("need_grad", json!(e.need_grad));
            let t = IndexedTensor {
                tensor_dims: None,
                stored,
                dtype: e.dtype,
                order: MemoryOrder::RowMajor,
                offset: e.offset,
                len: e.len,
                numel,
                layout: e.layout,
            };
            // as nnp-archive counts: before each registration
            limits.check_tensors(self.tensors.len() as u64 + 1)?;
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

/// The datasets of a deflated `.h5` member `z` (its data at `data_start`
/// of the file): its structure walked once as it inflates, no further than
/// its last header (the last 64 KiB kept, a read further back inflating
/// again from the member's start; its end and CRC-32 checked at the first
/// read of a tensor: `deflate::walk_inflated_head`), so listing it inflates
/// the headers, not the data; each contiguous dataset located in the inflated
/// bytes and inflated when read, a compact one's bytes kept. A chunked
/// dataset (its chunks' addresses in the inflated bytes) sends the archive
/// to the whole-file path.
fn deflated_h5<R: ReadAt + ?Sized>(
    r: &R,
    z: Member,
    data_start: u64,
    limits: &Limits,
) -> Walk<Vec<Entry>> {
    let z = std::sync::Arc::new(z);
    // a structure the walk refuses is read whole: the whole-file path reads
    // an inflated member with another `hdf5-pure` entry (`File::from_bytes`,
    // not a paged source), which accepts some broken files the walk refuses
    // (a broken inflation is an error either way: `walk_inflated` says so)
    let found = deflate::walk_inflated_head(r, &z, |bytes| {
        match super::h5::located(bytes, 0, z.size(), limits) {
            Ok(Some(found)) => Ok(found),
            Ok(None) | Err(_) => Err(Stop::Whole),
        }
    })?;
    let read_later = |p: &nnp_archive::h5::Located| {
        matches!(p.storage, nnp_archive::h5::Storage::Contiguous) && p.len > 0
    };
    if !found.iter().any(read_later) {
        // no read of a tensor will inflate it (none, empty ones, compact
        // ones kept from the walk): checked now, as the whole path checks
        // every member it inflates
        deflate::verify(r, &z)?;
    }
    let cache = super::h5chunks::ChunkCache::new(limits, r.len());
    let mut out = Vec::with_capacity(found.len());
    for mut p in found {
        let layout = match p.storage {
            nnp_archive::h5::Storage::Chunked(_) => return Err(Stop::Whole),
            nnp_archive::h5::Storage::Contiguous => Layout::Coded(Coding::Deflated {
                member: std::sync::Arc::clone(&z),
                at: p.offset,
                lane: if p.big_endian { p.dtype.size() } else { 0 },
            }),
            nnp_archive::h5::Storage::Compact(_) => Layout::of(&mut p, 0, &cache)?,
        };
        out.push(Entry {
            name: p.name,
            dtype: p.dtype,
            dims: p.dims,
            need_grad: p.need_grad,
            offset: data_start,
            len: p.len,
            layout,
        });
    }
    Ok(out)
}
