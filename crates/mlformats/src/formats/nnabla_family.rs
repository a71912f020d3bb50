//! Converting between NNabla's encodings (`.nntxt`, `.protobuf`, `.nnp`,
//! `.h5`) with the whole model: networks, executors, optimizers, datasets,
//! monitors and every parameter with its `need_grad`. An `.h5` holds
//! parameters only, so converting to it keeps just those.

use std::path::Path;

use nnabla_proto::{self as nn, NNablaProtoBuf};
use nnp_archive::{self as nnpa, Nnp, ParamFormat, Parameter, ParameterSet};

use crate::codec::{ReadOptions, Source};
use crate::{Error, Format, Result};

/// The model (without parameter messages) and the parameters, in the order
/// nnabla loads them.
fn load(src: &Source) -> Result<(NNablaProtoBuf, Vec<Parameter<'static>>)> {
    let opts = ReadOptions::default();
    Ok(match src.format {
        Format::NnablaNntxt | Format::NnablaProtobuf => {
            let (model, params) = super::nnabla::load(src, &opts.limits)?;
            let params = params
                .into_iter()
                .map(|p| Parameter::new(p.name, p.tensor.rebase(&src.map), p.need_grad))
                .collect();
            (model, params)
        }
        Format::NnablaNnp => {
            let nnp = super::nnp::read_nnp(src, &opts)?;
            (
                nnp.model().clone(),
                nnp.parameters().iter().cloned().collect(),
            )
        }
        Format::NnablaH5 => (NNablaProtoBuf::default(), super::nnp::read_h5(src, &opts)?),
        other => {
            return Err(Error::Unsupported(format!(
                "{other} is not an NNabla format"
            )));
        }
    })
}

/// Writes the content of `src` as `target`, another NNabla format.
pub(crate) fn transcode(src: &Source, target: Format, out: &Path) -> Result<()> {
    let (mut model, params) = load(src)?;
    match target {
        Format::NnablaNntxt | Format::NnablaProtobuf => {
            nn::check_parameter_names(params.iter().map(|p| p.name.as_str()))?;
            for p in &params {
                model
                    .parameter
                    .push(nn::parameter_from_tensor(&p.name, &p.tensor, p.need_grad)?);
            }
            tensor_core::io::write_atomic(out, |w| -> Result<()> {
                if target == Format::NnablaNntxt {
                    nn::text::write(w, &model)?;
                } else {
                    nn::binary::write(w, &model)?;
                }
                Ok(())
            })
        }
        Format::NnablaNnp => {
            let set: ParameterSet<'_> = params.into_iter().collect();
            let nnp = Nnp::new(model, set)?;
            let opts = nnpa::WriteOptions::default().with_param_format(ParamFormat::H5);
            Ok(nnp.save(out, &opts)?)
        }
        Format::NnablaH5 => Ok(nnpa::h5::save(out, &params)?),
        other => Err(Error::Unsupported(format!(
            "{other} is not an NNabla format"
        ))),
    }
}
