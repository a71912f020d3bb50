//! The `.nnp` model: networks, executors and parameters of an archive,
//! loaded with nnabla's merge rules, editable, and saved in nnabla's layout.

use std::io::{Read, Seek, Write};
use std::path::Path;
use std::sync::Arc;

use nnabla_proto::NNablaProtoBuf;
use nnabla_proto::proto::{Executor, Network};
use tensor_core::{Bytes, MappedFile};

use crate::archive::{self, MemberInfo, MemberKind, NNP_VERSION, NnpZipWriter, ZipContents};
use crate::{Error, Parameter, ParameterSet, ReadOptions, Result, h5};

/// Where `save` puts the parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ParamFormat {
    /// `parameter.h5` (nnabla's default).
    #[default]
    H5,
    /// `parameter.protobuf` (float32 only; f16/bf16 are widened exactly).
    Protobuf,
}

/// How to write an archive.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct WriteOptions {
    /// The parameter member's format.
    pub param_format: ParamFormat,
    /// Drop the `.optimizer` members (solver states) instead of copying them.
    pub drop_optimizer_states: bool,
}

impl WriteOptions {
    /// Sets the parameter format.
    pub fn with_param_format(mut self, f: ParamFormat) -> Self {
        self.param_format = f;
        self
    }
}

/// A solver state member (`*.optimizer`), kept as raw bytes.
#[derive(Debug, Clone)]
pub struct OptimizerState<'a> {
    /// The member name, e.g. `optimizer_Adam_optimizer.h5.optimizer`.
    pub name: String,
    /// Its bytes.
    pub data: Bytes<'a>,
}

/// A loaded `.nnp`: the merged model (networks, executors, optimizers,
/// datasets, monitors; no parameters), the parameters in nnabla's
/// registration order, the solver states and the member list.
///
/// Loading follows nnabla's Python `_nnp_file_loader`: members in archive
/// order; `.nntxt`/`.prototxt` merged into one root message (and any
/// parameters they hold registered); `.protobuf` merged too, its parameters
/// registered; `.h5` parameters registered (see [`crate::h5`]); a name
/// registered twice keeps its first position and takes the last values;
/// `.optimizer` members kept; a nested `.nnp` refused; anything else ignored.
#[derive(Debug, Clone)]
pub struct Nnp<'a> {
    model: NNablaProtoBuf,
    params: ParameterSet<'a>,
    optimizers: Vec<OptimizerState<'a>>,
    members: Vec<MemberInfo>,
}

fn proto_err(context: &str, e: nnabla_proto::Error) -> Error {
    Error::Proto {
        context: context.to_string(),
        message: e.to_string(),
    }
}

fn from_param_tensor(p: nnabla_proto::ParamTensor<'_>) -> Parameter<'_> {
    Parameter::new(p.name, p.tensor, p.need_grad)
}

impl Nnp<'static> {
    /// Opens the archive at `path` (memory-mapped: stored members are not copied).
    pub fn open(path: impl AsRef<Path>) -> Result<Nnp<'static>> {
        Self::open_with(path, &ReadOptions::default())
    }

    /// [`Nnp::open`] with options.
    pub fn open_with(path: impl AsRef<Path>, opts: &ReadOptions) -> Result<Nnp<'static>> {
        let map = MappedFile::open(path)?;
        Self::from_map(&map, opts)
    }

    /// Reads an archive from a memory map; stored members share the map.
    pub fn from_map(map: &Arc<MappedFile>, opts: &ReadOptions) -> Result<Nnp<'static>> {
        let contents = archive::from_map(map, opts)?;
        load(contents, opts)
    }

    /// Reads an archive from any `Read + Seek` (members are read into memory).
    pub fn from_reader<R: Read + Seek>(reader: R, opts: &ReadOptions) -> Result<Nnp<'static>> {
        let contents = archive::from_reader(reader, opts)?;
        load(contents, opts)
    }
}

impl<'a> Nnp<'a> {
    /// Reads an archive held in `bytes` with the default options; stored
    /// members are borrowed.
    pub fn parse(bytes: &'a [u8]) -> Result<Nnp<'a>> {
        Self::parse_with(bytes, &ReadOptions::default())
    }

    /// Reads an archive held in `bytes`; stored members are borrowed.
    pub fn parse_with(bytes: &'a [u8], opts: &ReadOptions) -> Result<Nnp<'a>> {
        let contents = archive::parse_with(bytes, opts)?;
        load(contents, opts)
    }

    /// A model from parts (for writing a new archive). Parameters stored in
    /// `model.parameter` come first, then `params` (a name given twice keeps
    /// its first position and the last value); a stored parameter whose data
    /// does not match its shape is an error.
    pub fn new(model: NNablaProtoBuf, params: ParameterSet<'a>) -> Result<Self> {
        let mut model = model;
        let mut all = ParameterSet::new();
        for p in std::mem::take(&mut model.parameter) {
            let t = nnabla_proto::parameter_tensor(&p)
                .map_err(|e| proto_err(&format!("parameter {:?}", p.variable_name), e))?;
            all.insert(from_param_tensor(t).into_static());
        }
        all.extend(params);
        Ok(Nnp {
            model,
            params: all,
            optimizers: Vec::new(),
            members: Vec::new(),
        })
    }

    /// The merged model without its parameters.
    pub fn model(&self) -> &NNablaProtoBuf {
        &self.model
    }

    /// The merged model, mutably (e.g. to edit networks before saving).
    pub fn model_mut(&mut self) -> &mut NNablaProtoBuf {
        &mut self.model
    }

    /// The networks.
    pub fn networks(&self) -> &[Network] {
        &self.model.network
    }

    /// The executors.
    pub fn executors(&self) -> &[Executor] {
        &self.model.executor
    }

    /// The parameters in registration order.
    pub fn parameters(&self) -> &ParameterSet<'a> {
        &self.params
    }

    /// The parameters, mutably (replace values or `need_grad` by name).
    pub fn parameters_mut(&mut self) -> &mut ParameterSet<'a> {
        &mut self.params
    }

    /// Replaces all parameters.
    pub fn set_parameters(&mut self, params: ParameterSet<'a>) {
        self.params = params;
    }

    /// Registers one parameter (replacing a parameter of that name in place).
    pub fn set_parameter(&mut self, p: Parameter<'a>) -> Option<Parameter<'a>> {
        self.params.insert(p)
    }

    /// The solver states (`.optimizer` members), in archive order.
    pub fn optimizer_states(&self) -> &[OptimizerState<'a>] {
        &self.optimizers
    }

    /// The members of the archive it was read from, in archive order.
    pub fn members(&self) -> &[MemberInfo] {
        &self.members
    }

    /// The same model, no longer borrowing its input.
    pub fn into_static(self) -> Nnp<'static> {
        Nnp {
            model: self.model,
            params: self.params.into_static(),
            optimizers: self
                .optimizers
                .into_iter()
                .map(|o| OptimizerState {
                    name: o.name,
                    data: o.data.into_static(),
                })
                .collect(),
            members: self.members,
        }
    }

    /// Writes the archive in nnabla's layout: `nnp_version.txt`,
    /// `network.nntxt`, `parameter.h5` or `parameter.protobuf`, then the
    /// solver states (unless dropped); all stored, no directory entries.
    pub fn write<W: Write + Seek>(&self, w: W, opts: &WriteOptions) -> Result<W> {
        write(w, &self.model, &self.params, &self.optimizers, opts)
    }

    /// Saves the archive at `path` atomically (temporary file, then rename).
    pub fn save(&self, path: impl AsRef<Path>, opts: &WriteOptions) -> Result<()> {
        tensor_core::io::write_atomic(path, |w| self.write(w, opts).map(|_| ()))
    }
}

/// Writes an `.nnp` in nnabla's layout from a model (its `parameter` field
/// is not written into `network.nntxt`, as nnabla forces `include_params`
/// off), parameters and solver states (unless
/// [`WriteOptions::drop_optimizer_states`]). Streams every member.
pub fn write<'p, 'b: 'p, W: Write + Seek>(
    w: W,
    model: &NNablaProtoBuf,
    params: impl IntoIterator<Item = &'p Parameter<'b>> + Clone,
    optimizers: &[OptimizerState<'_>],
    opts: &WriteOptions,
) -> Result<W> {
    let optimizers: &[OptimizerState<'_>] = if opts.drop_optimizer_states {
        &[]
    } else {
        optimizers
    };
    let mut z = NnpZipWriter::new(w);
    z.member("nnp_version.txt", NNP_VERSION)?;
    {
        let out = z.start("network.nntxt", false)?;
        if model.parameter.is_empty() {
            nnabla_proto::text::write(out, model).map_err(|e| proto_err("network.nntxt", e))?;
        } else {
            let mut m = model.clone();
            m.parameter.clear();
            nnabla_proto::text::write(out, &m).map_err(|e| proto_err("network.nntxt", e))?;
        }
    }
    let total: u64 = params
        .clone()
        .into_iter()
        .map(|p| p.tensor.bytes().len() as u64)
        .sum();
    // Room for metadata: ZIP64 well before the 4 GiB limit.
    let large = total >= 0xF000_0000;
    match opts.param_format {
        ParamFormat::H5 => {
            let out = z.start("parameter.h5", large)?;
            h5::write(out, params)?;
        }
        ParamFormat::Protobuf => {
            let out = z.start("parameter.protobuf", large)?;
            let items: Vec<&Parameter<'b>> = params.into_iter().collect();
            nnabla_proto::binary::write_parameters(
                out,
                items
                    .iter()
                    .map(|p| (p.name.as_str(), &p.tensor, p.need_grad)),
            )
            .map_err(|e| proto_err("parameter.protobuf", e))?;
        }
    }
    for o in optimizers {
        z.member(&o.name, &o.data)?;
    }
    z.finish()
}

fn load<'a>(contents: ZipContents<'a>, opts: &ReadOptions) -> Result<Nnp<'a>> {
    let limits = &opts.limits;
    let pb_opts = nnabla_proto::ReadOptions::default().with_limits(opts.limits);
    let mut model = NNablaProtoBuf::default();
    let mut params = ParameterSet::new();
    let mut optimizers = Vec::new();
    let ZipContents { members, data } = contents;
    for (m, d) in members.iter().zip(data) {
        match m.kind {
            MemberKind::Text => {
                let text = std::str::from_utf8(&d).map_err(|e| {
                    Error::member(
                        &m.name,
                        format!("text is not UTF-8 (at byte {})", e.valid_up_to()),
                    )
                })?;
                nnabla_proto::text::merge(&mut model, text).map_err(|e| proto_err(&m.name, e))?;
                // Parameters written in the text are registered too.
                for p in std::mem::take(&mut model.parameter) {
                    let t =
                        nnabla_proto::parameter_tensor(&p).map_err(|e| proto_err(&m.name, e))?;
                    limits.check_tensors(params.len() as u64 + 1)?;
                    params.insert(from_param_tensor(t).into_static());
                }
            }
            MemberKind::Protobuf => {
                let found: Vec<Parameter<'a>> = match d {
                    Bytes::Borrowed(s) => {
                        nnabla_proto::binary::merge_borrowed(&mut model, s, &pb_opts)
                            .map_err(|e| proto_err(&m.name, e))?
                            .into_iter()
                            .map(from_param_tensor)
                            .collect()
                    }
                    Bytes::Mapped(map, r) => {
                        let bytes = &map.as_bytes()[r];
                        nnabla_proto::binary::merge_borrowed(&mut model, bytes, &pb_opts)
                            .map_err(|e| proto_err(&m.name, e))?
                            .into_iter()
                            .map(|p| Parameter::new(p.name, p.tensor.rebase(&map), p.need_grad))
                            .collect()
                    }
                    Bytes::Owned(v) => {
                        nnabla_proto::binary::merge_borrowed(&mut model, &v, &pb_opts)
                            .map_err(|e| proto_err(&m.name, e))?
                            .into_iter()
                            .map(|p| from_param_tensor(p).into_static())
                            .collect()
                    }
                };
                model.parameter.clear();
                for p in found {
                    limits.check_tensors(params.len() as u64 + 1)?;
                    params.insert(p);
                }
            }
            MemberKind::H5 => {
                let found = match d {
                    Bytes::Borrowed(s) => h5::parse_with(s, opts),
                    Bytes::Mapped(map, r) => h5::from_map_range(&map, r, opts),
                    Bytes::Owned(v) => h5::from_vec(v, opts),
                }
                .map_err(|e| in_member(&m.name, e))?;
                for p in found {
                    limits.check_tensors(params.len() as u64 + 1)?;
                    params.insert(p);
                }
            }
            MemberKind::Optimizer => optimizers.push(OptimizerState {
                name: m.name.clone(),
                data: d,
            }),
            MemberKind::NestedNnp => return Err(Error::NestedNnp(m.name.clone())),
            MemberKind::Directory | MemberKind::Other => {}
        }
    }
    Ok(Nnp {
        model,
        params,
        optimizers,
        members,
    })
}

fn in_member(member: &str, e: Error) -> Error {
    match e {
        Error::Tensor(_) | Error::Io { .. } => Error::member(member, e.to_string()),
        Error::BadData { dataset, reason } => Error::BadData {
            dataset: format!("{member}: {dataset}"),
            reason,
        },
        Error::Hdf5 { context, message } => Error::Hdf5 {
            context: format!("{member}: {context}"),
            message,
        },
        other => other,
    }
}
