//! Converting between NNabla's encodings (`.nntxt`, `.protobuf`, `.nnp`,
//! `.h5`) with the whole model: networks, executors, optimizers, datasets,
//! monitors and every parameter with its `need_grad`. An `.h5` holds
//! parameters only, so converting to it keeps just those. A conversion that
//! selects, casts or renames parameters keeps the model too ([`write_to`]).

use std::collections::HashSet;

use nnabla_proto::NNablaProtoBuf;
use nnp_archive::Parameter;

use crate::codec::{Item, ReadOptions, Source, WriteContext, WriteSeek};
use crate::convert::Plan;
use crate::sink::Feed;
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
                super::nnp::model_of(&nnp),
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

/// The model of an NNabla file without its parameters (an `.h5` has none).
pub(crate) fn model(src: &Source) -> Result<NNablaProtoBuf> {
    Ok(load(src)?.0)
}

/// Writes the content of `src` as `target`, another NNabla format: the
/// whole model with every parameter as loaded.
pub(crate) fn transcode(src: &Source, target: Format, w: &mut dyn WriteSeek) -> Result<()> {
    let (model, params) = load(src)?;
    let items: Vec<Item<'_, '_>> = params
        .iter()
        .map(|p| Item {
            name: &p.name,
            tensor: (&p.tensor).into(),
            need_grad: p.need_grad,
        })
        .collect();
    let cx = WriteContext::quiet(Plan::unchanged());
    write_to(&model, target, w, &items, &cx)
}

/// Writes `model` as `target` (an NNabla format) to `w` with `items` as its
/// parameters, each got and converted by the plan as it is written. An
/// `.h5` holds the parameters alone.
pub(crate) fn write_to(
    model: &NNablaProtoBuf,
    target: Format,
    w: &mut dyn WriteSeek,
    items: &[Item<'_, '_>],
    cx: &WriteContext<'_>,
) -> Result<()> {
    let feed = &Feed { items, cx };
    match target {
        Format::NnablaNntxt | Format::NnablaProtobuf => {
            super::nnabla::write_model(model, target, w, feed)
        }
        Format::NnablaNnp => super::nnp::write_nnp(model, w, feed),
        Format::NnablaH5 => super::nnp::write_h5(w, feed),
        other => Err(Error::Unsupported(format!(
            "{other} is not an NNabla format"
        ))),
    }
}

/// The parameters `model`'s networks use that `names` does not hold, in
/// network order, each once.
pub(crate) fn missing_parameters<'n>(
    model: &NNablaProtoBuf,
    names: impl IntoIterator<Item = &'n str>,
) -> Vec<String> {
    let have: HashSet<&str> = names.into_iter().collect();
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for net in &model.network {
        for v in &net.variable {
            if v.r#type == "Parameter" && !have.contains(v.name.as_str()) && seen.insert(&v.name) {
                out.push(v.name.clone());
            }
        }
    }
    out
}

/// The NNabla model of `network` with the parameters of `params` merged in
/// (how Neural Network Console lays a project out: `net.nntxt` plus a
/// parameter `.h5` or `.protobuf`), as one document: the network file's own
/// parameters first, then those of `params`, a name in both taking the value
/// of `params` (nnabla loads them in that order). The merged model is held in
/// memory as binary `.protobuf`.
pub(crate) fn with_parameters(
    network: &crate::Document,
    params: &crate::Document,
) -> Result<crate::Document> {
    let pf = params.format();
    if !network.format().is_nnabla() || network.format() == Format::NnablaH5 {
        return Err(Error::Invalid(format!(
            "a parameter file merges into an NNabla network (.nntxt, .protobuf, .nnp), \
             not into {}",
            network.format()
        )));
    }
    if !pf.is_nnabla() {
        return Err(Error::Invalid(format!(
            "the parameter file is {pf}; NNabla parameters come in .h5, .protobuf, .nntxt or .nnp"
        )));
    }
    let (model, own) = load(&network.source()?)?;
    if model.network.is_empty() {
        return Err(Error::Invalid(format!(
            "{} has no network to merge parameters into",
            network.format()
        )));
    }
    let mut index: std::collections::HashMap<String, usize> = Default::default();
    let mut all: Vec<(String, tensor_core::Tensor<'static>, bool)> = Vec::new();
    let mut put = |name: &str, t: tensor_core::Tensor<'static>, g: bool| match index.get(name) {
        Some(&i) => all[i] = (name.to_string(), t, g),
        None => {
            index.insert(name.to_string(), all.len());
            all.push((name.to_string(), t, g));
        }
    };
    for p in own {
        put(&p.name, p.tensor, p.need_grad);
    }
    for (name, t) in params.tensors() {
        put(name, t.clone(), params.need_grad(name).unwrap_or(true));
    }
    let items: Vec<Item<'_, '_>> = all
        .iter()
        .map(|(name, tensor, need_grad)| Item {
            name,
            tensor: tensor.into(),
            need_grad: *need_grad,
        })
        .collect();
    let bytes = super::nnabla::encode_model(&model, &items)?;
    crate::Document::from_bytes(bytes, network.path(), Some(Format::NnablaProtobuf))
}
