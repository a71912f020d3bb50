//! NNabla .nnp archives and .h5 parameter files in the CLI (crate `nnp-archive`).
//!
//! - `inspect`: `nnabla-nnp` (parameters in nnabla's load order with
//!   `need_grad`, and the merged network graph) or `nnabla-h5` (graph null).
//! - `tensors`: the parameters, sharing the memory map (stored members and
//!   contiguous HDF5 datasets are not copied).
//! - `write`: tensors from another format become an `.h5`, or an `.nnp`
//!   holding only parameters (no network); `need_grad` is true for all.
//! - `reencode`: the same content in nnabla's own layout (an `.nnp` keeps
//!   its parameter format, networks and solver states; an `.h5` keeps order
//!   and `need_grad`).

use std::path::Path;

use anyhow::{Result, bail};
use mlformats::Format;
use mlformats::nnp::nnabla_proto::NNablaProtoBuf;
use mlformats::nnp::{self as nnpa, MemberKind, Nnp, ParamFormat, Parameter, ReadOptions};
use serde_json::json;
use tensor_core::{Limits, TensorMap};

use super::Source;
use crate::report::{Report, TensorEntry};

fn read_h5(src: &Source) -> Result<Vec<Parameter<'static>>> {
    Ok(nnpa::h5::read_h5_mapped(
        &src.map,
        0..src.map.len(),
        &Limits::default(),
    )?)
}

fn read_nnp(src: &Source) -> Result<Nnp<'static>> {
    Ok(Nnp::from_mapped(&src.map, &ReadOptions::default())?)
}

fn entry(p: &Parameter<'_>) -> TensorEntry {
    TensorEntry::new(p.name.clone(), &p.tensor).with("need_grad", json!(p.need_grad))
}

pub fn inspect(src: &Source) -> Result<Report> {
    match src.format {
        Format::NnablaNnp => {
            let nnp = read_nnp(src)?;
            let mut r = Report::new("nnabla-nnp", src.file_size());
            r.tensors = nnp.parameters().iter().map(entry).collect();
            r.graph = Some(super::nnabla::graph_json(nnp.model()));
            let states: Vec<&str> = nnp
                .optimizer_states()
                .iter()
                .map(|o| o.name.as_str())
                .collect();
            if !states.is_empty() {
                r.extras.insert("solver_states".into(), json!(states));
            }
            Ok(r)
        }
        Format::NnablaH5 => {
            let mut r = Report::new("nnabla-h5", src.file_size());
            r.tensors = read_h5(src)?.iter().map(entry).collect();
            Ok(r)
        }
        other => bail!("{other} is not an .nnp or .h5 file"),
    }
}

pub fn tensors(src: &Source) -> Result<TensorMap<'static>> {
    let params: Vec<Parameter<'static>> = match src.format {
        Format::NnablaNnp => read_nnp(src)?.parameters().iter().cloned().collect(),
        Format::NnablaH5 => read_h5(src)?,
        other => bail!("{other} is not an .nnp or .h5 file"),
    };
    Ok(params.into_iter().map(|p| (p.name, p.tensor)).collect())
}

fn as_params<'a>(tensors: &TensorMap<'a>) -> Vec<Parameter<'a>> {
    tensors
        .iter()
        .map(|(n, t)| Parameter::new(n, t.clone(), true))
        .collect()
}

pub fn write(format: Format, out: &Path, tensors: &TensorMap<'_>) -> Result<()> {
    let params = as_params(tensors);
    match format {
        Format::NnablaH5 => nnpa::h5::save_h5(out, &params)?,
        Format::NnablaNnp => {
            let nnp = Nnp::new(NNablaProtoBuf::default(), params.into_iter().collect())?;
            nnp.save(out, &nnpa::WriteOptions::default())?;
        }
        other => bail!("{other} is not written by the .nnp/.h5 module"),
    }
    Ok(())
}

pub fn reencode(src: &Source, out: &Path) -> Result<()> {
    match src.format {
        Format::NnablaNnp => {
            let nnp = read_nnp(src)?;
            let kinds: Vec<MemberKind> = nnp.members().iter().map(|m| m.kind).collect();
            let format =
                if kinds.contains(&MemberKind::Protobuf) && !kinds.contains(&MemberKind::H5) {
                    ParamFormat::Protobuf
                } else {
                    ParamFormat::H5
                };
            nnp.save(
                out,
                &nnpa::WriteOptions::default().with_param_format(format),
            )?;
        }
        Format::NnablaH5 => {
            let params = read_h5(src)?;
            nnpa::h5::save_h5(out, &params)?;
        }
        other => bail!("{other} is not an .nnp or .h5 file"),
    }
    Ok(())
}
