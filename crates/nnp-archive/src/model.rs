//! The `.nnp` model: networks, executors and parameters of an archive,
//! loaded with nnabla's merge rules, editable, and saved in nnabla's layout.

use std::io::{Read, Seek, Write};
use std::path::Path;
use std::sync::Arc;

use nnabla_proto::NNablaProtoBuf;
use nnabla_proto::proto::{Executor, Network};
use tensor_core::{Bytes, MappedFile};

use crate::archive::{self, MemberInfo, MemberKind, NNP_VERSION, NnpZipWriter, ZipContents};
use crate::{Error, ParamSpec, Parameter, ParameterSet, ReadOptions, Result, h5};

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
        let opts = &with_budget(opts, map.as_bytes().len() as u64);
        let contents = archive::from_map(map, opts)?;
        load(contents, opts)
    }

    /// Reads an archive from any `Read + Seek` (members are read into memory).
    pub fn from_reader<R: Read + Seek>(mut reader: R, opts: &ReadOptions) -> Result<Nnp<'static>> {
        let len = reader
            .seek(std::io::SeekFrom::End(0))
            .and_then(|len| reader.rewind().map(|()| len))
            .map_err(|e| Error::io("seeking the archive", e))?;
        let opts = &with_budget(opts, len);
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
        let opts = &with_budget(opts, bytes.len() as u64);
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
/// [`WriteOptions::drop_optimizer_states`]). Streams every member through
/// [`NnpStreamWriter`].
pub fn write<'p, 'b: 'p, W: Write + Seek>(
    w: W,
    model: &NNablaProtoBuf,
    params: impl IntoIterator<Item = &'p Parameter<'b>> + Clone,
    optimizers: &[OptimizerState<'_>],
    opts: &WriteOptions,
) -> Result<W> {
    let specs: Vec<ParamSpec> = params.clone().into_iter().map(ParamSpec::of).collect();
    let mut s = NnpStreamWriter::new(w, model, &specs, opts)?;
    for p in params {
        s.write_param(&p.tensor)?;
    }
    s.finish(optimizers)
}

/// Members at least this large are written with ZIP64 headers (room is left
/// for a little metadata below the 4 GiB limit).
const ZIP64_FROM: u64 = 0xF000_0000;

/// A streaming `.nnp` writer: the model and the parameters' specs (name,
/// dtype, dims, `need_grad`) up front, then each parameter's tensor one at a
/// time, so a caller can make each tensor just before it is written and drop
/// it right after. Writes nnabla's layout: `nnp_version.txt`,
/// `network.nntxt` (the model without parameters), `parameter.h5` or
/// `parameter.protobuf` ([`WriteOptions::param_format`]), then the solver
/// states given to [`NnpStreamWriter::finish`]; all stored, ZIP64 when large.
///
/// Names and element types are checked in [`NnpStreamWriter::new`] before
/// anything is written. `.h5` parameters go through [`h5::StreamWriter`]'s
/// layout (metadata first, then each tensor's bytes); `.protobuf` parameters
/// are one message each (float32: f16/bf16 are widened, other types refused).
///
/// ```
/// use std::io::Cursor;
/// use nnp_archive::nnabla_proto::text;
/// use nnp_archive::{Nnp, NnpStreamWriter, ParamFormat, ParamSpec, WriteOptions};
/// use tensor_core::{DType, Tensor};
///
/// let model = text::parse("network { name: \"net\" batch_size: 1 }\n")?;
/// let specs = [
///     ParamSpec::new("fc/W", DType::F32, [2, 2], true),
///     ParamSpec::new("fc/b", DType::F32, [2], false),
/// ];
/// for format in [ParamFormat::H5, ParamFormat::Protobuf] {
///     let opts = WriteOptions::default().with_param_format(format);
///     let mut w = NnpStreamWriter::new(Cursor::new(Vec::new()), &model, &specs, &opts)?;
///     while let Some(spec) = w.next_param() {
///         // make the tensor only now; it is dropped after the call
///         let n = spec.dims.iter().product::<usize>();
///         let t = Tensor::from_values(spec.dims.clone(), &vec![1.5f32; n])?;
///         w.write_param(&t)?;
///     }
///     let bytes = w.finish(&[])?.into_inner();
///     let back = Nnp::parse(&bytes)?;
///     assert_eq!(back.networks()[0].name, "net");
///     let b = back.parameters().get("fc/b").unwrap();
///     assert!(!b.need_grad);
///     assert_eq!(&*b.tensor.view::<f32>()?, &[1.5, 1.5]);
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct NnpStreamWriter<W: Write + Seek> {
    z: NnpZipWriter<W>,
    sink: Sink,
    drop_optimizer_states: bool,
}

enum Sink {
    H5 {
        h: h5::H5Stream,
        specs: Vec<ParamSpec>,
    },
    Protobuf {
        specs: Vec<ParamSpec>,
        next: usize,
    },
}

impl<W: Write + Seek> std::fmt::Debug for NnpStreamWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NnpStreamWriter")
            .field("next_param", &self.next_param().map(|p| &p.name))
            .finish_non_exhaustive()
    }
}

/// Refuses a parameter a network names whose name HDF5 cannot hold as it
/// is (stored at [`h5::h5_path`], it would not be the parameter nnabla
/// pairs with the network's variable: nnabla would compute with a fresh
/// one). Parameters alone (no network names them) are stored mapped.
fn refuse_mapped_network_names(model: &NNablaProtoBuf, params: &[ParamSpec]) -> Result<()> {
    let named: std::collections::HashSet<&str> = model
        .network
        .iter()
        .flat_map(|n| n.variable.iter().map(|v| v.name.as_str()))
        .collect();
    for p in params {
        if named.contains(p.name.as_str()) && h5::h5_path(&p.name)? != p.name {
            return Err(Error::InvalidName {
                name: p.name.clone(),
                reason: "a network names it and parameter.h5 cannot hold it as it is \
                         (an empty or `.` path component): stored at another path, \
                         nnabla would not pair it with the network",
            });
        }
    }
    Ok(())
}

impl<W: Write + Seek> NnpStreamWriter<W> {
    /// Checks the parameters' names and types for the chosen format, then
    /// writes `nnp_version.txt`, `network.nntxt` (`model` without its
    /// `parameter` field) and starts the parameter member (for `.h5`, with
    /// all its metadata).
    pub fn new(
        w: W,
        model: &NNablaProtoBuf,
        params: &[ParamSpec],
        opts: &WriteOptions,
    ) -> Result<Self> {
        // Everything that can be refused is refused before a byte is written.
        let sink = match opts.param_format {
            ParamFormat::H5 => {
                refuse_mapped_network_names(model, params)?;
                let specs = params
                    .iter()
                    .enumerate()
                    .map(|(i, p)| h5::DatasetSpec::parameter(p, i))
                    .collect::<Result<Vec<_>>>()?;
                Sink::H5 {
                    h: h5::H5Stream::plan(&specs)?,
                    specs: params.to_vec(),
                }
            }
            ParamFormat::Protobuf => {
                if let Some(p) = params.iter().find(|p| !nnabla_proto::can_hold(p.dtype)) {
                    return Err(Error::Proto {
                        context: "parameter.protobuf".into(),
                        message: format!(
                            "parameter {:?}: NNabla parameters are float32; this tensor is {}",
                            p.name, p.dtype
                        ),
                    });
                }
                Sink::Protobuf {
                    specs: params.to_vec(),
                    next: 0,
                }
            }
        };
        let mut z = NnpZipWriter::new(w);
        z.member("nnp_version.txt", NNP_VERSION)?;
        {
            let out = z.start("network.nntxt", false)?;
            if model.parameter.is_empty() {
                nnabla_proto::text::write(out, model).map_err(|e| proto_err("network.nntxt", e))?;
            } else {
                let m = NNablaProtoBuf {
                    parameter: Vec::new(),
                    ..model.clone()
                };
                nnabla_proto::text::write(out, &m).map_err(|e| proto_err("network.nntxt", e))?;
            }
        }
        let mut s = NnpStreamWriter {
            z,
            sink,
            drop_optimizer_states: opts.drop_optimizer_states,
        };
        match &mut s.sink {
            Sink::H5 { h, .. } => {
                let large = h.len() >= ZIP64_FROM;
                let out =
                    s.z.start_aligned("parameter.h5", large, h5::DATA_ALIGN as u16)?;
                h.write_head(out)?;
            }
            Sink::Protobuf { specs, .. } => {
                // The member's size: the f32 data plus a generous bound on
                // each message's framing (name, dims, varints).
                let mut total: u64 = 0;
                for p in specs.iter() {
                    let n = p
                        .dims
                        .iter()
                        .try_fold(4u64, |a, &d| a.checked_mul(d as u64));
                    let framing = 64 + p.name.len() as u64 + 11 * p.dims.len() as u64;
                    total = n
                        .and_then(|n| n.checked_add(framing))
                        .and_then(|n| n.checked_add(total))
                        .unwrap_or(u64::MAX);
                }
                s.z.start("parameter.protobuf", total >= ZIP64_FROM)?;
            }
        }
        Ok(s)
    }

    /// The parameter the next [`NnpStreamWriter::write_param`] call takes,
    /// or `None` when all are written.
    pub fn next_param(&self) -> Option<&ParamSpec> {
        match &self.sink {
            Sink::H5 { h, specs } => specs.get(h.written()),
            Sink::Protobuf { specs, next } => specs.get(*next),
        }
    }

    /// Writes the next parameter's data. Its dtype and dims must be the
    /// declared ones ([`Error::Stream`] otherwise; nothing is written then).
    pub fn write_param(&mut self, tensor: &tensor_core::Tensor<'_>) -> Result<()> {
        match &mut self.sink {
            Sink::H5 { h, .. } => h.write_data(self.z.out(), tensor),
            Sink::Protobuf { specs, next } => {
                let Some(spec) = specs.get(*next) else {
                    return Err(Error::Stream {
                        name: String::new(),
                        reason: format!(
                            "all {} declared parameters are already written",
                            specs.len()
                        ),
                    });
                };
                crate::params::check_declared(&spec.name, spec.dtype, &spec.dims, tensor)?;
                nnabla_proto::binary::write_parameters(
                    NoFlush(self.z.out()),
                    std::iter::once((spec.name.as_str(), tensor, spec.need_grad)),
                )
                .map_err(|e| proto_err("parameter.protobuf", e))?;
                *next += 1;
                Ok(())
            }
        }
    }

    /// Checks every declared parameter was written, writes the solver
    /// states (unless [`WriteOptions::drop_optimizer_states`]) and the
    /// central directory, and returns the writer.
    pub fn finish(mut self, optimizers: &[OptimizerState<'_>]) -> Result<W> {
        match &mut self.sink {
            Sink::H5 { h, .. } => h.finish(self.z.out())?,
            Sink::Protobuf { specs, next } => {
                if let Some(p) = specs.get(*next) {
                    return Err(Error::Stream {
                        name: p.name.clone(),
                        reason: format!(
                            "finished after {next} of {} declared parameters",
                            specs.len()
                        ),
                    });
                }
            }
        }
        if !self.drop_optimizer_states {
            for o in optimizers {
                self.z.member(&o.name, &o.data)?;
            }
        }
        self.z.finish()
    }
}

/// A writer whose `flush` does nothing (the protobuf writer flushes after
/// each call; the archive is flushed once at the end).
struct NoFlush<'a, W: Write>(&'a mut W);

impl<W: Write> Write for NoFlush<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.0.write_all(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `opts` with the inflation budget of an archive of `len` bytes, so that
/// its zip members and the datasets of its `.h5` members share one budget.
fn with_budget(opts: &ReadOptions, len: u64) -> ReadOptions {
    opts.clone().with_budget(opts.budget_for(len))
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
