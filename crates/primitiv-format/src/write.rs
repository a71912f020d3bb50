//! Writing, byte-identical to the C++ library (`docs/formats/primitiv.md`
//! §2–§4): every uint32 as `0xce` + 4 bytes, floats as `0xca`, minimal-width
//! str, array, map and bin headers, tensor data copied straight from the
//! tensor's bytes.
//!
//! Writers stream to any [`Write`]: nothing is assembled in memory; wrap a
//! file in a `BufWriter` (the `save` functions do, and replace the file
//! atomically through [`tensor_core::io::write_atomic`]).

use std::io::Write;
use std::path::Path;

use rmp::encode::ValueWriteError;

use crate::order::{config_order, unordered_map_order};
use crate::types::check_param_batch;
use crate::{
    DataType, Error, File, KeyPath, Model, Optimizer, Parameter, Result, Shape, Tensor, join_key,
};

/// In which order unordered items (parameter stats, optimizer configs) are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Order {
    /// As stored in the Rust value (file order for values read from a file).
    #[default]
    Stored,
    /// As the C++ library built with libstdc++ writes them
    /// (`docs/formats/primitiv.md` §4): stats are treated as inserted in
    /// their stored order (which is what `Parameter::load` does, so a
    /// read→write round trip reorders exactly as C++ load→save does);
    /// optimizer configs in the order the library's `get_configs` inserts
    /// them. Repeated keys keep their first entry.
    Libstdcxx,
}

/// How to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriteOptions {
    /// Write parameter stats (`save(path, with_stats)`); `false` writes a stats count of 0.
    pub with_stats: bool,
    /// Order of parameter stats.
    pub stats_order: Order,
    /// Order of optimizer configs.
    pub config_order: Order,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            with_stats: true,
            stats_order: Order::Stored,
            config_order: Order::Stored,
        }
    }
}

impl WriteOptions {
    /// Stats and configs ordered as the C++ library (libstdc++) would write them.
    pub fn cpp_order() -> Self {
        WriteOptions {
            with_stats: true,
            stats_order: Order::Libstdcxx,
            config_order: Order::Libstdcxx,
        }
    }

    /// Sets [`WriteOptions::stats_order`].
    pub fn with_stats_order(mut self, order: Order) -> Self {
        self.stats_order = order;
        self
    }

    /// Sets [`WriteOptions::config_order`].
    pub fn with_config_order(mut self, order: Order) -> Self {
        self.config_order = order;
        self
    }

    /// Sets [`WriteOptions::with_stats`].
    pub fn with_stats(mut self, yes: bool) -> Self {
        self.with_stats = yes;
        self
    }
}

fn werr(e: ValueWriteError<std::io::Error>) -> Error {
    match e {
        ValueWriteError::InvalidMarkerWrite(e) | ValueWriteError::InvalidDataWrite(e) => {
            Error::io("writing", e)
        }
    }
}

fn len32(what: &str, n: usize) -> Result<u32> {
    u32::try_from(n).map_err(|_| Error::Unwritable {
        what: what.to_string(),
        why: format!("{n} items or bytes exceed the format's limit of 2^32 - 1"),
    })
}

/// Writes a fixed-width uint32 (`0xce` + 4 bytes big-endian).
pub fn write_u32<W: Write>(w: &mut W, v: u32) -> Result<()> {
    rmp::encode::write_u32(w, v).map_err(werr)
}

/// Writes a float32 (`0xca` + 4 bytes big-endian).
pub fn write_f32<W: Write>(w: &mut W, v: f32) -> Result<()> {
    rmp::encode::write_f32(w, v).map_err(werr)
}

/// Writes a str with the smallest header.
pub fn write_str<W: Write>(w: &mut W, s: &[u8]) -> Result<()> {
    rmp::encode::write_str_len(w, len32("a string", s.len())?).map_err(werr)?;
    w.write_all(s).map_err(|e| Error::io("writing", e))
}

/// Writes a bin with the smallest header (the payload is written as is).
pub fn write_bin<W: Write>(w: &mut W, data: &[u8]) -> Result<()> {
    rmp::encode::write_bin_len(w, len32("tensor data", data.len())?).map_err(werr)?;
    w.write_all(data).map_err(|e| Error::io("writing", e))
}

/// Writes the header: version 0.1 and `data_type`.
pub fn write_header<W: Write>(w: &mut W, data_type: DataType) -> Result<()> {
    write_u32(w, 0)?;
    write_u32(w, 1)?;
    write_u32(w, data_type.code())
}

/// Writes a shape body: the normalised dims (trailing 1s dropped) and the batch.
pub fn write_shape_body<W: Write>(w: &mut W, s: &Shape) -> Result<()> {
    let dims = s.dims();
    rmp::encode::write_array_len(w, dims.len() as u32).map_err(werr)?;
    for &d in dims {
        write_u32(w, d)?;
    }
    write_u32(w, s.batch())
}

/// Writes a tensor body: its shape and its data as one bin.
pub fn write_tensor_body<W: Write>(w: &mut W, t: &Tensor<'_>) -> Result<()> {
    write_shape_body(w, t.shape())?;
    write_bin(w, t.data())
}

/// Writes a parameter body: value, stats count, stats.
pub fn write_parameter_body<W: Write>(
    w: &mut W,
    p: &Parameter<'_>,
    opts: &WriteOptions,
) -> Result<()> {
    check_param_batch(p.value.shape(), 0)?;
    write_tensor_body(w, &p.value)?;
    if !opts.with_stats {
        return write_u32(w, 0);
    }
    let idx: Vec<usize> = match opts.stats_order {
        Order::Stored => (0..p.stats.len()).collect(),
        Order::Libstdcxx => {
            let keys: Vec<&[u8]> = p.stats.iter().map(|(k, _)| k.as_slice()).collect();
            unordered_map_order(&keys)
        }
    };
    write_u32(w, len32("stats", idx.len())?)?;
    for i in idx {
        let (k, t) = &p.stats[i];
        write_str(w, k)?;
        write_tensor_body(w, t)?;
    }
    Ok(())
}

fn write_key<W: Write>(w: &mut W, key: &[Vec<u8>]) -> Result<()> {
    rmp::encode::write_array_len(w, len32("a key path", key.len())?).map_err(werr)?;
    for c in key {
        write_str(w, c)?;
    }
    Ok(())
}

fn write_configs<W: Write, T: Copy>(
    w: &mut W,
    items: &[(Vec<u8>, T)],
    order: Order,
    mut value: impl FnMut(&mut W, T) -> Result<()>,
) -> Result<()> {
    let idx: Vec<usize> = match order {
        Order::Stored => (0..items.len()).collect(),
        Order::Libstdcxx => {
            let keys: Vec<&[u8]> = items.iter().map(|(k, _)| k.as_slice()).collect();
            config_order(&keys)
        }
    };
    rmp::encode::write_map_len(w, len32("configs", idx.len())?).map_err(werr)?;
    for i in idx {
        write_str(w, &items[i].0)?;
        value(w, items[i].1)?;
    }
    Ok(())
}

/// Streams a Model: header and count first, then one parameter at a time,
/// in byte-wise key order (the C++ `std::map` order).
///
/// ```
/// use primitiv_format::{Model, Parameter, Shape, Tensor, ModelWriter, WriteOptions};
/// let p = Parameter::new(Tensor::from_values(Shape::new([2], 1)?, &[1.0, 2.0])?)?;
/// let mut out = Vec::new();
/// let mut mw = ModelWriter::new(&mut out, 2, &WriteOptions::default())?;
/// mw.param(&[b"a".to_vec()], &p)?;
/// mw.param(&[b"b".to_vec()], &p)?;
/// mw.finish()?;
/// let m = Model::parse(&out)?;
/// assert_eq!(m.len(), 2);
/// # Ok::<(), primitiv_format::Error>(())
/// ```
pub struct ModelWriter<W: Write> {
    w: W,
    remaining: u32,
    last: Option<KeyPath>,
    opts: WriteOptions,
}

impl<W: Write> ModelWriter<W> {
    /// Writes the header and the parameter count `count`.
    pub fn new(mut w: W, count: u32, opts: &WriteOptions) -> Result<Self> {
        write_header(&mut w, DataType::Model)?;
        write_u32(&mut w, count)?;
        Ok(ModelWriter {
            w,
            remaining: count,
            last: None,
            opts: *opts,
        })
    }

    /// Writes one parameter. Keys must come in strictly increasing byte-wise order.
    pub fn param(&mut self, key: &[Vec<u8>], p: &Parameter<'_>) -> Result<()> {
        if key.is_empty() {
            return Err(Error::ModelOrder(
                "a key path needs at least one component".into(),
            ));
        }
        if self.remaining == 0 {
            return Err(Error::ModelOrder(format!(
                "more parameters than the count given ('{}')",
                join_key(key)
            )));
        }
        if let Some(last) = &self.last
            && last.as_slice() >= key
        {
            return Err(Error::ModelOrder(format!(
                "key '{}' after '{}': keys must be unique and in byte-wise order",
                join_key(key),
                join_key(last)
            )));
        }
        write_key(&mut self.w, key)?;
        write_parameter_body(&mut self.w, p, &self.opts)
            .map_err(|e| e.context(format!("parameter '{}'", join_key(key))))?;
        self.remaining -= 1;
        self.last = Some(key.to_vec());
        Ok(())
    }

    /// Checks that every announced parameter was written; gives the writer back.
    pub fn finish(self) -> Result<W> {
        if self.remaining != 0 {
            return Err(Error::ModelOrder(format!(
                "{} announced parameters were not written",
                self.remaining
            )));
        }
        Ok(self.w)
    }
}

fn save_with(path: &Path, f: impl FnOnce(&mut dyn Write) -> Result<()>) -> Result<()> {
    tensor_core::io::write_atomic(path, |w| f(w))
}

impl Shape {
    /// Writes a Shape file (no option applies to it; `opts` keeps the
    /// signature of every other `write`).
    pub fn write<W: Write>(&self, mut w: W, opts: &WriteOptions) -> Result<()> {
        let _ = opts;
        write_header(&mut w, DataType::Shape)?;
        write_shape_body(&mut w, self)
    }

    /// Saves a Shape file atomically.
    pub fn save(&self, path: impl AsRef<Path>, opts: &WriteOptions) -> Result<()> {
        save_with(path.as_ref(), |w| self.write(w, opts))
    }
}

impl Tensor<'_> {
    /// Writes a Tensor file (no option applies to it; `opts` keeps the
    /// signature of every other `write`).
    pub fn write<W: Write>(&self, mut w: W, opts: &WriteOptions) -> Result<()> {
        let _ = opts;
        write_header(&mut w, DataType::Tensor)?;
        write_tensor_body(&mut w, self)
    }

    /// Saves a Tensor file atomically.
    pub fn save(&self, path: impl AsRef<Path>, opts: &WriteOptions) -> Result<()> {
        save_with(path.as_ref(), |w| self.write(w, opts))
    }
}

impl Parameter<'_> {
    /// Writes a Parameter file (`Parameter::save`); fails unless the value's batch is 1.
    pub fn write<W: Write>(&self, mut w: W, opts: &WriteOptions) -> Result<()> {
        write_header(&mut w, DataType::Parameter)?;
        write_parameter_body(&mut w, self, opts)
    }

    /// Saves a Parameter file atomically.
    pub fn save(&self, path: impl AsRef<Path>, opts: &WriteOptions) -> Result<()> {
        save_with(path.as_ref(), |w| self.write(w, opts))
    }
}

impl Model<'_> {
    /// Writes a Model file (`Model::save`): parameters sorted byte-wise by
    /// key path, whatever their order in `entries`. Fails on a repeated or
    /// empty key (a C++ model cannot hold either).
    pub fn write<W: Write>(&self, w: W, opts: &WriteOptions) -> Result<()> {
        let mut idx: Vec<usize> = (0..self.entries.len()).collect();
        idx.sort_by(|&a, &b| self.entries[a].0.cmp(&self.entries[b].0));
        let mut mw = ModelWriter::new(w, len32("parameters", idx.len())?, opts)?;
        for i in idx {
            let (k, p) = &self.entries[i];
            mw.param(k, p)?;
        }
        mw.finish().map(drop)
    }

    /// Saves a Model file atomically.
    pub fn save(&self, path: impl AsRef<Path>, opts: &WriteOptions) -> Result<()> {
        save_with(path.as_ref(), |w| self.write(w, opts))
    }
}

impl Optimizer {
    /// Writes an Optimizer file (`Optimizer::save`).
    pub fn write<W: Write>(&self, mut w: W, opts: &WriteOptions) -> Result<()> {
        write_header(&mut w, DataType::Optimizer)?;
        write_configs(&mut w, &self.uint_configs, opts.config_order, |w, v| {
            write_u32(w, v)
        })?;
        write_configs(&mut w, &self.float_configs, opts.config_order, |w, v| {
            write_f32(w, v)
        })
    }

    /// Saves an Optimizer file atomically.
    pub fn save(&self, path: impl AsRef<Path>, opts: &WriteOptions) -> Result<()> {
        save_with(path.as_ref(), |w| self.write(w, opts))
    }
}

impl File<'_> {
    /// Writes the file in its own data type.
    pub fn write<W: Write>(&self, w: W, opts: &WriteOptions) -> Result<()> {
        match self {
            File::Shape(s) => s.write(w, opts),
            File::Tensor(t) => t.write(w, opts),
            File::Parameter(p) => p.write(w, opts),
            File::Model(m) => m.write(w, opts),
            File::Optimizer(o) => o.write(w, opts),
        }
    }

    /// Saves the file atomically.
    pub fn save(&self, path: impl AsRef<Path>, opts: &WriteOptions) -> Result<()> {
        save_with(path.as_ref(), |w| self.write(w, opts))
    }
}
