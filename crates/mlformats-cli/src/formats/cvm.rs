//! TVM/CVM .params in the CLI (crate `cvm-params`).
//!
//! Files are read strictly: trailing bytes and duplicate names are errors.
//! Names that are not UTF-8 are shown with U+FFFD; `convert X.params
//! Y.params` keeps the raw name bytes and each bool tensor's encoding, so it
//! reproduces a file TVM wrote byte for byte.

use std::path::Path;

use anyhow::Result;
use mlformats::cvm::{Params, ParamsWriter, WriteOptions};
use serde_json::json;
use tensor_core::TensorMap;

use super::Source;
use crate::report::{Report, TensorEntry};

fn parse(src: &Source) -> Result<Params<'_>> {
    Ok(Params::parse(src.bytes())?)
}

pub fn inspect(src: &Source) -> Result<Report> {
    let params = parse(src)?;
    let mut report = Report::new("cvm-params", src.file_size());
    for e in params.entries() {
        report.tensors.push(
            TensorEntry::new(e.name(), e.tensor()).with("data_offset", json!(e.info().data_offset)),
        );
    }
    Ok(report)
}

pub fn tensors(src: &Source) -> Result<TensorMap<'static>> {
    let params = parse(src)?;
    Ok(params
        .into_entries()
        .into_iter()
        .map(|e| (e.name().into_owned(), e.into_tensor().rebase(&src.map)))
        .collect())
}

pub fn write(out: &Path, tensors: &TensorMap<'_>) -> Result<()> {
    mlformats::cvm::save(out, tensors.iter(), &WriteOptions::default())?;
    Ok(())
}

pub fn reencode(src: &Source, out: &Path) -> Result<()> {
    let params = parse(src)?;
    tensor_core::io::write_atomic(out, |w| -> Result<(), mlformats::cvm::Error> {
        let entries = params.entries();
        let mut pw = ParamsWriter::new(
            w,
            entries.iter().map(|e| e.name_bytes()),
            &WriteOptions::default(),
        )?;
        for e in entries {
            let bools = e.info().dl_type.bool_encoding().unwrap_or_default();
            pw.write_tensor_as(e.tensor(), bools)?;
        }
        pw.finish()?;
        Ok(())
    })?;
    Ok(())
}
