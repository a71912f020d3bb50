//! Our own streaming HDF5 writer for the simple layout nnabla's parameter
//! and solver-state files need.
//!
//! `hdf5-pure`'s `FileBuilder` takes every dataset's bytes as an owned
//! buffer and assembles the file in memory, so writing through it held a
//! copy of all data. This writer instead lays the whole file out from the
//! datasets' names, types and shapes alone, writes every piece of metadata
//! first, then takes the data one tensor at a time and writes it straight
//! through: memory stays at one tensor (only a column-major tensor is
//! copied, to reorder it).
//!
//! # Layout (HDF5 File Format Specification, "1.8" objects)
//!
//! - Superblock version 2 at 0: 8-byte offsets and lengths, base address 0,
//!   no superblock extension, the end-of-file address, the root group's
//!   object header address, lookup3 checksum.
//! - Version-2 object headers (`OHDR`, checksummed), in pre-order (a group,
//!   then its children by name), right after the superblock:
//!   - groups: compact "new style" groups: a Link Info message (no creation
//!     order, no fractal heap, no name index), a Group Info message and one
//!     hard Link message per child (UTF-8 character set flagged for
//!     non-ASCII names);
//!   - datasets: Dataspace v2 (scalar for 0-d, simple with maximum dims =
//!     dims otherwise), Datatype (fixed-point, IEEE float little-endian, or
//!     h5py's bool enum `{FALSE = 0, TRUE = 1}` over `int8`), Fill Value v3
//!     (the library defaults: late allocation, fill "if set", none set),
//!     Data Layout v3 contiguous (address and size; an undefined address
//!     and size 0 for a dataset without elements, as libhdf5 leaves them),
//!     then Attribute v3 messages: `need_grad` (h5py's bool enum, a scalar)
//!     and `index` (`int64` scalar), as nnabla's `save_parameters` writes
//!     them through h5py.
//! - Then each dataset's data in declaration order, each block starting at
//!   a multiple of [`DATA_ALIGN`] so readers can borrow aligned slices.

use std::collections::BTreeMap;
use std::io::Write;

use tensor_core::{DType, Shape, Tensor};

use super::MAX_DEPTH;
use super::lookup3::checksum;
use crate::{Error, ParamSpec, Result};

/// Every dataset's data starts at a multiple of this many bytes from the
/// start of the file.
pub const DATA_ALIGN: u64 = 64;

/// The "undefined address" of HDF5 (all bits set).
const UNDEF: u64 = u64::MAX;
/// Superblock v2 with 8-byte offsets: 12 + 4 × 8 + 4.
const SUPERBLOCK_LEN: u64 = 48;
/// HDF5's maximum rank.
const MAX_RANK: usize = 32;

/// One dataset of an `.h5` file to write with [`StreamWriter`]: its path,
/// element type, shape and attributes, without data.
///
/// ```
/// use nnp_archive::h5::DatasetSpec;
/// use tensor_core::DType;
///
/// let m = DatasetSpec::new("fc/W/m", DType::F32, [2, 3]).with_index(0);
/// assert_eq!((m.need_grad, m.index), (None, Some(0)));
/// let w = DatasetSpec::new("fc/W", DType::F32, [2, 3]).with_need_grad(true).with_index(0);
/// assert_eq!(w.need_grad, Some(true));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DatasetSpec {
    /// The dataset's name: stored at its [`super::h5_path`] (itself, for
    /// any name HDF5 can hold; groups are split on `/`).
    pub name: String,
    /// The element type (see [`super::can_hold`]).
    pub dtype: DType,
    /// The logical shape (`[]` for a scalar).
    pub dims: Vec<usize>,
    /// The `need_grad` attribute (h5py's bool), if any.
    pub need_grad: Option<bool>,
    /// The `index` attribute (`int64`), if any.
    pub index: Option<i64>,
}

impl DatasetSpec {
    /// A dataset without attributes.
    pub fn new(name: impl Into<String>, dtype: DType, dims: impl Into<Vec<usize>>) -> Self {
        DatasetSpec {
            name: name.into(),
            dtype,
            dims: dims.into(),
            need_grad: None,
            index: None,
        }
    }

    /// Sets the `need_grad` attribute.
    pub fn with_need_grad(mut self, need_grad: bool) -> Self {
        self.need_grad = Some(need_grad);
        self
    }

    /// Sets the `index` attribute.
    pub fn with_index(mut self, index: i64) -> Self {
        self.index = Some(index);
        self
    }

    /// The dataset nnabla's `save_parameters` writes for parameter number
    /// `index`: `need_grad` and `index`.
    pub fn parameter(spec: &ParamSpec, index: usize) -> Result<Self> {
        let index = i64::try_from(index).map_err(|_| Error::InvalidName {
            name: spec.name.clone(),
            reason: "its index does not fit an int64",
        })?;
        Ok(
            DatasetSpec::new(spec.name.clone(), spec.dtype, spec.dims.clone())
                .with_need_grad(spec.need_grad)
                .with_index(index),
        )
    }
}

/// One declared dataset, placed in the file.
#[derive(Debug)]
struct Slot {
    spec: DatasetSpec,
    /// Where its data goes (`UNDEF` when it has no bytes).
    addr: u64,
    nbytes: u64,
}

/// The file laid out from its datasets, and how far writing has got.
/// Writes go to a `W` passed in each call, so an archive writer can hold it
/// next to the zip writer it writes into.
#[derive(Debug)]
pub(crate) struct H5Stream {
    slots: Vec<Slot>,
    /// Superblock and object headers, until written.
    meta: Vec<u8>,
    /// Bytes written so far.
    pos: u64,
    /// The file's final size.
    eof: u64,
    next: usize,
    started: bool,
    /// An I/O error happened: the output is unusable.
    failed: bool,
}

impl H5Stream {
    /// Checks names and types and lays the file out; writes nothing.
    pub(crate) fn plan(specs: &[DatasetSpec]) -> Result<Self> {
        let mut tree = BTreeMap::new();
        let mut slots = Vec::with_capacity(specs.len());
        for (i, s) in specs.iter().enumerate() {
            if s.name.split('/').count() > MAX_DEPTH {
                return Err(Error::InvalidName {
                    name: s.name.clone(),
                    reason: "it nests groups deeper than readers follow (256)",
                });
            }
            super::insert_path(&mut tree, &s.name, i)?;
            datatype(&s.name, s.dtype)?;
            if s.dims.len() > MAX_RANK {
                return Err(Error::BadData {
                    dataset: s.name.clone(),
                    reason: format!("rank {} is over HDF5's maximum of {MAX_RANK}", s.dims.len()),
                });
            }
            let nbytes = Shape::from(s.dims.clone()).byte_len(s.dtype)? as u64;
            slots.push(Slot {
                spec: s.clone(),
                addr: UNDEF,
                nbytes,
            });
        }
        // Objects in pre-order; object 0 is the root group.
        let mut objs = Vec::new();
        flatten(&tree, &mut objs);
        drop(tree);
        // Sizes do not depend on addresses: encode once with zeros to measure.
        let zeros = vec![0u64; objs.len()];
        let mut addrs = Vec::with_capacity(objs.len());
        let mut at = SUPERBLOCK_LEN;
        for o in &objs {
            addrs.push(at);
            let len = encode_object(o, &slots, &zeros)?.len() as u64;
            at = add(at, len)?;
        }
        let mut end = at;
        for s in &mut slots {
            if s.nbytes > 0 {
                s.addr = align(end)?;
                end = add(s.addr, s.nbytes)?;
            }
        }
        let mut meta = Vec::with_capacity(usize::try_from(at).unwrap_or(0));
        superblock(&mut meta, end, addrs[0]);
        for o in &objs {
            meta.extend_from_slice(&encode_object(o, &slots, &addrs)?);
        }
        debug_assert_eq!(meta.len() as u64, at);
        Ok(H5Stream {
            slots,
            meta,
            pos: 0,
            eof: end,
            next: 0,
            started: false,
            failed: false,
        })
    }

    /// The size of the whole file.
    pub(crate) fn len(&self) -> u64 {
        self.eof
    }

    /// How many datasets have been written.
    pub(crate) fn written(&self) -> usize {
        self.next
    }

    /// The dataset the next [`H5Stream::write_data`] call fills.
    pub(crate) fn next_spec(&self) -> Option<&DatasetSpec> {
        self.slots.get(self.next).map(|s| &s.spec)
    }

    fn check_usable(&self) -> Result<()> {
        if self.failed {
            return Err(Error::Stream {
                name: self.next_spec().map(|s| s.name.clone()).unwrap_or_default(),
                reason: "an earlier write failed; the output is incomplete".into(),
            });
        }
        Ok(())
    }

    fn io<T>(&mut self, r: std::io::Result<T>) -> Result<T> {
        r.map_err(|e| {
            self.failed = true;
            Error::io("writing HDF5", e)
        })
    }

    /// Writes the superblock and every object header.
    pub(crate) fn write_head<W: Write + ?Sized>(&mut self, w: &mut W) -> Result<()> {
        self.check_usable()?;
        if self.started {
            return Ok(());
        }
        let meta = std::mem::take(&mut self.meta);
        let r = w.write_all(&meta);
        self.io(r)?;
        self.pos = meta.len() as u64;
        self.started = true;
        Ok(())
    }

    /// Writes the next dataset's data (after padding to its address).
    pub(crate) fn write_data<W: Write + ?Sized>(
        &mut self,
        w: &mut W,
        tensor: &Tensor<'_>,
    ) -> Result<()> {
        self.write_head(w)?;
        let Some(slot) = self.slots.get(self.next) else {
            return Err(Error::Stream {
                name: String::new(),
                reason: format!(
                    "all {} declared datasets are already written",
                    self.slots.len()
                ),
            });
        };
        let spec = &slot.spec;
        crate::params::check_declared(&spec.name, spec.dtype, &spec.dims, tensor)?;
        let (addr, nbytes) = (slot.addr, slot.nbytes);
        if nbytes > 0 {
            let rm = tensor.to_row_major()?;
            let bytes = rm.bytes();
            if bytes.len() as u64 != nbytes {
                return Err(Error::Stream {
                    name: spec.name.clone(),
                    reason: format!("holds {} bytes, its shape needs {nbytes}", bytes.len()),
                });
            }
            let r = pad_to(w, self.pos, addr);
            self.io(r)?;
            let r = w.write_all(bytes);
            self.io(r)?;
            self.pos = addr + nbytes;
        }
        self.next += 1;
        Ok(())
    }

    /// Checks every dataset was written (the file is then complete).
    pub(crate) fn finish<W: Write + ?Sized>(&mut self, w: &mut W) -> Result<()> {
        self.write_head(w)?;
        if let Some(s) = self.next_spec() {
            return Err(Error::Stream {
                name: s.name.clone(),
                reason: format!(
                    "finished after {} of {} declared datasets",
                    self.next,
                    self.slots.len()
                ),
            });
        }
        debug_assert_eq!(self.pos, self.eof);
        let r = w.flush();
        self.io(r)
    }
}

/// Writes zeros from `pos` up to `addr`.
fn pad_to<W: Write + ?Sized>(w: &mut W, pos: u64, addr: u64) -> std::io::Result<()> {
    const ZEROS: [u8; DATA_ALIGN as usize] = [0; DATA_ALIGN as usize];
    let mut gap = addr.saturating_sub(pos);
    while gap > 0 {
        let n = gap.min(DATA_ALIGN) as usize;
        w.write_all(&ZEROS[..n])?;
        gap -= n as u64;
    }
    Ok(())
}

fn add(a: u64, b: u64) -> Result<u64> {
    a.checked_add(b).ok_or_else(|| Error::BadData {
        dataset: String::new(),
        reason: "the file would be larger than 2^64 bytes".into(),
    })
}

fn align(a: u64) -> Result<u64> {
    Ok(add(a, DATA_ALIGN - 1)? / DATA_ALIGN * DATA_ALIGN)
}

/// The streaming `.h5` writer: created from the datasets' specs (no data),
/// it checks names and types and writes all metadata; then
/// [`StreamWriter::write_data`] takes each dataset's tensor, in order, and
/// writes it straight through; [`StreamWriter::finish`] checks all were given.
///
/// Only one tensor is ever held (the caller's; a column-major tensor is
/// copied once into row-major order).
///
/// ```
/// use nnp_archive::{h5, ParamSpec};
/// use tensor_core::{DType, Tensor};
///
/// let specs = [
///     ParamSpec::new("fc/W", DType::F32, [2, 2], true),
///     ParamSpec::new("fc/b", DType::F32, [2], false),
/// ];
/// let mut w = h5::StreamWriter::new(Vec::new(), &specs)?;
/// // Each tensor can be made just before it is written and dropped after.
/// w.write_data(&Tensor::from_values([2, 2], &[1f32, 2., 3., 4.])?)?;
/// w.write_data(&Tensor::from_values([2], &[0.5f32, -0.5])?)?;
/// let file = w.finish()?;
///
/// let params = h5::parse(&file)?;
/// assert_eq!(params[1].name, "fc/b");
/// assert!(!params[1].need_grad);
/// assert_eq!(&*params[0].tensor.view::<f32>()?, &[1., 2., 3., 4.]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct StreamWriter<W: Write> {
    w: W,
    core: H5Stream,
}

impl<W: Write> StreamWriter<W> {
    /// A parameter file, as nnabla's `save_parameters` writes it: one
    /// dataset per parameter with `need_grad` and `index` (its position).
    /// Names and types are checked and all metadata is written to `w`.
    pub fn new(w: W, params: &[ParamSpec]) -> Result<Self> {
        let specs = params
            .iter()
            .enumerate()
            .map(|(i, p)| DatasetSpec::parameter(p, i))
            .collect::<Result<Vec<_>>>()?;
        Self::with_datasets(w, &specs)
    }

    /// A file of any datasets with the attributes each spec gives (a solver
    /// state has `index` on some datasets and no `need_grad`). Names and
    /// types are checked and all metadata is written to `w`.
    pub fn with_datasets(mut w: W, datasets: &[DatasetSpec]) -> Result<Self> {
        let mut core = H5Stream::plan(datasets)?;
        core.write_head(&mut w)?;
        Ok(StreamWriter { w, core })
    }

    /// The underlying writer (what has been written so far).
    pub fn get_ref(&self) -> &W {
        &self.w
    }

    /// The size the file will have once finished.
    pub fn file_len(&self) -> u64 {
        self.core.len()
    }

    /// The dataset the next [`StreamWriter::write_data`] call fills, or
    /// `None` when all are written.
    pub fn next_dataset(&self) -> Option<&DatasetSpec> {
        self.core.next_spec()
    }

    /// Writes the next dataset's data. Its dtype and dims must be the
    /// declared ones ([`Error::Stream`] otherwise; nothing is written then
    /// and the right tensor can still be given). A column-major tensor is
    /// converted to row-major order.
    pub fn write_data(&mut self, tensor: &Tensor<'_>) -> Result<()> {
        self.core.write_data(&mut self.w, tensor)
    }

    /// Checks every declared dataset was written, flushes and returns the writer.
    pub fn finish(mut self) -> Result<W> {
        self.core.finish(&mut self.w)?;
        Ok(self.w)
    }
}

// ------------------------------------------------------------ encoding

/// An object of the file, in pre-order.
enum Obj {
    /// Children: (link name, object number).
    Group(Vec<(String, usize)>),
    /// A dataset: its slot.
    Dataset(usize),
}

fn flatten(map: &BTreeMap<String, super::Node>, objs: &mut Vec<Obj>) -> usize {
    let me = objs.len();
    objs.push(Obj::Group(Vec::new()));
    let mut kids = Vec::with_capacity(map.len());
    for (name, node) in map {
        let k = match node {
            super::Node::Dataset(i) => {
                objs.push(Obj::Dataset(*i));
                objs.len() - 1
            }
            super::Node::Group(m) => flatten(m, objs),
        };
        kids.push((name.clone(), k));
    }
    objs[me] = Obj::Group(kids);
    me
}

fn superblock(out: &mut Vec<u8>, eof: u64, root: u64) {
    let start = out.len();
    out.extend_from_slice(b"\x89HDF\r\n\x1a\n");
    // version 2, 8-byte offsets, 8-byte lengths, consistency flags 0
    out.extend_from_slice(&[2, 8, 8, 0]);
    out.extend_from_slice(&0u64.to_le_bytes()); // base address
    out.extend_from_slice(&UNDEF.to_le_bytes()); // superblock extension
    out.extend_from_slice(&eof.to_le_bytes());
    out.extend_from_slice(&root.to_le_bytes());
    let sum = checksum(&out[start..]);
    out.extend_from_slice(&sum.to_le_bytes());
}

/// Header message types.
const MSG_DATASPACE: u8 = 0x01;
const MSG_LINK_INFO: u8 = 0x02;
const MSG_DATATYPE: u8 = 0x03;
const MSG_FILL_VALUE: u8 = 0x05;
const MSG_LINK: u8 = 0x06;
const MSG_LAYOUT: u8 = 0x08;
const MSG_GROUP_INFO: u8 = 0x0A;
const MSG_ATTRIBUTE: u8 = 0x0C;
/// Message flag: the message is constant (libhdf5 marks datatypes and fill values so).
const FLAG_CONSTANT: u8 = 0x01;

struct Msg {
    kind: u8,
    flags: u8,
    data: Vec<u8>,
}

fn encode_object(o: &Obj, slots: &[Slot], addrs: &[u64]) -> Result<Vec<u8>> {
    match o {
        Obj::Group(kids) => {
            let mut msgs = Vec::with_capacity(kids.len() + 2);
            // Link Info: version 0, flags 0, fractal heap and name index undefined.
            let mut linfo = vec![0u8, 0];
            linfo.extend_from_slice(&UNDEF.to_le_bytes());
            linfo.extend_from_slice(&UNDEF.to_le_bytes());
            msgs.push(Msg {
                kind: MSG_LINK_INFO,
                flags: 0,
                data: linfo,
            });
            // Group Info: version 0, no phase change values, no estimates.
            msgs.push(Msg {
                kind: MSG_GROUP_INFO,
                flags: 0,
                data: vec![0, 0],
            });
            for (name, k) in kids {
                msgs.push(Msg {
                    kind: MSG_LINK,
                    flags: 0,
                    data: link(name, addrs[*k]),
                });
            }
            object_header("/", &msgs)
        }
        Obj::Dataset(i) => {
            let s = &slots[*i];
            let spec = &s.spec;
            let dt = datatype(&spec.name, spec.dtype)?;
            let mut msgs = vec![
                Msg {
                    kind: MSG_DATASPACE,
                    flags: 0,
                    data: dataspace(&spec.dims),
                },
                Msg {
                    kind: MSG_DATATYPE,
                    flags: FLAG_CONSTANT,
                    data: dt,
                },
                // Fill Value v3: allocation late (2), fill written "if set" (2 << 2), none defined.
                Msg {
                    kind: MSG_FILL_VALUE,
                    flags: FLAG_CONSTANT,
                    data: vec![3, 0x0A],
                },
            ];
            // Data Layout v3, contiguous.
            let mut layout = vec![3u8, 1];
            let (addr, size) = if s.nbytes == 0 {
                (UNDEF, 0)
            } else {
                (s.addr, s.nbytes)
            };
            layout.extend_from_slice(&addr.to_le_bytes());
            layout.extend_from_slice(&size.to_le_bytes());
            msgs.push(Msg {
                kind: MSG_LAYOUT,
                flags: 0,
                data: layout,
            });
            if let Some(g) = spec.need_grad {
                msgs.push(Msg {
                    kind: MSG_ATTRIBUTE,
                    flags: 0,
                    data: attribute("need_grad", &bool_type(), &[u8::from(g)]),
                });
            }
            if let Some(ix) = spec.index {
                msgs.push(Msg {
                    kind: MSG_ATTRIBUTE,
                    flags: 0,
                    data: attribute("index", &fixed(8, true), &ix.to_le_bytes()),
                });
            }
            if let Some((dt, value)) = super::save::name_attribute(&spec.name)? {
                msgs.push(Msg {
                    kind: MSG_ATTRIBUTE,
                    flags: 0,
                    data: attribute(super::NAME_ATTRIBUTE, &dt, &value),
                });
            }
            object_header(&spec.name, &msgs)
        }
    }
}

/// A version-2 object header holding `msgs` in one chunk.
fn object_header(name: &str, msgs: &[Msg]) -> Result<Vec<u8>> {
    let mut body = 0usize;
    for m in msgs {
        if m.data.len() > usize::from(u16::MAX) {
            return Err(Error::InvalidName {
                name: name.to_string(),
                reason: "a header message of it (a link name?) is over 65535 bytes",
            });
        }
        body = body
            .checked_add(4 + m.data.len())
            .ok_or_else(|| Error::BadData {
                dataset: name.to_string(),
                reason: "the object header size overflows".into(),
            })?;
    }
    let (code, width) = match body {
        0..=0xFF => (0u8, 1usize),
        0x100..=0xFFFF => (1, 2),
        0x1_0000..=0xFFFF_FFFF => (2, 4),
        _ => (3, 8),
    };
    let mut out = Vec::with_capacity(6 + width + body + 4);
    out.extend_from_slice(b"OHDR");
    // version 2; flags: the size of the chunk-0 size field only
    // (no creation order, no phase change values, no times).
    out.extend_from_slice(&[2, code]);
    out.extend_from_slice(&(body as u64).to_le_bytes()[..width]);
    for m in msgs {
        out.push(m.kind);
        out.extend_from_slice(&(m.data.len() as u16).to_le_bytes());
        out.push(m.flags);
        out.extend_from_slice(&m.data);
    }
    let sum = checksum(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    Ok(out)
}

/// A hard Link message (version 1) to the object at `addr`.
fn link(name: &str, addr: u64) -> Vec<u8> {
    let n = name.len();
    let (code, width) = match n {
        0..=0xFF => (0u8, 1usize),
        0x100..=0xFFFF => (1, 2),
        _ => (2, 4),
    };
    let utf8 = !name.is_ascii();
    // flags: name-length size; bit 4: a character set field follows.
    let flags = code | if utf8 { 0x10 } else { 0 };
    let mut d = Vec::with_capacity(3 + width + n + 8);
    d.extend_from_slice(&[1, flags]);
    if utf8 {
        d.push(1); // UTF-8
    }
    d.extend_from_slice(&(n as u64).to_le_bytes()[..width]);
    d.extend_from_slice(name.as_bytes());
    d.extend_from_slice(&addr.to_le_bytes());
    d
}

/// A Dataspace message, version 2: scalar for no dims, else simple with
/// maximum dimensions equal to the dimensions (as libhdf5 writes them).
fn dataspace(dims: &[usize]) -> Vec<u8> {
    if dims.is_empty() {
        return vec![2, 0, 0, 0];
    }
    let mut d = Vec::with_capacity(4 + 16 * dims.len());
    // rank ≤ 32 is checked when planning
    d.extend_from_slice(&[2, dims.len() as u8, 1, 1]);
    for _ in 0..2 {
        for &x in dims {
            d.extend_from_slice(&(x as u64).to_le_bytes());
        }
    }
    d
}

/// A fixed-point (integer) datatype, little-endian, version 1.
fn fixed(size: u8, signed: bool) -> Vec<u8> {
    let mut d = vec![0x10, if signed { 0x08 } else { 0 }, 0, 0];
    d.extend_from_slice(&u32::from(size).to_le_bytes());
    d.extend_from_slice(&0u16.to_le_bytes()); // bit offset
    d.extend_from_slice(&(u16::from(size) * 8).to_le_bytes()); // precision
    d
}

/// An IEEE floating-point datatype, little-endian, version 1: mantissa
/// normalised with an implied leading 1, sign in the top bit.
fn float(size: u8, exp_bits: u8, mant_bits: u8, bias: u32) -> Vec<u8> {
    let bits = size * 8;
    let mut d = vec![0x11, 0x20, bits - 1, 0];
    d.extend_from_slice(&u32::from(size).to_le_bytes());
    d.extend_from_slice(&0u16.to_le_bytes()); // bit offset
    d.extend_from_slice(&u16::from(bits).to_le_bytes()); // precision
    d.extend_from_slice(&[mant_bits, exp_bits, 0, mant_bits]); // exponent at, size; mantissa at, size
    d.extend_from_slice(&bias.to_le_bytes());
    d
}

/// h5py's numpy bool: an enumeration (version 1) over `int8` with members
/// `FALSE = 0` and `TRUE = 1` (names NUL-terminated, padded to 8 bytes).
fn bool_type() -> Vec<u8> {
    let mut d = vec![0x18, 2, 0, 0];
    d.extend_from_slice(&1u32.to_le_bytes());
    d.extend_from_slice(&fixed(1, true));
    d.extend_from_slice(b"FALSE\0\0\0TRUE\0\0\0\0");
    d.extend_from_slice(&[0, 1]);
    d
}

/// The datatype message of an element type, or an error for types the
/// writer does not store.
fn datatype(name: &str, dtype: DType) -> Result<Vec<u8>> {
    Ok(match dtype {
        DType::F16 => float(2, 5, 10, 15),
        DType::F32 => float(4, 8, 23, 127),
        DType::F64 => float(8, 11, 52, 1023),
        DType::I8 => fixed(1, true),
        DType::I16 => fixed(2, true),
        DType::I32 => fixed(4, true),
        DType::I64 => fixed(8, true),
        DType::U8 => fixed(1, false),
        DType::U16 => fixed(2, false),
        DType::U32 => fixed(4, false),
        DType::U64 => fixed(8, false),
        DType::Bool => bool_type(),
        other => {
            return Err(Error::UnsupportedDtype {
                dataset: name.to_string(),
                datatype: other.name().to_string(),
            });
        }
    })
}

/// True for the element types the writer stores.
pub(crate) fn can_hold(dtype: DType) -> bool {
    datatype("", dtype).is_ok()
}

/// An Attribute message, version 3: a scalar `value` of type `dt`.
fn attribute(name: &str, dt: &[u8], value: &[u8]) -> Vec<u8> {
    let space = dataspace(&[]);
    let mut d = Vec::with_capacity(9 + name.len() + 1 + dt.len() + space.len() + value.len());
    d.extend_from_slice(&[3, 0]);
    d.extend_from_slice(&((name.len() + 1) as u16).to_le_bytes());
    d.extend_from_slice(&(dt.len() as u16).to_le_bytes());
    d.extend_from_slice(&(space.len() as u16).to_le_bytes());
    d.push(0); // ASCII name
    d.extend_from_slice(name.as_bytes());
    d.push(0);
    d.extend_from_slice(dt);
    d.extend_from_slice(&space);
    d.extend_from_slice(value);
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_have_the_sizes_of_the_spec() {
        // The sizes h5py/libhdf5 give the same messages.
        assert_eq!(fixed(8, true).len(), 12);
        assert_eq!(float(4, 8, 23, 127).len(), 20);
        assert_eq!(bool_type().len(), 38);
        assert_eq!(dataspace(&[]), [2, 0, 0, 0]);
        assert_eq!(dataspace(&[2, 3]).len(), 36);
        assert_eq!(link("fc", 0).len(), 13);
        assert_eq!(attribute("index", &fixed(8, true), &[0; 8]).len(), 39);
        // f32 exactly as libhdf5 writes it
        assert_eq!(
            float(4, 8, 23, 127),
            [
                0x11, 0x20, 0x1f, 0, 4, 0, 0, 0, 0, 0, 32, 0, 23, 8, 0, 23, 127, 0, 0, 0
            ]
        );
        assert_eq!(
            float(2, 5, 10, 15),
            [
                0x11, 0x20, 0x0f, 0, 2, 0, 0, 0, 0, 0, 16, 0, 10, 5, 0, 10, 15, 0, 0, 0
            ]
        );
    }

    #[test]
    fn link_names_flag_utf8() {
        let l = link("é", 7);
        assert_eq!(&l[..4], &[1, 0x10, 1, 2]);
        let long = "x".repeat(300);
        let l = link(&long, 7);
        assert_eq!(&l[..4], &[1, 1, 44, 1]);
    }

    #[test]
    fn chunk_size_field_grows() {
        let big = Msg {
            kind: MSG_LINK,
            flags: 0,
            data: vec![0; 300],
        };
        let h = object_header("x", &[big]).unwrap();
        assert_eq!(h[5], 1);
        assert_eq!(u16::from_le_bytes([h[6], h[7]]), 304);
        let sum = checksum(&h[..h.len() - 4]);
        assert_eq!(&h[h.len() - 4..], &sum.to_le_bytes());
    }
}
