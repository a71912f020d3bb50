//! NNabla `.nnp` archives by random access: the network members read whole
//! (they are small), each `.protobuf` member walked field by field through
//! [`ReadAt`], its `parameter` entries' names and shapes read and their
//! packed float data located, never read.
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
//! data, parameters written in the text) is read whole.

use std::collections::HashMap;
use std::io;

use nnabla_proto::NNablaProtoBuf;
use nnp_archive::archive::{Compression, list, read_member};
use nnp_archive::{MemberInfo, MemberKind};
use serde_json::json;
use tensor_core::{DType, Limits, MemoryOrder};

use super::deflate::{self, Coding, Member, Pool};
use super::wire::{Cursor, FIXED32, FIXED64, LEN, Stop, VARINT, Walk, bad};
use super::{FileIndex, IndexedTensor, Layout, ReadAt, Stream, count, overflow, read_vec};
use crate::codec::StoredTensor;
use crate::{Error, Result};

/// Field numbers of `NNablaProtoBuf.parameter` and of `Parameter`.
const ROOT_PARAMETER: u64 = 200;
const NAME: u64 = 1;
const SHAPE: u64 = 20;
const DATA: u64 = 100;
const NEED_GRAD: u64 = 101;

/// A serialized `NNablaProtoBuf`: its name (for messages) and byte range.
pub(super) struct Message<'n> {
    pub name: &'n str,
    pub data_start: u64,
    pub size: u64,
}

/// One `parameter` entry: name, dims, `need_grad` and its data's place.
pub(super) struct Entry {
    name: String,
    dtype: DType,
    dims: Vec<usize>,
    need_grad: bool,
    offset: u64,
    len: u64,
    /// How the data is laid out from `offset` (in a deflated member).
    layout: Layout,
}

fn shape(payload: &[u8], dims: &mut Vec<i64>, limits: &Limits) -> Result<()> {
    let bad = || Error::Invalid("a parameter's shape is not a valid Shape message".into());
    let mut pos = 0usize;
    let varint = |pos: &mut usize, end: usize| -> Result<u64> {
        let mut value = 0u64;
        for i in 0..10 {
            let b = *payload.get(*pos).filter(|_| *pos < end).ok_or_else(bad)?;
            *pos += 1;
            if i == 9 && b > 1 {
                return Err(bad());
            }
            value |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return Ok(value);
            }
        }
        Err(bad())
    };
    let end = payload.len();
    while pos < end {
        let k = varint(&mut pos, end)?;
        let (num, wt) = (k >> 3, k & 7);
        if num == 0 || num > 0x1fff_ffff {
            return Err(bad());
        }
        let take = |pos: &mut usize, n: u64| -> Result<usize> {
            let at = *pos;
            let n = usize::try_from(n).map_err(|_| bad())?;
            *pos = at.checked_add(n).filter(|&e| e <= end).ok_or_else(bad)?;
            Ok(at)
        };
        match (num, wt) {
            (1, LEN) => {
                let n = varint(&mut pos, end)?;
                let at = take(&mut pos, n)?;
                let mut p = at;
                while p < pos {
                    limits.check_rank(dims.len() as u64 + 1)?;
                    dims.push(varint(&mut p, pos)? as i64);
                }
            }
            (1, VARINT) => {
                limits.check_rank(dims.len() as u64 + 1)?;
                dims.push(varint(&mut pos, end)? as i64);
            }
            (1, _) => return Err(bad()),
            (_, VARINT) => {
                varint(&mut pos, end)?;
            }
            (_, FIXED64) => {
                take(&mut pos, 8)?;
            }
            (_, LEN) => {
                let n = varint(&mut pos, end)?;
                take(&mut pos, n)?;
            }
            (_, FIXED32) => {
                take(&mut pos, 4)?;
            }
            _ => return Err(bad()),
        }
    }
    Ok(())
}

/// Reads the `Parameter` message at `[c.pos, c.end)`.
fn parameter<R: ReadAt + ?Sized>(c: &mut Cursor<'_, R>, limits: &Limits) -> Walk<Entry> {
    let mut name = String::new();
    let mut dims: Vec<i64> = Vec::new();
    let mut data: Option<(u64, u64)> = None;
    let mut need_grad = false;
    while c.pos < c.end {
        let at = c.pos;
        let (num, wt) = c.key()?;
        let wrong = |expected: &str| {
            bad(
                c.member,
                at,
                format!("Parameter field {num} has wire type {wt}, expected {expected}"),
            )
        };
        match num {
            NAME => {
                if wt != LEN {
                    return Err(wrong("2"));
                }
                let (at, n) = c.len_delimited()?;
                limits.check_name_len(n)?;
                let s = c.read(at, n, limits)?;
                name = String::from_utf8(s)
                    .map_err(|_| bad(c.member, at, "Parameter.variable_name is not valid UTF-8"))?;
            }
            SHAPE => {
                if wt != LEN {
                    return Err(wrong("2"));
                }
                let (at, n) = c.len_delimited()?;
                let s = c.read(at, n, limits)?;
                shape(&s, &mut dims, limits)?;
            }
            DATA => match wt {
                LEN => {
                    let (at, n) = c.len_delimited()?;
                    if n % 4 != 0 {
                        return Err(bad(
                            c.member,
                            at,
                            format!("packed float data of {n} bytes is not a multiple of 4"),
                        ));
                    }
                    if data.is_some() {
                        return Err(Stop::Whole); // split data: read whole
                    }
                    data = Some((at, n));
                }
                FIXED32 => return Err(Stop::Whole), // unpacked data: read whole
                _ => return Err(wrong("2 or 5")),
            },
            NEED_GRAD => {
                if wt != VARINT {
                    return Err(wrong("0"));
                }
                need_grad = c.varint()? != 0;
            }
            _ => c.skip(wt, num)?,
        }
    }
    let mut udims = Vec::with_capacity(dims.len());
    for &d in &dims {
        let d = usize::try_from(d).map_err(|_| {
            Stop::Err(Error::Invalid(format!(
                "parameter {name:?}: negative dimension {d} in shape {dims:?}"
            )))
        })?;
        udims.push(d);
    }
    let (offset, len) = data.unwrap_or((0, 0));
    let numel = count(&udims).ok_or_else(|| overflow(&name))?;
    let need = numel
        .checked_mul(4)
        .ok_or_else(|| Stop::Err(overflow(&name)))?;
    if need != len {
        return Err(Stop::Err(Error::Invalid(format!(
            "parameter {name:?}: shape {udims:?} needs {need} bytes of data, it has {len}"
        ))));
    }
    Ok(Entry {
        name,
        dtype: DType::F32,
        dims: udims,
        need_grad,
        offset,
        len,
        layout: Layout::Contiguous,
    })
}

/// Walks the `.protobuf` message `m` (a member, or a whole `.protobuf`
/// file): its parameters in `found`, the bytes of every other field in
/// `rest` (merged into the model after).
pub(super) fn protobuf_member<R: ReadAt + ?Sized>(
    r: &R,
    m: &Message<'_>,
    limits: &Limits,
    found: &mut Vec<Entry>,
    rest: &mut Vec<u8>,
) -> Walk<()> {
    let end = m
        .data_start
        .checked_add(m.size)
        .filter(|&e| e <= r.len())
        .ok_or_else(|| bad(m.name, m.data_start, "the member ends past the file"))?;
    let mut c = Cursor {
        r,
        member: m.name,
        pos: m.data_start,
        end,
        window: Vec::new(),
        window_at: 0,
    };
    let mut count = 0u64;
    while c.pos < end {
        let field_start = c.pos;
        let (num, wt) = c.key()?;
        if num == ROOT_PARAMETER {
            if wt != LEN {
                return Err(bad(
                    m.name,
                    field_start,
                    format!("NNablaProtoBuf.parameter has wire type {wt}, expected 2"),
                ));
            }
            let (at, n) = c.len_delimited()?;
            count += 1;
            limits.check_tensors(count)?;
            let mut p = Cursor {
                r,
                member: m.name,
                pos: at,
                end: at + n,
                window: Vec::new(),
                window_at: 0,
            };
            found.push(parameter(&mut p, limits)?);
        } else {
            c.skip(wt, num)?;
            let n = c.pos - field_start;
            let total = (rest.len() as u64).saturating_add(n);
            limits.check_alloc("protobuf fields", total)?;
            rest.extend(c.read(field_start, n, limits)?);
        }
    }
    Ok(())
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
                    let mut rest = Vec::new();
                    let before = entries.len();
                    let walked = match deflated {
                        None => {
                            let msg = Message {
                                name: &m.name,
                                data_start: m.data_start,
                                size: m.size,
                            };
                            protobuf_member(r, &msg, &limits, &mut entries, &mut rest)
                        }
                        Some(z) => {
                            // walked once as it inflates; each parameter's
                            // data located in the inflated bytes
                            let msg = Message {
                                name: &m.name,
                                data_start: 0,
                                size: z.size(),
                            };
                            let z = std::sync::Arc::new(z);
                            deflate::walk_inflated(r, &z, |bytes| {
                                protobuf_member(bytes, &msg, &limits, &mut entries, &mut rest)
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
                    nnabla_proto::binary::merge(&mut model, &rest)?;
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
        self.graph = Some(crate::formats::nnabla::graph(&model, &limits)?);
        self.nnabla_model = model != NNablaProtoBuf::default();
        self.nnabla = Some(std::sync::Arc::new(model));
        pool.refuse_reads(over);
        Ok(true)
    }

    /// The parameters found, as the whole-file path registers them (also
    /// for a standalone `.protobuf`, `random_access/protobuf.rs`).
    pub(super) fn push_entries(&mut self, entries: Vec<Entry>) -> Result<()> {
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
