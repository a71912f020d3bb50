//! Writing `.params` files, streamed: byte-identical to TVM 0.27's
//! `save_param_dict` for the same entries in the same order.
//!
//! The format stores all names before all tensors, so the names must be
//! known up front; payloads are then written one after another straight
//! from each tensor's bytes (a column-major tensor is transposed first, one
//! tensor at a time). Nothing else is buffered: memory use is the name table
//! plus one 40 + 8·ndim byte record header.

use std::borrow::Borrow;
use std::io::Write;
use std::path::Path;

use tensor_core::{MemoryOrder, Tensor};

use crate::dtype::{BoolEncoding, DlType, dl_type_of};
use crate::error::{Error, Result};
use crate::{LIST_MAGIC, TENSOR_MAGIC};

/// Options of the writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct WriteOptions {
    /// How bool tensors are stored: `(6,8,1)` like TVM ≥ 0.27 (default) or
    /// the legacy `(1,1,1)` of older TVM.
    pub bools: BoolEncoding,
}

impl WriteOptions {
    /// Sets [`WriteOptions::bools`].
    pub fn with_bools(mut self, bools: BoolEncoding) -> Self {
        self.bools = bools;
        self
    }
}

/// A streaming writer: give it the names, then each tensor in the same order.
///
/// ```
/// # fn main() -> Result<(), cvm_params::Error> {
/// use cvm_params::{ParamsWriter, WriteOptions, Params};
/// use tensor_core::Tensor;
///
/// let mut out = Vec::new();
/// let mut w = ParamsWriter::new(&mut out, ["w", "b"], &WriteOptions::default())?;
/// w.write_tensor(&Tensor::from_values([2], &[1i8, -1])?)?;
/// w.write_tensor(&Tensor::from_values([], &[258i32])?)?;
/// w.finish()?;
/// assert_eq!(out.len(), 144); // the walk-through file of docs/formats/cvm.md §3
/// assert_eq!(Params::parse(&out)?.get("b").unwrap().view::<i32>()?[0], 258);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct ParamsWriter<W: Write> {
    w: W,
    names: Vec<String>,
    written: usize,
    opts: WriteOptions,
    header: Vec<u8>,
}

impl<W: Write> ParamsWriter<W> {
    /// Writes the list header, the name table and the tensor count.
    pub fn new<N: AsRef<[u8]>>(
        mut w: W,
        names: impl IntoIterator<Item = N>,
        opts: &WriteOptions,
    ) -> Result<Self> {
        let mut table = Vec::new();
        let mut display = Vec::new();
        for n in names {
            let n = n.as_ref();
            table.extend_from_slice(&(n.len() as u64).to_le_bytes());
            table.extend_from_slice(n);
            display.push(String::from_utf8_lossy(n).into_owned());
        }
        let count = (display.len() as u64).to_le_bytes();
        let mut head = Vec::with_capacity(24);
        head.extend_from_slice(&LIST_MAGIC.to_le_bytes());
        head.extend_from_slice(&0u64.to_le_bytes());
        head.extend_from_slice(&count);
        w.write_all(&head).map_err(Error::Write)?;
        w.write_all(&table).map_err(Error::Write)?;
        w.write_all(&count).map_err(Error::Write)?;
        Ok(ParamsWriter {
            w,
            names: display,
            written: 0,
            opts: *opts,
            header: Vec::with_capacity(64),
        })
    }

    /// Writes the next tensor (its name was given to [`ParamsWriter::new`]).
    pub fn write_tensor(&mut self, tensor: &Tensor<'_>) -> Result<()> {
        self.write_tensor_as(tensor, self.opts.bools)
    }

    /// Writes the next tensor, storing a bool tensor with `bools` whatever
    /// the writer's option (to reproduce a file that mixes encodings).
    pub fn write_tensor_as(&mut self, tensor: &Tensor<'_>, bools: BoolEncoding) -> Result<()> {
        let index = self.written;
        if index >= self.names.len() {
            return Err(Error::WriterCount {
                names: self.names.len(),
                tensors: index + 1,
            });
        }
        let name = &self.names[index];
        let dl = check(index, name, tensor, bools)?;
        encode_header(&mut self.header, dl, tensor);
        self.w.write_all(&self.header).map_err(Error::Write)?;
        match tensor.order() {
            MemoryOrder::RowMajor => tensor_core::io::write_prefaulted(&mut self.w, tensor.bytes()),
            _ => self.w.write_all(tensor.to_row_major()?.bytes()),
        }
        .map_err(Error::Write)?;
        self.written += 1;
        Ok(())
    }

    /// Writes the next tensor's record header for a row-major tensor of
    /// `dtype` and `dims` whose payload is `byte_len` bytes, then lets
    /// `data` write exactly that payload (e.g. a slice at a time, from a file
    /// too big to hold): the bytes [`ParamsWriter::write_tensor`] writes for
    /// the same tensor, without the tensor in memory.
    pub fn write_tensor_streamed(
        &mut self,
        dtype: tensor_core::DType,
        dims: &[usize],
        byte_len: u64,
        data: impl FnOnce(&mut W) -> std::io::Result<()>,
    ) -> Result<()> {
        let index = self.written;
        if index >= self.names.len() {
            return Err(Error::WriterCount {
                names: self.names.len(),
                tensors: index + 1,
            });
        }
        let name = &self.names[index];
        let dl = dl_type_of(dtype, self.opts.bools).ok_or_else(|| Error::UnsupportedDType {
            index,
            name: name.to_string(),
            dtype,
        })?;
        let len = i64::try_from(byte_len).ok();
        if !dims.iter().all(|&d| i64::try_from(d).is_ok()) || len.is_none() {
            return Err(Error::TooLarge {
                index,
                name: name.to_string(),
                dims: dims.to_vec(),
            });
        }
        encode_header_parts(&mut self.header, dl, dims, len.unwrap_or(0));
        self.w.write_all(&self.header).map_err(Error::Write)?;
        data(&mut self.w).map_err(Error::Write)?;
        self.written += 1;
        Ok(())
    }

    /// Checks that every declared tensor was written, flushes and gives the output back.
    pub fn finish(mut self) -> Result<W> {
        if self.written != self.names.len() {
            return Err(Error::WriterCount {
                names: self.names.len(),
                tensors: self.written,
            });
        }
        self.w.flush().map_err(Error::Write)?;
        Ok(self.w)
    }
}

/// The stored dtype of `tensor`, after checking that the file can hold it.
fn check(index: usize, name: &str, tensor: &Tensor<'_>, bools: BoolEncoding) -> Result<DlType> {
    let dl = dl_type_of(tensor.dtype(), bools).ok_or_else(|| Error::UnsupportedDType {
        index,
        name: name.to_string(),
        dtype: tensor.dtype(),
    })?;
    let fits = tensor.dims().iter().all(|&d| i64::try_from(d).is_ok())
        && i64::try_from(tensor.bytes().len()).is_ok();
    if !fits {
        return Err(Error::TooLarge {
            index,
            name: name.to_string(),
            dims: tensor.dims().to_vec(),
        });
    }
    Ok(dl)
}

fn encode_header(buf: &mut Vec<u8>, dl: DlType, tensor: &Tensor<'_>) {
    encode_header_parts(buf, dl, tensor.dims(), tensor.bytes().len() as i64);
}

fn encode_header_parts(buf: &mut Vec<u8>, dl: DlType, dims: &[usize], byte_len: i64) {
    buf.clear();
    buf.extend_from_slice(&TENSOR_MAGIC.to_le_bytes());
    buf.extend_from_slice(&0u64.to_le_bytes());
    buf.extend_from_slice(&1i32.to_le_bytes()); // kDLCPU
    buf.extend_from_slice(&0i32.to_le_bytes()); // device id
    buf.extend_from_slice(&(dims.len() as i32).to_le_bytes());
    buf.push(dl.code);
    buf.push(dl.bits);
    buf.extend_from_slice(&dl.lanes.to_le_bytes());
    for &d in dims {
        buf.extend_from_slice(&(d as i64).to_le_bytes());
    }
    buf.extend_from_slice(&byte_len.to_le_bytes());
}

/// Writes `(name, tensor)` items as a `.params` file to `w`, in order.
///
/// Every item is checked (dtype storable, sizes fit) before the first byte
/// is written. The items are collected (pointers and names only; payloads
/// are never copied) because the names precede the tensors in the file.
/// The output is byte-identical to TVM 0.27's `save_param_dict` of a dict
/// with the same entries in the same order.
///
/// ```
/// # fn main() -> Result<(), cvm_params::Error> {
/// use cvm_params::{WriteOptions, BoolEncoding};
/// use tensor_core::{DType, Tensor};
///
/// let mask = Tensor::new(DType::Bool, [3], vec![1u8, 0, 1])?;
/// let mut new_style = Vec::new();
/// cvm_params::write(&mut new_style, [("mask", &mask)], &WriteOptions::default())?;
/// let mut old_style = Vec::new();
/// let legacy = WriteOptions::default().with_bools(BoolEncoding::Legacy);
/// cvm_params::write(&mut old_style, [("mask", &mask)], &legacy)?;
/// // header 24 + name table (8 + 4) + count 8: the record starts at 44;
/// // its dtype code and bits are at +28
/// let dt = 44 + 28;
/// assert_eq!(&new_style[dt..dt + 2], &[6, 8]);
/// assert_eq!(&old_style[dt..dt + 2], &[1, 1]);
/// # Ok(()) }
/// ```
pub fn write<'t, W, N, T>(
    w: W,
    items: impl IntoIterator<Item = (N, T)>,
    opts: &WriteOptions,
) -> Result<()>
where
    W: Write,
    N: AsRef<[u8]>,
    T: Borrow<Tensor<'t>>,
{
    let items: Vec<(N, T)> = items.into_iter().collect();
    for (index, (n, t)) in items.iter().enumerate() {
        check(
            index,
            &String::from_utf8_lossy(n.as_ref()),
            t.borrow(),
            opts.bools,
        )?;
    }
    let mut pw = ParamsWriter::new(w, items.iter().map(|(n, _)| n.as_ref()), opts)?;
    for (_, t) in &items {
        pw.write_tensor(t.borrow())?;
    }
    pw.finish()?;
    Ok(())
}

/// Writes `(name, tensor)` items to the file at `path`, atomically (a
/// temporary file beside it, renamed over it only when complete).
pub fn save<'t, N, T>(
    path: impl AsRef<Path>,
    items: impl IntoIterator<Item = (N, T)>,
    opts: &WriteOptions,
) -> Result<()>
where
    N: AsRef<[u8]>,
    T: Borrow<Tensor<'t>>,
{
    tensor_core::io::write_atomic(path, |w| write(w, items, opts))
}
