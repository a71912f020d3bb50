//! One module per format family; this file only dispatches.
//!
//! Each module offers the same four functions:
//! - `inspect(&Source) -> Result<Report>`: the contract's view of the file;
//! - `tensors(&Source) -> Result<TensorMap<'static>>`: every tensor, named as
//!   in `inspect`, sharing the memory map where possible;
//! - `write(format, out, &TensorMap) -> Result<()>`: a new file of that
//!   format holding the tensors (atomic: temporary file, then rename);
//! - `reencode(&Source, format, out) -> Result<()>`: the same content written
//!   again in its own format (what `convert X.ext Y.ext` does).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Result, bail};
use mlformats::Format;
use tensor_core::{MappedFile, TensorMap};

use crate::report::Report;

mod cvm;
mod nnabla;
mod nnp;
mod primitiv;
mod tennis;

/// An input file, memory-mapped, with its detected format.
pub struct Source {
    /// The path as the user gave it.
    pub path: PathBuf,
    /// The whole file.
    pub map: Arc<MappedFile>,
    /// Its format.
    pub format: Format,
}

impl Source {
    /// Maps `path` and detects its format (or takes `forced`).
    pub fn open(path: &Path, forced: Option<Format>) -> Result<Source> {
        let map = MappedFile::open(path).map_err(|e| match e {
            tensor_core::Error::Io { source, .. } => anyhow::Error::new(source),
            other => anyhow::Error::new(other),
        })?;
        let format = match forced {
            Some(f) => f,
            None => match mlformats::detect(mlformats::Input::Named {
                bytes: &map,
                name: path,
            }) {
                Some(f) => f,
                None => bail!(
                    "not a file of any format mlformats knows (primitiv, NNabla, TenniS, TVM/CVM)"
                ),
            },
        };
        Ok(Source {
            path: path.to_path_buf(),
            map,
            format,
        })
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        self.map.as_bytes()
    }

    /// The file's size.
    pub fn file_size(&self) -> u64 {
        self.map.len() as u64
    }
}

/// The `inspect` report of a file.
pub fn inspect(src: &Source) -> Result<Report> {
    match src.format {
        Format::CvmParams => cvm::inspect(src),
        Format::Primitiv => primitiv::inspect(src),
        Format::NnablaNntxt | Format::NnablaProtobuf => nnabla::inspect(src),
        Format::NnablaNnp | Format::NnablaH5 => nnp::inspect(src),
        Format::TennisModule => tennis::inspect(src),
        other => bail!("{other} is not supported by this build"),
    }
}

/// Every tensor of a file, named as `inspect` names them.
pub fn tensors(src: &Source) -> Result<TensorMap<'static>> {
    match src.format {
        Format::CvmParams => cvm::tensors(src),
        Format::Primitiv => primitiv::tensors(src),
        Format::NnablaNntxt | Format::NnablaProtobuf => nnabla::tensors(src),
        Format::NnablaNnp | Format::NnablaH5 => nnp::tensors(src),
        Format::TennisModule => tennis::tensors(src),
        other => bail!("{other} is not supported by this build"),
    }
}

/// Writes `tensors` as a new file of `format`.
pub fn write(format: Format, out: &Path, tensors: &TensorMap<'_>) -> Result<()> {
    match format {
        Format::CvmParams => cvm::write(out, tensors),
        Format::Primitiv => primitiv::write(out, tensors),
        Format::NnablaNntxt | Format::NnablaProtobuf => nnabla::write(format, out, tensors),
        Format::NnablaNnp | Format::NnablaH5 => nnp::write(format, out, tensors),
        Format::TennisModule => tennis::write(out, tensors),
        other => bail!("writing {other} is not supported by this build"),
    }
}

/// Writes the content of `src` again in its own format.
pub fn reencode(src: &Source, out: &Path) -> Result<()> {
    match src.format {
        Format::CvmParams => cvm::reencode(src, out),
        Format::Primitiv => primitiv::reencode(src, out),
        Format::NnablaNntxt | Format::NnablaProtobuf => nnabla::reencode(src, out),
        Format::NnablaNnp | Format::NnablaH5 => nnp::reencode(src, out),
        Format::TennisModule => tennis::reencode(src, out),
        other => bail!("{other} is not supported by this build"),
    }
}
