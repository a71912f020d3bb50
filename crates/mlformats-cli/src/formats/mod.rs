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
use tensor_core::{Limits, MappedFile, TensorMap};

use crate::report::Report;

mod cvm;
mod nnabla;
mod nnabla_family;
mod nnp;
pub mod npz;
mod primitiv;
pub mod safetensors;
mod tennis;

/// Maps `path`; the error is the plain I/O error (the caller names the path).
fn open_map(path: &Path) -> Result<Arc<MappedFile>> {
    MappedFile::open(path).map_err(|e| match e {
        tensor_core::Error::Io { source, .. } => anyhow::Error::new(source),
        other => anyhow::Error::new(other),
    })
}

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
        let map = open_map(path)?;
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

/// Converts between two NNabla encodings keeping the whole model (not just
/// the tensors); `None` when `src` and `target` are not both NNabla formats.
pub fn transcode(src: &Source, target: Format, out: &Path) -> Option<Result<()>> {
    (nnabla_family::is_nnabla(src.format)
        && nnabla_family::is_nnabla(target)
        && src.format != target)
        .then(|| nnabla_family::transcode(src, target, out))
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

/// Any file the CLI reads or writes: a format of the inspect contract, or
/// one of the exchange formats `convert`, `diff` and `stats` also handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// primitiv, NNabla, TenniS or TVM/CVM.
    Ml(Format),
    /// Hugging Face `.safetensors`.
    Safetensors,
    /// numpy `.npz`.
    Npz,
}

impl Kind {
    /// The name used in messages and `--to`/`--from`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Ml(f) => f.name(),
            Kind::Safetensors => "safetensors",
            Kind::Npz => "npz",
        }
    }

    /// Every kind's name, for messages.
    pub fn all_names() -> Vec<&'static str> {
        let mut v: Vec<&'static str> = Format::ALL.iter().map(|f| f.name()).collect();
        v.extend(["safetensors", "npz"]);
        v
    }

    /// A kind from its name or an alias.
    pub fn from_name(s: &str) -> Option<Kind> {
        match s.to_ascii_lowercase().as_str() {
            "safetensors" | "st" => Some(Kind::Safetensors),
            "npz" | "numpy" => Some(Kind::Npz),
            other => Format::from_name(other).map(Kind::Ml),
        }
    }

    /// The kind an output file's extension names.
    pub fn from_extension(path: &Path) -> Option<Kind> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "safetensors" => Some(Kind::Safetensors),
            "npz" => Some(Kind::Npz),
            _ => Format::from_extension(path).map(Kind::Ml),
        }
    }
}

/// A file read for its tensors (convert, diff, stats, validate).
pub struct Loaded {
    /// What it is.
    pub kind: Kind,
    /// The memory map the tensors share.
    pub map: Arc<MappedFile>,
    /// The file's tensors, named as `inspect` names them.
    pub tensors: TensorMap<'static>,
    /// The source, for contract formats (graph, re-encoding).
    pub source: Option<Source>,
}

/// Detects what `path` holds, contract formats first.
pub fn detect_kind(path: &Path, bytes: &[u8]) -> Option<Kind> {
    if let Some(f) = mlformats::detect(mlformats::Input::Named { bytes, name: path }) {
        return Some(Kind::Ml(f));
    }
    if safetensors::looks_like(bytes) {
        return Some(Kind::Safetensors);
    }
    let named_npz = Kind::from_extension(path) == Some(Kind::Npz);
    if npz::looks_like(bytes, named_npz) {
        return Some(Kind::Npz);
    }
    None
}

/// Opens `path` (as `forced`, or detected) and reads all its tensors.
pub fn load(path: &Path, forced: Option<Kind>) -> Result<Loaded> {
    let map = open_map(path)?;
    let kind = match forced.or_else(|| detect_kind(path, &map)) {
        Some(k) => k,
        None => bail!(
            "not a file of any format mlformats knows (primitiv, NNabla, TenniS, TVM/CVM, safetensors, npz)"
        ),
    };
    match kind {
        Kind::Ml(format) => {
            let src = Source {
                path: path.to_path_buf(),
                map: Arc::clone(&map),
                format,
            };
            let tensors = tensors(&src)?;
            Ok(Loaded {
                kind,
                map,
                tensors,
                source: Some(src),
            })
        }
        Kind::Safetensors => {
            let tensors = safetensors::read(&map)?;
            Ok(Loaded {
                kind,
                map,
                tensors,
                source: None,
            })
        }
        Kind::Npz => {
            let tensors = npz::read(&map, &Limits::default())?;
            Ok(Loaded {
                kind,
                map,
                tensors,
                source: None,
            })
        }
    }
}
