//! NNabla `.nnp` archives and `.h5` parameter files (crate `nnp-archive`).
//!
//! - reading: `.nnp` gives the parameters in nnabla's load order with
//!   `need_grad`, the merged networks and the names of its solver-state
//!   members; `.h5` the parameters alone (no graph).
//! - writing a set of tensors: an `.h5`, or an `.nnp` holding only
//!   parameters (no network), with each tensor's `need_grad`.
//! - re-encoding: the same content in nnabla's own layout (an `.nnp` keeps
//!   its parameter format, networks and solver states; an `.h5` keeps
//!   order and `need_grad`).

use std::path::Path;

use nnp_archive::nnabla_proto::NNablaProtoBuf;
use nnp_archive::{self as nnpa, MemberKind, Nnp, ParamFormat, Parameter};
use serde_json::json;

use crate::codec::{Codec, Contents, Item, ReadOptions, Source, WriteContext};
use crate::{Format, Result};

pub(crate) struct NnpCodec;

fn nnp_options(opts: &ReadOptions) -> nnpa::ReadOptions {
    nnpa::ReadOptions::default().with_limits(opts.limits)
}

pub(crate) fn read_nnp(src: &Source, opts: &ReadOptions) -> Result<Nnp<'static>> {
    Ok(Nnp::from_mapped(&src.map, &nnp_options(opts))?)
}

pub(crate) fn read_h5(src: &Source, opts: &ReadOptions) -> Result<Vec<Parameter<'static>>> {
    Ok(nnpa::h5::read_h5_mapped(
        &src.map,
        0..src.map.len(),
        &opts.limits,
    )?)
}

impl Codec for NnpCodec {
    fn read(&self, src: &Source, opts: &ReadOptions) -> Result<Contents> {
        match src.format {
            Format::NnablaNnp => {
                let nnp = read_nnp(src, opts)?;
                let params = nnp.parameters().iter().cloned().collect();
                let mut c = super::nnabla::contents(nnp.model(), params);
                let states: Vec<&str> = nnp
                    .optimizer_states()
                    .iter()
                    .map(|o| o.name.as_str())
                    .collect();
                if !states.is_empty() {
                    c.metadata.insert("solver_states".into(), json!(states));
                }
                Ok(c)
            }
            _ => {
                let mut c =
                    super::nnabla::contents(&NNablaProtoBuf::default(), read_h5(src, opts)?);
                c.graph = None;
                Ok(c)
            }
        }
    }

    fn write(
        &self,
        format: Format,
        out: &Path,
        items: &[Item<'_, '_>],
        cx: &WriteContext<'_>,
    ) -> Result<()> {
        let prepared = cx.prepare_all(items)?;
        let params: Vec<Parameter<'_>> = prepared
            .into_iter()
            .map(|(n, t, g)| Parameter::new(n, t, g))
            .collect();
        match format {
            Format::NnablaH5 => nnpa::h5::save_h5(out, &params)?,
            _ => {
                let nnp = Nnp::new(NNablaProtoBuf::default(), params.into_iter().collect())?;
                nnp.save(out, &nnpa::WriteOptions::default())?;
            }
        }
        Ok(())
    }

    fn reencode(&self, src: &Source, out: &Path) -> Result<()> {
        match src.format {
            Format::NnablaNnp => {
                let nnp = read_nnp(src, &ReadOptions::default())?;
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
            _ => {
                let params = read_h5(src, &ReadOptions::default())?;
                nnpa::h5::save_h5(out, &params)?;
            }
        }
        Ok(())
    }
}
