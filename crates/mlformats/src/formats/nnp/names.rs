//! Network names of parameters that `parameter.h5` stores under another
//! path. nnabla pairs a network's parameter variables with the datasets of
//! `parameter.h5` by path, and makes a fresh random parameter for a name it
//! does not find; a name HDF5 cannot hold as it is (torch.onnx 2.x names:
//! `/model.0/conv/weight`, an empty first component) is stored at its
//! [`h5_path`] (`_/model.0/conv/weight`) with the name in the dataset's
//! `original_name` attribute. So the writer names the network's variable
//! with that same path ([`stored_names`]), and the reader, which gets the
//! name back from the attribute, names the variable back ([`original_names`]):
//! one mapping, `h5_path`, both ways.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use nnp_archive::h5::h5_path;
use nnp_archive::nnabla_proto::NNablaProtoBuf;

use crate::{Error, Result};

/// Renames every use of a variable named by a key of `map` (network
/// variables, function inputs and outputs, and the variables executors,
/// optimizers and monitors name) to its value.
fn rename_variables(model: &mut NNablaProtoBuf, map: &HashMap<String, String>) {
    let re = |s: &mut String| {
        if let Some(n) = map.get(s.as_str()) {
            s.clone_from(n);
        }
    };
    for net in &mut model.network {
        net.variable.iter_mut().for_each(|v| re(&mut v.name));
        for f in &mut net.function {
            f.input.iter_mut().chain(f.output.iter_mut()).for_each(re);
        }
    }
    // each list holds a different message type with a `variable_name`
    macro_rules! rename_in {
        ($($list:expr),+) => {
            $($list.iter_mut().for_each(|v| re(&mut v.variable_name));)+
        };
    }
    for e in &mut model.executor {
        rename_in!(
            e.data_variable,
            e.generator_variable,
            e.loss_variable,
            e.output_variable,
            e.parameter_variable
        );
    }
    for o in &mut model.optimizer {
        rename_in!(
            o.data_variable,
            o.generator_variable,
            o.loss_variable,
            o.parameter_variable
        );
    }
    for m in &mut model.monitor {
        rename_in!(m.data_variable, m.generator_variable, m.monitor_variable);
    }
}

/// The names `model`'s networks give their variables.
fn variable_names(model: &NNablaProtoBuf) -> HashSet<&str> {
    model
        .network
        .iter()
        .flat_map(|n| n.variable.iter().map(|v| v.name.as_str()))
        .collect()
}

/// `model` as `.nnp` writes it with parameters named `params` in
/// `parameter.h5`: each network variable named as a parameter that HDF5
/// stores at another path ([`h5_path`]) is named with that path, which is
/// the name nnabla registers the parameter under. Refused when that path
/// is already the name of another variable of the model.
pub(crate) fn stored_names<'m>(
    model: &'m NNablaProtoBuf,
    params: &[&str],
) -> Result<Cow<'m, NNablaProtoBuf>> {
    let vars = variable_names(model);
    let mut map = HashMap::new();
    for &p in params {
        if !vars.contains(p) {
            continue;
        }
        let path = h5_path(p)?;
        if path == p {
            continue;
        }
        if vars.contains(&*path) {
            return Err(Error::Unsupported(format!(
                "parameter {p:?} is stored in parameter.h5 at {path:?} (HDF5 cannot hold \
                 an empty or `.` path component), which nnabla registers it under, but \
                 the network also has a variable named {path:?}"
            )));
        }
        map.insert(p.to_string(), path.into_owned());
    }
    if map.is_empty() {
        return Ok(Cow::Borrowed(model));
    }
    let mut out = model.clone();
    rename_variables(&mut out, &map);
    Ok(Cow::Owned(out))
}

/// `model` as read from an `.nnp` whose parameters (named as `parameter.h5`'s
/// `original_name` attributes give them back) are `params`: a network
/// variable named with the [`h5_path`] a parameter is stored at (what
/// [`stored_names`] wrote) takes the parameter's name back, unless a
/// variable of the model already has that name.
pub(crate) fn original_names<'n>(
    model: &mut NNablaProtoBuf,
    params: impl IntoIterator<Item = &'n str>,
) {
    let mut map = HashMap::new();
    {
        let vars = variable_names(model);
        for p in params {
            let Ok(path) = h5_path(p) else { continue };
            if path != p && vars.contains(&*path) && !vars.contains(p) {
                map.insert(path.into_owned(), p.to_string());
            }
        }
    }
    if !map.is_empty() {
        rename_variables(model, &map);
    }
}
