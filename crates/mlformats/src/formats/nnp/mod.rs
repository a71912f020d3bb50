//! NNabla `.nnp` archives and `.h5` parameter files (crate `nnp-archive`).
//!
//! - reading: `.nnp` gives the parameters in nnabla's load order with
//!   `need_grad`, the merged networks and the names of its solver-state
//!   members; `.h5` the parameters alone (no graph).
//! - writing a set of tensors: an `.h5`, or an `.nnp` holding only
//!   parameters (no network), with each tensor's `need_grad`; streamed, one
//!   converted tensor at a time.
//! - re-encoding: the same content in nnabla's own layout (an `.nnp` keeps
//!   its parameter format, networks and solver states; an `.h5` keeps
//!   order and `need_grad`).
//!
//! The readers by random access are `read.rs` (`.nnp`) and `h5.rs` (`.h5`,
//! and the `parameter.h5` member of an `.nnp`); `names.rs` maps the
//! parameter names `parameter.h5` stores under another path.

use std::ops::Range;
use std::sync::Arc;

use nnp_archive::nnabla_proto::NNablaProtoBuf;
use nnp_archive::{
    self as nnpa, MemberKind, Nnp, NnpStreamWriter, ParamFormat, ParamSpec, Parameter,
};
use tensor_core::{Bytes, MappedFile};

use crate::codec::{Codec, Contents, ReadOptions, Source, StoredTensor, WriteSeek};
use crate::random_access::{FileIndex, ReadAt};
use crate::sink::{Feed, Incoming, TensorSink};
use crate::{Error, Format, InTensor, Result};

mod h5;
mod names;
mod read;
pub(crate) use names::original_names;

pub(crate) struct NnpCodec;

fn nnp_options(opts: &ReadOptions) -> nnpa::ReadOptions {
    nnpa::ReadOptions::default().with_limits(opts.limits)
}

pub(crate) fn read_nnp(src: &Source, opts: &ReadOptions) -> Result<Nnp<'static>> {
    Ok(Nnp::from_map(&src.map, &nnp_options(opts))?)
}

/// The model of `nnp` with its variables named as its parameters are
/// (a name `parameter.h5` stores at another path taken back:
/// [`original_names`]).
pub(crate) fn model_of(nnp: &Nnp<'_>) -> NNablaProtoBuf {
    let mut model = nnp.model().clone();
    original_names(&mut model, nnp.parameters().iter().map(|p| p.name.as_str()));
    model
}

/// A solver state (`Solver.save_states` `.h5`) as contents of kind
/// `solver-state`: its datasets as tensors, in path order.
pub(crate) fn solver_state(
    map: &Arc<MappedFile>,
    range: Range<usize>,
    opts: &ReadOptions,
) -> Result<Contents> {
    let state = nnpa::h5::solver_state_from_map_range(
        map,
        range,
        &nnpa::ReadOptions::default().with_limits(opts.limits),
    )?;
    let mut c = Contents {
        kind: Some("solver-state"),
        ..Contents::default()
    };
    for (name, t) in state.tensors {
        c.push(StoredTensor::new(&name, &t), t);
    }
    Ok(c)
}

/// The solver states of an `optimizer.protobuf.optimizer` member: a root
/// message whose optimizers' solvers map parameter names to states. Named
/// as the `.h5` form names them: `<param>/<state>` (f32, stored shape) and
/// a scalar i64 `<param>/t`; `<optimizer>/` goes first when the member
/// holds several optimizers. Parameters and states in name order.
fn protobuf_solver_states(bytes: &[u8]) -> Result<Contents> {
    let root = nnpa::nnabla_proto::binary::decode(bytes)?;
    let mut c = Contents {
        kind: Some("solver-state"),
        ..Contents::default()
    };
    let several = root.optimizer.len() > 1;
    for o in &root.optimizer {
        let prefix = if several {
            format!("{}/", o.name)
        } else {
            String::new()
        };
        let Some(solver) = &o.solver else { continue };
        for (param, state) in &solver.states {
            let mut entries: Vec<(String, tensor_core::Tensor<'static>)> = Vec::new();
            for (key, sp) in &state.state_parameter {
                let dims: Vec<usize> = sp
                    .shape
                    .as_ref()
                    .map(|s| {
                        s.dim
                            .iter()
                            .map(|&d| usize::try_from(d).unwrap_or(usize::MAX))
                            .collect()
                    })
                    .unwrap_or_default();
                let t = tensor_core::Tensor::from_values(dims, &sp.data)?;
                entries.push((format!("{prefix}{param}/{key}"), t));
            }
            let t = tensor_core::Tensor::from_values::<i64>([], &[i64::from(state.t)])?;
            entries.push((format!("{prefix}{param}/t"), t));
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            for (name, t) in entries {
                c.push(StoredTensor::new(&name, &t), t);
            }
        }
    }
    Ok(c)
}

pub(crate) fn read_h5(src: &Source, opts: &ReadOptions) -> Result<Vec<Parameter<'static>>> {
    Ok(nnpa::h5::from_map(&src.map, &nnp_options(opts))?)
}

/// The spec of each tensor as the plan leaves it (dtype after casts; dims
/// unchanged).
fn specs(feed: &Feed<'_>) -> Vec<ParamSpec> {
    feed.heads()
        .map(|t| ParamSpec::new(t.name(), t.dtype(), t.dims(), t.need_grad()))
        .collect()
}

/// Writes an `.nnp` to `w`: `model` (its networks, executors, ...) with
/// `feed`'s tensors as its parameters, in `parameter.h5`. A parameter HDF5
/// stores under another path than its name is named with that path in the
/// networks, as nnabla registers it ([`names::stored_names`]). Each
/// parameter is got, converted by the plan when it is written and dropped
/// after.
pub(crate) fn write_nnp(
    model: &NNablaProtoBuf,
    w: &mut dyn WriteSeek,
    feed: &Feed<'_>,
) -> Result<()> {
    let specs = specs(feed);
    let names: Vec<&str> = feed.heads().map(|t| t.name()).collect();
    let model = names::stored_names(model, &names)?;
    let opts = nnpa::WriteOptions::default().with_param_format(ParamFormat::H5);
    feed.drain(NnpSink(NnpStreamWriter::new(w, &model, &specs, &opts)?))
}

/// The parameters of an `.nnp`'s `parameter.h5`, then the rest.
struct NnpSink<W: std::io::Write + std::io::Seek>(NnpStreamWriter<W>);

impl<W: std::io::Write + std::io::Seek> TensorSink for NnpSink<W> {
    fn put(&mut self, t: &Incoming<'_>) -> Result<()> {
        t.with_planned(|p| self.0.write_param(p).in_tensor(t.name()))
    }

    fn finish(self) -> Result<()> {
        self.0.finish(&[])?;
        Ok(())
    }
}

/// Writes an `.h5` parameter file to `w`, one got and converted parameter
/// at a time.
pub(crate) fn write_h5(w: &mut dyn WriteSeek, feed: &Feed<'_>) -> Result<()> {
    let specs = specs(feed);
    feed.drain(H5Sink(nnpa::h5::StreamWriter::new(w, &specs)?))
}

/// The datasets of an `.h5` parameter file, then its index.
struct H5Sink<W: std::io::Write + std::io::Seek>(nnpa::h5::StreamWriter<W>);

impl<W: std::io::Write + std::io::Seek> TensorSink for H5Sink<W> {
    fn put(&mut self, t: &Incoming<'_>) -> Result<()> {
        t.with_planned(|p| self.0.write_data(p).in_tensor(t.name()))
    }

    fn finish(self) -> Result<()> {
        self.0.finish()?;
        Ok(())
    }
}

/// Whether `format`, one of the two this codec serves (`codec::codec`), is
/// the `.nnp` archive rather than a bare `.h5` parameter file.
fn is_archive(format: Format) -> bool {
    format == Format::NnablaNnp
}

impl Codec for NnpCodec {
    fn attachments(&self, src: &Source, opts: &ReadOptions) -> Result<Vec<(String, Contents)>> {
        if !is_archive(src.format) {
            return Ok(Vec::new());
        }
        let nnp = read_nnp(src, opts)?;
        let mut out = Vec::new();
        for o in nnp.optimizer_states() {
            let c = if o.name.ends_with(".protobuf.optimizer") {
                protobuf_solver_states(o.data.as_slice())
            } else {
                let (map, range) = match &o.data {
                    Bytes::Mapped(map, range) => (Arc::clone(map), range.clone()),
                    other => {
                        let v = other.as_slice().to_vec();
                        let n = v.len();
                        (MappedFile::from_vec(v), 0..n)
                    }
                };
                solver_state(&map, range, opts)
            }
            .map_err(|e| {
                Error::Unsupported(format!("solver state {:?}: {}", o.name, e.full_message()))
            })?;
            out.push((o.name.clone(), c));
        }
        Ok(out)
    }

    fn write(&self, format: Format, w: &mut dyn WriteSeek, feed: &Feed<'_>) -> Result<()> {
        if is_archive(format) {
            write_nnp(&NNablaProtoBuf::default(), w, feed)
        } else {
            write_h5(w, feed)
        }
    }

    fn refuses(&self, _: Format, dtype: tensor_core::DType, _dims: &[usize]) -> Option<String> {
        (!nnpa::h5::can_hold(dtype)).then(|| format!("NNabla .h5 parameters have no {dtype} type"))
    }

    fn reencode(&self, src: &Source, w: &mut dyn WriteSeek) -> Result<()> {
        if !is_archive(src.format) {
            match read_h5(src, &ReadOptions::default()) {
                Ok(params) => nnpa::h5::write(w, &params)?,
                Err(Error::Nnp(e)) if nnpa::h5::SolverState::may_be(&e) => {
                    let state = nnpa::h5::solver_state_from_map_range(
                        &src.map,
                        0..src.map.len(),
                        &nnpa::ReadOptions::default(),
                    )
                    .map_err(|_| Error::Nnp(e))?;
                    nnpa::h5::write_solver_state(w, &state)?;
                }
                Err(e) => return Err(e),
            }
            return Ok(());
        }
        let nnp = read_nnp(src, &ReadOptions::default())?;
        let kinds: Vec<MemberKind> = nnp.members().iter().map(|m| m.kind).collect();
        let format = if kinds.contains(&MemberKind::Protobuf) && !kinds.contains(&MemberKind::H5) {
            ParamFormat::Protobuf
        } else {
            ParamFormat::H5
        };
        nnp.write(w, &nnpa::WriteOptions::default().with_param_format(format))?;
        Ok(())
    }

    fn index(&self, format: Format, index: &mut FileIndex, r: &dyn ReadAt) -> Result<()> {
        if is_archive(format) {
            index.read_nnp(r)
        } else {
            index.read_h5(r)
        }
    }
}
