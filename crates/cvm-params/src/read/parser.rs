//! The parser shared by every reader: the list header, the name table,
//! the tensor records and their validation, and the name index.

use std::io::{self, Read, Seek, SeekFrom};

use crate::dtype::{DTypeProblem, DlType, decode};
use crate::error::{Error, Location, Result};
use crate::{LIST_MAGIC, TENSOR_MAGIC};

use super::input::{Input, StreamInput};
use super::{ReadOptions, TensorInfo};

/// Indexes a stream: its start, the parse, and the stream length.
pub(super) fn index_stream<R: Read + Seek>(
    reader: &mut R,
    opts: &ReadOptions,
) -> Result<(u64, u64, Parsed<Vec<u8>, ()>)> {
    let io_at = |error| Error::Io {
        at: Location::at(0),
        error,
    };
    let start = reader.stream_position().map_err(io_at)?;
    let end = reader.seek(SeekFrom::End(0)).map_err(io_at)?;
    reader.seek(SeekFrom::Start(start)).map_err(io_at)?;
    let len = end.saturating_sub(start);
    let mut input = StreamInput::new(reader, len);
    let parsed = Parser { input: &mut input }.run(opts)?;
    Ok((start, len, parsed))
}

/// One parsed entry before it becomes public: name, record, payload.
pub(super) struct Raw<B, P> {
    pub(super) name: B,
    pub(super) info: TensorInfo,
    pub(super) payload: P,
}

/// The parser's result: entries in file order, trailing byte count.
pub(super) struct Parsed<B, P> {
    pub(super) entries: Vec<Raw<B, P>>,
    pub(super) trailing: u64,
}

pub(super) struct Parser<'i, I: Input> {
    pub(super) input: &'i mut I,
}

impl<I: Input> Parser<'_, I> {
    /// Fails with `Truncated` unless `needed` bytes remain.
    fn need(&self, needed: u64, what: &'static str, at: impl FnOnce() -> Location) -> Result<()> {
        let available = self.input.remaining();
        if needed > available {
            return Err(Error::Truncated {
                at: at(),
                what,
                needed,
                available,
            });
        }
        Ok(())
    }

    fn io(&self, error: io::Error, at: Location) -> Error {
        Error::Io { at, error }
    }

    fn u64(&mut self, what: &'static str, at: &dyn Fn(u64) -> Location) -> Result<u64> {
        let pos = self.input.pos();
        self.need(8, what, || at(pos))?;
        let a = self.input.array::<8>().map_err(|e| self.io(e, at(pos)))?;
        Ok(u64::from_le_bytes(a))
    }

    fn i32(&mut self, what: &'static str, at: &dyn Fn(u64) -> Location) -> Result<i32> {
        let pos = self.input.pos();
        self.need(4, what, || at(pos))?;
        let a = self.input.array::<4>().map_err(|e| self.io(e, at(pos)))?;
        Ok(i32::from_le_bytes(a))
    }

    pub(super) fn run(mut self, opts: &ReadOptions) -> Result<Parsed<I::Bytes, I::Payload>> {
        let plain = |o: u64| Location::at(o);
        let magic = self.u64("the list magic", &plain)?;
        if magic != LIST_MAGIC {
            return Err(Error::BadListMagic { found: magic });
        }
        self.u64("the list header's reserved word", &plain)?;
        let count_at = self.input.pos();
        let n = self.u64("the name count", &plain)?;
        // Every name takes at least its 8-byte length and every tensor at
        // least 40 bytes, so a count the remaining bytes cannot hold is a
        // truncation; refuse it before allocating anything.
        let min = n.checked_mul(48);
        let remaining = self.input.remaining();
        if min.is_none_or(|m| m > remaining) {
            return Err(Error::Truncated {
                at: Location {
                    offset: count_at,
                    context: Some(format!("name count {n}")),
                },
                what: "the name table and tensors (at least 48 bytes per entry)",
                needed: min.unwrap_or(u64::MAX),
                available: remaining,
            });
        }
        opts.limits.check_tensors(n).map_err(|error| Error::Limit {
            at: Location::at(count_at),
            error,
        })?;
        // n ≤ remaining / 48, so this allocation is bounded by the input size.
        let n_usize = usize::try_from(n).map_err(|_| Error::Truncated {
            at: Location::at(count_at),
            what: "the name table",
            needed: n,
            available: remaining,
        })?;
        let mut names: Vec<(I::Bytes, u64)> =
            reserve("the name table", n_usize, || Location::at(count_at))?;
        for i in 0..n_usize {
            let at_name = |o: u64| Location::name(o, i);
            let len_at = self.input.pos();
            let len = self.u64("a name length", &at_name)?;
            self.need(len, "a name", || at_name(len_at + 8))?;
            opts.limits
                .check_name_len(len)
                .map_err(|error| Error::Limit {
                    at: at_name(len_at),
                    error,
                })?;
            let pos = self.input.pos();
            let len = usize::try_from(len).map_err(|_| Error::Truncated {
                at: at_name(pos),
                what: "a name",
                needed: len,
                available: self.input.remaining(),
            })?;
            let name = self.input.take(len).map_err(|e| {
                if e.kind() == io::ErrorKind::OutOfMemory {
                    // the stream's buffer for the name was refused
                    Error::Limit {
                        at: at_name(pos),
                        error: tensor_core::Error::OutOfMemory {
                            what: "a name".into(),
                            bytes: len as u64,
                        },
                    }
                } else {
                    self.io(e, at_name(pos))
                }
            })?;
            names.push((name, len_at));
        }
        let m_at = self.input.pos();
        let m = self.u64("the tensor count", &plain)?;
        if m != n {
            return Err(Error::CountMismatch {
                at: Location::at(m_at),
                names: n,
                tensors: m,
            });
        }
        let mut entries = reserve("the tensor table", n_usize, || Location::at(m_at))?;
        for (index, (name, _)) in names.into_iter().enumerate() {
            let (info, payload) = self.tensor(index, name.as_ref(), opts)?;
            entries.push(Raw {
                name,
                info,
                payload,
            });
        }
        let trailing = self.input.remaining();
        if trailing > 0 && !opts.lenient_trailing {
            return Err(Error::TrailingBytes {
                offset: self.input.pos(),
                len: trailing,
            });
        }
        Ok(Parsed { entries, trailing })
    }

    fn tensor(
        &mut self,
        index: usize,
        name: &[u8],
        opts: &ReadOptions,
    ) -> Result<(TensorInfo, I::Payload)> {
        let at = |o: u64| Location::tensor(o, index, name);
        let record_offset = self.input.pos();
        let magic = self.u64("the tensor magic", &at)?;
        if magic != TENSOR_MAGIC {
            return Err(Error::BadTensorMagic {
                at: at(record_offset),
                found: magic,
            });
        }
        self.u64("the tensor's reserved word", &at)?;
        let dev_at = self.input.pos();
        let device_type = self.i32("the device type", &at)?;
        if device_type != 1 {
            return Err(Error::NonCpuDevice {
                at: at(dev_at),
                device_type,
            });
        }
        let device_id = self.i32("the device id", &at)?;
        let ndim_at = self.input.pos();
        let ndim = self.i32("ndim", &at)?;
        if ndim < 0 {
            return Err(Error::NegativeNdim {
                at: at(ndim_at),
                ndim,
            });
        }
        opts.limits
            .check_rank(ndim as u64)
            .map_err(|error| Error::Limit {
                at: at(ndim_at),
                error,
            })?;
        let dt_at = self.input.pos();
        self.need(4, "the dtype", || at(dt_at))?;
        let [code, bits, l0, l1] = self.input.array::<4>().map_err(|e| self.io(e, at(dt_at)))?;
        let dl_type = DlType {
            code,
            bits,
            lanes: u16::from_le_bytes([l0, l1]),
        };
        let dtype = decode(dl_type).map_err(|p| match p {
            DTypeProblem::Lanes => Error::Lanes {
                at: at(dt_at),
                lanes: dl_type.lanes,
            },
            DTypeProblem::SubByte => Error::SubByteDType {
                at: at(dt_at),
                code,
                bits,
            },
            DTypeProblem::Unknown => Error::UnknownDType {
                at: at(dt_at),
                code,
                bits,
            },
        })?;
        // Shape: ndim ≤ max_rank and the bytes are checked to remain.
        let shape_at = self.input.pos();
        let shape_len = 8 * ndim as u64;
        self.need(shape_len, "the shape", || at(shape_at))?;
        let raw = self
            .input
            .take(shape_len as usize)
            .map_err(|e| self.io(e, at(shape_at)))?;
        let mut dims = reserve("the shape", ndim as usize, || at(shape_at))?;
        let mut numel: Option<u64> = Some(1);
        for (axis, c) in raw.as_ref().chunks_exact(8).enumerate() {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            let value = i64::from_le_bytes(a);
            let Ok(d) = u64::try_from(value) else {
                return Err(Error::NegativeDim {
                    at: at(shape_at + 8 * axis as u64),
                    axis,
                    value,
                });
            };
            numel = numel.and_then(|n| n.checked_mul(d));
            dims.push(d);
        }
        let elem = dtype.size() as u64;
        let expected = numel
            .and_then(|n| n.checked_mul(elem))
            .filter(|&b| b <= i64::MAX as u64);
        let Some(expected) = expected else {
            return Err(Error::ByteCountOverflow {
                at: at(record_offset),
                dims,
                dtype,
            });
        };
        let Ok(dims) = dims
            .iter()
            .map(|&d| usize::try_from(d))
            .collect::<std::result::Result<Vec<usize>, _>>()
        else {
            return Err(Error::ByteCountOverflow {
                at: at(record_offset),
                dims,
                dtype,
            });
        };
        let nb_at = self.input.pos();
        let stated = self.u64("the byte count", &at)? as i64;
        if u64::try_from(stated) != Ok(expected) {
            return Err(Error::ByteCountMismatch {
                at: at(nb_at),
                stated,
                expected,
                dims,
                dtype,
            });
        }
        let data_offset = self.input.pos();
        self.need(expected, "the payload", || at(data_offset))?;
        let payload = self
            .input
            .payload(expected)
            .map_err(|e| self.io(e, at(data_offset)))?;
        Ok((
            TensorInfo {
                index,
                record_offset,
                data_offset,
                dtype,
                dl_type,
                dims,
                nbytes: expected,
                device_id,
            },
            payload,
        ))
    }
}

/// An empty vector with room for `n` elements (a count read from the file
/// at `at`), or [`Error::Limit`] carrying [`tensor_core::Error::OutOfMemory`]
/// when the allocator refuses it, never the allocator's abort.
pub(super) fn reserve<T>(what: &str, n: usize, at: impl FnOnce() -> Location) -> Result<Vec<T>> {
    tensor_core::try_with_capacity(what, n).map_err(|error| Error::Limit { at: at(), error })
}

/// Indices of `names` sorted by name, ties in file order; in strict mode a
/// name stored twice is an error.
pub(super) fn name_index<B: AsRef<[u8]>>(
    entries: &[Raw<B, impl Sized>],
    name_offsets: &[u64],
    allow_duplicates: bool,
) -> Result<Vec<usize>> {
    let mut idx: Vec<usize> = (0..entries.len()).collect();
    idx.sort_by(|&a, &b| entries[a].name.as_ref().cmp(entries[b].name.as_ref()));
    if !allow_duplicates {
        // Report the earliest second occurrence in file order; runs of equal
        // names are sorted in file order, so a run's head is the first one.
        let mut found: Option<(usize, usize)> = None;
        let mut head = 0usize;
        for k in 1..idx.len() {
            let (prev, cur) = (idx[k - 1], idx[k]);
            if entries[prev].name.as_ref() == entries[cur].name.as_ref() {
                let first = idx[head];
                if found.is_none_or(|(_, s)| cur < s) {
                    found = Some((first, cur));
                }
            } else {
                head = k;
            }
        }
        if let Some((first, second)) = found {
            let name = entries[second].name.as_ref();
            return Err(Error::DuplicateName {
                at: Location {
                    offset: name_offsets.get(second).copied().unwrap_or(0),
                    context: Some(format!("name {second} {:?}", String::from_utf8_lossy(name))),
                },
                first,
            });
        }
    }
    Ok(idx)
}

/// Binary search of `idx` (sorted by name) for `name`; the last entry with
/// that name in file order.
pub(super) fn lookup<'n>(
    idx: &[usize],
    name_of: impl Fn(usize) -> &'n [u8],
    name: &[u8],
) -> Option<usize> {
    // First position whose name is > `name`; the one before it, if equal, is
    // the last occurrence (ties are sorted by file order).
    let end = idx.partition_point(|&i| name_of(i) <= name);
    let i = *idx.get(end.checked_sub(1)?)?;
    (name_of(i) == name).then_some(i)
}

pub(super) fn parse_names_offsets<B: AsRef<[u8]>, P>(entries: &[Raw<B, P>]) -> Vec<u64> {
    // Name-table offsets are implied by the lengths: 24 + Σ(8 + len).
    let mut off = 24u64;
    entries
        .iter()
        .map(|e| {
            let here = off;
            off = off.saturating_add(8 + e.name.as_ref().len() as u64);
            here
        })
        .collect()
}
