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
//! is read (see [`crate::random_access::deflate`]).
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
//! (see [`crate::random_access::deflate`]).
//!
//! Read this way: archives whose `.protobuf` parameter members are stored
//! or deflated, with each parameter as one packed run, and whose `.h5`
//! ones are stored (see [`super::h5`]) or deflated with contiguous or
//! compact datasets. Any other archive (chunked datasets in a deflated
//! `.h5` member, a deflated `.h5` whose structure the walk refuses, an
//! `.h5` the walk does not locate, unpacked data, parameters written in
//! the text, a nested `.nnp`) is parsed whole by `nnp-archive` (the
//! whole-file reader) and its parameters held in memory (see
//! [`crate::formats::nnabla`]).

use std::io;

use nnabla_proto::NNablaProtoBuf;
use nnp_archive::archive::{Compression, list, read_member};
use nnp_archive::{MemberInfo, MemberKind};
use serde_json::json;
use tensor_core::Limits;

use crate::formats::nnabla::{Entry, Stop, Walk, protobuf_member};
use crate::random_access::deflate::{self, Coding, Member, Pool};
use crate::random_access::{FileIndex, Layout, ReadAt, Stream, read_vec};
use crate::{Error, Format, Result};

impl FileIndex {
    /// An `.nnp` archive: its parameters located where its members allow
    /// it, else the archive parsed whole by `nnp-archive` and its
    /// parameters held (see the module).
    pub(crate) fn read_nnp<R: ReadAt + ?Sized>(&mut self, r: &R) -> Result<()> {
        if self.located_nnp(r)? {
            return Ok(());
        }
        let src = self.whole(r, Format::NnablaNnp)?;
        let opts = crate::codec::ReadOptions::default().with_limits(self.limits);
        let nnp = super::read_nnp(&src, &opts)?;
        // (nnp-archive counted them against the limits)
        let params = nnp.parameters().iter().map(|p| Entry::held(p, &src.map));
        self.push_entries(params.collect::<Result<_>>()?, false)?;
        let states: Vec<&str> = nnp
            .optimizer_states()
            .iter()
            .map(|o| o.name.as_str())
            .collect();
        if !states.is_empty() {
            self.metadata.insert("solver_states".into(), json!(states));
        }
        self.set_model(super::model_of(&nnp))
    }

    /// An `.nnp` whose parameters are all in `.protobuf` or `.h5` members
    /// this path locates, its parameters located; false (nothing
    /// registered: read it whole) for anything else (see the module).
    fn located_nnp<R: ReadAt + ?Sized>(&mut self, r: &R) -> Result<bool> {
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
                    // (a byte of the file only where the member is stored)
                    let stored_at = inflated.is_none().then_some(m.data_start);
                    let bytes = match inflated {
                        Some(b) => b,
                        None => {
                            limits.check_alloc("zip member", m.size)?;
                            read_vec(r, m.data_start, m.size)?
                        }
                    };
                    let text = std::str::from_utf8(&bytes).map_err(|e| Error::Malformed {
                        part: "zip member",
                        at: stored_at.map(|s| s + e.valid_up_to() as u64),
                        why: format!(
                            "{}: text is not UTF-8 (at byte {})",
                            m.name,
                            e.valid_up_to()
                        ),
                    })?;
                    nnabla_proto::text::merge(&mut model, text)?;
                    if !model.parameter.is_empty() {
                        return Ok(false); // parameters in the text: read whole
                    }
                }
                MemberKind::Protobuf => {
                    let before = entries.len();
                    let was_deflated = deflated.is_some();
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
                        // a deflated member the walk refuses is parsed
                        // whole: nnp-archive's error (a zip bomb found
                        // from the inflation budget, not from the zeros)
                        Err(Stop::Err(_)) if was_deflated => return Ok(false),
                        Err(Stop::Err(e)) => return Err(e),
                    }
                }
                MemberKind::H5 => match deflated {
                    None => match super::h5::located(r, m.data_start, m.size, &limits)? {
                        Some(found) => {
                            let cache =
                                crate::random_access::h5chunks::ChunkCache::new(&limits, r.len());
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
        super::original_names(&mut model, entries.iter().map(|e| e.name.as_str()));
        self.push_entries(entries, true)?;
        if !states.is_empty() {
            self.metadata.insert("solver_states".into(), json!(states));
        }
        self.set_model(model)?;
        pool.refuse_reads(over);
        Ok(true)
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
    let cache = crate::random_access::h5chunks::ChunkCache::new(limits, r.len());
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
