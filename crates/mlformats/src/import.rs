//! ONNX import: an `.onnx` model converted to an NNabla model (`.nnp`,
//! `.nntxt`, `.protobuf`) or a TenniS module (`.tsm`) with its graph,
//! through `graph-translate`.

use std::collections::HashSet;

use graph_translate::import::{ImportError, ImportOptions};

use crate::codec::{Item, ReadOptions, WriteContext, WriteSeek};
use crate::convert::{ConvertOptions, ConvertSummary, Plan};
use crate::{Document, Error, Format, Result};

/// Whether converting an ONNX model to `target` imports its graph: the
/// NNabla formats that hold a network (not `.h5`), unless only the
/// weights are asked for.
pub(crate) fn imports_to(target: Format, opts: &ConvertOptions) -> bool {
    matches!(
        target,
        Format::NnablaNnp | Format::NnablaNntxt | Format::NnablaProtobuf | Format::TennisModule
    ) && !opts.weights_only
}

fn import_err(e: ImportError) -> Error {
    match e {
        ImportError::Onnx(e) => crate::formats::onnx::onnx_err(e),
        ImportError::Unsupported(u) => Error::GraphRefused(u),
        ImportError::SymbolicShape(m) => Error::Unsupported(m),
        ImportError::Invalid(m) => Error::Invalid(m),
        other => Error::Invalid(other.to_string()),
    }
}

/// The ONNX model of `doc` and the import options `opts` gives (input
/// shapes and values); refused with `why` when `opts` selects, casts or
/// renames, which an import cannot do.
fn import_input(
    doc: &Document,
    opts: &ConvertOptions,
    why: &str,
) -> Result<(onnx_format::Model, ImportOptions)> {
    if !opts.is_plain() {
        return Err(Error::OptionDoesNotApply {
            option: "--only/--exclude/--dtype/--rename/--keep-order",
            why: why.into(),
        });
    }
    let model = crate::formats::onnx::read_model(&doc.source()?, &ReadOptions::default())?;
    let mut io = ImportOptions::default();
    for (n, d) in &opts.input_shapes {
        io = io.input_shape(n.clone(), d.clone());
    }
    for (n, v) in &opts.input_values {
        io = io.input_value(n.clone(), v.clone());
    }
    Ok((model, io))
}

/// Imports the ONNX model of `doc` as an NNabla model written to `w`
/// (or, for a `.tsm` target, as a TenniS module).
/// Selection, casts and renames would change the graph's parameters, so
/// they are refused (`--weights-only` writes the initializers alone).
pub(crate) fn onnx_to_nnabla(
    doc: &Document,
    target: Format,
    w: &mut dyn WriteSeek,
    opts: &ConvertOptions,
) -> Result<ConvertSummary> {
    if target == Format::TennisModule {
        return onnx_to_tennis(doc, w, opts);
    }
    let (model, io) = import_input(
        doc,
        opts,
        "importing an ONNX graph into NNabla keeps every parameter as it is: --only, \
         --exclude, --dtype, --rename and --keep-order would leave the network naming \
         parameters that are not there; add --weights-only to convert the initializers alone",
    )?;
    let imp = graph_translate::import::onnx_to_nnabla(&model, &io).map_err(import_err)?;
    let initializers: HashSet<&str> = model
        .graph_proto()
        .initializer
        .iter()
        .filter_map(|t| t.name.as_deref())
        .collect();
    let items: Vec<Item<'_, '_>> = imp
        .parameters
        .iter()
        .map(|(name, tensor)| Item {
            name,
            tensor: tensor.into(),
            need_grad: initializers.contains(name.as_str()),
        })
        .collect();
    let noop = |_: u64| {};
    let progress: &dyn Fn(u64) = match &opts.progress {
        Some(p) => p.as_ref(),
        None => &noop,
    };
    let cx = WriteContext {
        plan: Plan::unchanged(),
        progress,
        metadata: Vec::new(),
    };
    crate::formats::nnabla_family::write_to(&imp.model, target, w, &items, &cx)?;
    Ok(ConvertSummary::new(Format::Onnx, target, items.len(), true))
}

/// Imports the ONNX model of `doc` as a TenniS module written to `w`.
#[cfg(feature = "tennis")]
fn onnx_to_tennis(
    doc: &Document,
    w: &mut dyn WriteSeek,
    opts: &ConvertOptions,
) -> Result<ConvertSummary> {
    let (model, io) = import_input(
        doc,
        opts,
        "importing an ONNX graph into TenniS keeps every constant as it is: --only, \
         --exclude, --dtype, --rename and --keep-order do not apply; add --weights-only \
         to convert the initializers alone",
    )?;
    let module = graph_translate::import::onnx_to_tennis(&model, &io).map_err(import_err)?;
    let consts = module
        .nodes()
        .iter()
        .filter(|n| n.kind() == bubble_module::NodeKind::Const)
        .count();
    module.write(w, &bubble_module::WriteOptions::default())?;
    Ok(ConvertSummary::new(
        Format::Onnx,
        Format::TennisModule,
        consts,
        true,
    ))
}

/// Without the `tennis` feature there is no TenniS writer.
#[cfg(not(feature = "tennis"))]
fn onnx_to_tennis(
    _: &Document,
    _: &mut dyn WriteSeek,
    _: &ConvertOptions,
) -> Result<ConvertSummary> {
    Err(Error::Unsupported(
        "TenniS support is not built in (feature \"tennis\")".into(),
    ))
}
