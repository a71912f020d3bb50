//! The error type of the `mlformats` library.

use crate::Format;
use tensor_core::DType;

/// Everything that can go wrong opening, saving or converting a file.
///
/// Errors of the format crates are kept whole (with their byte offsets,
/// member and tensor names); [`Error::Tensor`] says which tensor a problem
/// concerns. The file path is not part of the message: the caller knows
/// which file it opened (the `mlformats` tool prints `error: <path>: <message>`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading or writing a file failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The path names a directory, not a file.
    #[error("is a directory")]
    IsDirectory,
    /// The file has no bytes.
    #[error("is empty")]
    Empty,
    /// No format recognises the file.
    #[error(
        "not a file of any format mlformats knows (primitiv, NNabla, TenniS, TVM/CVM, safetensors, npz, ONNX)"
    )]
    UnknownFormat,
    /// The output format cannot be told from the file name.
    #[error("cannot tell the output format from the extension of {name:?}; one of: {}", crate::Format::names().join(", "))]
    UnknownExtension {
        /// The file name.
        name: String,
    },
    /// The format's feature is not enabled in this build.
    #[error(
        "{format} files need the `{feature}` feature of the mlformats crate, which this build leaves out"
    )]
    FeatureDisabled {
        /// The format.
        format: Format,
        /// The cargo feature that adds it.
        feature: &'static str,
    },
    /// The target format cannot hold what is asked of it.
    #[error("{0}")]
    Unsupported(String),
    /// A registered format's plugin ([`crate::FormatPlugin`]) failed to
    /// read or write a file.
    #[error("{format}: {source}")]
    Plugin {
        /// The format's name.
        format: &'static str,
        /// What the plugin says.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// [`crate::register_format`] refused a plugin: a name, alias or
    /// extension of it is another format's (`by`), is empty or not lower
    /// case, or it has no extension.
    #[error("cannot register format name {name:?}: {}", match by {
        Some(f) => format!("it names {f} already"),
        None => "names and extensions are non-empty and lower case, and a format has at least one extension".to_string(),
    })]
    FormatNameTaken {
        /// The name refused.
        name: String,
        /// The format that has it already.
        by: Option<Format>,
    },
    /// The output format has no type for a tensor's dtype.
    #[error("{}", dtype_refusal(*format, *dtype))]
    UnsupportedDType {
        /// The output format.
        format: Format,
        /// The dtype it cannot hold.
        dtype: DType,
    },
    /// Two tensors to write have the same name (in safetensors, also a
    /// tensor named `__metadata__`, the name the header reserves).
    #[error("{}", duplicate_message(name, *format))]
    DuplicateName {
        /// The name.
        name: String,
        /// The output format whose writer refused it (`None`: the list of
        /// tensors given to save).
        format: Option<Format>,
    },
    /// `--rename` gives two tensors the same name.
    #[error("--rename gives {first:?} and {second:?} the same name {name:?}")]
    RenameCollision {
        /// The first tensor's name in the input.
        first: String,
        /// The second tensor's name in the input.
        second: String,
        /// The name both would get.
        name: String,
    },
    /// `--only`/`--exclude` select none of the input's tensors.
    #[error("no tensor is left to write: --only/--exclude match none of the {of} tensors")]
    NoTensorSelected {
        /// How many tensors the input has.
        of: usize,
    },
    /// The input holds no tensor, only a graph (or metadata) the target
    /// cannot hold.
    #[error(
        "nothing to write: this {from}{} holds no tensor, only {holds}, which {target} cannot hold",
        kind.map(|k| format!(" {k}")).unwrap_or_default()
    )]
    NothingToWrite {
        /// The input's format.
        from: Format,
        /// The input's kind (a primitiv file's data type, ...), when it has one.
        kind: Option<&'static str>,
        /// What the input holds instead ("its network", ...).
        holds: String,
        /// The output format.
        target: Format,
    },
    /// The target cannot hold some of the selected tensors (and
    /// `--skip-unsupported` was not given).
    #[error("{}", cannot_hold_message(*target, tensors))]
    CannotHoldTensors {
        /// The output format.
        target: Format,
        /// Each refused tensor's name and why it is refused.
        tensors: Vec<(String, String)>,
    },
    /// An option given does not apply to this conversion.
    #[error("{why}")]
    OptionDoesNotApply {
        /// The option, as its command-line flag (several joined by `/`).
        option: &'static str,
        /// Why it does not apply (the whole message).
        why: String,
    },
    /// A glob of `--only`/`--exclude` or a regular expression of
    /// `--rename` that does not parse.
    #[error("{option}: bad {} {pattern:?}: {why}", if *regex { "pattern" } else { "glob" })]
    BadPattern {
        /// The option, as its command-line flag.
        option: String,
        /// The pattern.
        pattern: String,
        /// True for a regular expression (`--rename`), false for a glob.
        regex: bool,
        /// The parser's complaint.
        why: String,
    },
    /// A slice (`name[0:2, :]`) that is not numpy's syntax.
    #[error("slice [{spec}]: {why}")]
    BadSlice {
        /// What stands between the brackets.
        spec: String,
        /// What is wrong with it.
        why: String,
    },
    /// No tensor has the name asked for.
    #[error("no tensor named {name:?} (of {of}; `inspect` lists the names)")]
    NoTensorNamed {
        /// The name asked for.
        name: String,
        /// How many tensors the file has.
        of: usize,
    },
    /// A cast that cannot be done: to a type that is not a float type
    /// (`from` is `None`), or of a tensor that holds no numbers.
    #[error("{}", match from {
        Some(from) => format!("cannot cast {from} to {to}"),
        None => format!("cannot cast to {to}: casts go to f16, bf16, f32 or f64"),
    })]
    CannotCast {
        /// The tensor's dtype (`None`: the target is refused whatever it is).
        from: Option<DType>,
        /// The dtype asked for.
        to: DType,
    },
    /// Exporting to ONNX from a format whose files hold no network.
    #[error("{format} files hold no network to export to ONNX")]
    NoGraphToExport {
        /// The input's format.
        format: Format,
    },
    /// A tensor whose size in bytes does not fit the arithmetic (or the
    /// output format's offsets).
    #[error("too large")]
    TooLarge,
    /// A conversion that cannot be done a slice at a time, refused because
    /// it was asked to stream only ([`crate::convert_sliced`],
    /// [`crate::ConvertOptions::streaming_only`]): it needs the whole model
    /// in memory (a graph imported, an NNabla model kept, `--params`).
    /// Without that option the same conversion reads the file whole and
    /// converts.
    #[error("{need}")]
    NeedsWholeModel {
        /// What needs the whole model.
        need: WholeModelNeed,
    },
    /// A problem with the request itself (a slice out of range, a
    /// parameter file of the wrong kind, options that do not go together):
    /// never a problem of the file read, which has a variant of its own
    /// ([`Error::Malformed`], [`Error::PastEnd`], a format crate's error).
    #[error("{0}")]
    Invalid(String),
    /// A state the library's own steps do not leave (a bug in mlformats
    /// if it is met): a conversion that wrote nothing, an exported
    /// initializer without its source.
    #[error("{0}")]
    Internal(String),
    /// A tensor asked for by its position in the file, past the last one.
    #[error("no tensor {index}")]
    NoTensorAt {
        /// The position asked for.
        index: usize,
    },
    /// A tensor's bytes run past the end of the file (a truncated file, or
    /// an index read from another file).
    #[error("its {len} bytes at offset {offset} are past the end of the file")]
    PastEnd {
        /// Where its bytes start.
        offset: u64,
        /// How many bytes it has.
        len: u64,
    },
    /// A file broken where a reader walking its structure found it: a part
    /// that runs past the end of the file, an offset or size that
    /// overflows, data shorter than its header says, text that is not
    /// UTF-8, a message that does not parse.
    #[error("{why}")]
    Malformed {
        /// The part of the file ("HDF5 chunk", "zip member", ...).
        part: &'static str,
        /// The byte of the file where it is, when the reader knows it.
        at: Option<u64>,
        /// What is wrong, in the reader's words (the whole message).
        why: String,
    },
    /// A buffer of this many bytes does not fit in this machine's address
    /// space (or the allocator refused it).
    #[error("{bytes} bytes do not fit in memory")]
    DoesNotFitInMemory {
        /// Its size.
        bytes: u64,
    },
    /// `--rename` gives a tensor a name the ONNX exporter reserves for its
    /// helper tensors.
    #[error(
        "--rename gives {tensor:?} the name {name:?}; names starting with {prefix:?} are \
         reserved for the exporter's helper tensors"
    )]
    ReservedName {
        /// The tensor's name in the input.
        tensor: String,
        /// The name `--rename` gives it.
        name: String,
        /// The reserved prefix.
        prefix: &'static str,
    },
    /// `--rename` gives a tensor a name the exported graph uses for
    /// another value.
    #[error(
        "--rename gives {tensor:?} the name {name:?}, which the exported graph already uses for \
         another value"
    )]
    NameInUse {
        /// The tensor's name in the input.
        tensor: String,
        /// The name `--rename` gives it.
        name: String,
    },
    /// A problem with one tensor.
    #[error("tensor {name:?}")]
    Tensor {
        /// The tensor's name.
        name: String,
        /// What is wrong with it.
        #[source]
        source: Box<Error>,
    },
    /// A shape, dtype or limit problem (crate `tensor-core`).
    #[error(transparent)]
    Core(#[from] tensor_core::Error),
    /// A TVM/CVM `.params` problem (crate `cvm-params`).
    #[cfg(feature = "cvm")]
    #[error(transparent)]
    Cvm(#[from] cvm_params::Error),
    /// A primitiv problem (crate `primitiv-format`).
    #[cfg(feature = "primitiv")]
    #[error(transparent)]
    Primitiv(#[from] primitiv_format::Error),
    /// An NNabla protobuf problem (crate `nnabla-proto`).
    #[cfg(feature = "nnabla")]
    #[error(transparent)]
    Nnabla(#[from] nnabla_proto::Error),
    /// An NNabla `.nnp` or `.h5` problem (crate `nnp-archive`).
    #[cfg(feature = "nnp")]
    #[error(transparent)]
    Nnp(#[from] nnp_archive::Error),
    /// An ONNX model problem (crate `onnx-format`) that is neither a
    /// limit, an I/O error nor a type ONNX cannot hold (those are
    /// [`Error::Core`], [`Error::Io`] and [`Error::Unsupported`]).
    #[cfg(feature = "onnx")]
    #[error(transparent)]
    Onnx(onnx_format::Error),
    /// An ONNX graph the import into NNabla or TenniS cannot express:
    /// every operator refused, each with its typed reason and count
    /// ([`crate::translate::import::Unsupported::refusals`]).
    #[cfg(feature = "onnx")]
    #[error(transparent)]
    GraphRefused(graph_translate::import::Unsupported),
    /// A TenniS module problem (crate `bubble-module`).
    #[cfg(feature = "tennis")]
    #[error(transparent)]
    Tennis(#[from] bubble_module::Error),
    /// A `.safetensors` problem.
    #[cfg(feature = "safetensors")]
    #[error("{0}")]
    Safetensors(String),
    /// An `.npz` problem.
    #[cfg(feature = "npz")]
    #[error("{0}")]
    Npz(String),
    /// A remote file could not be reached or read (`remote` feature).
    #[error("{location}: {why}")]
    Remote {
        /// Its location.
        location: String,
        /// What went wrong, as the server or the store said it.
        why: String,
    },
}

impl Error {
    /// A registered format's error ([`Error::Plugin`]): `why` is a message
    /// (`&str`, `String`) or any error.
    pub fn plugin(
        format: &'static str,
        why: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Error {
        Error::Plugin {
            format,
            source: why.into(),
        }
    }

    /// This error, about the tensor `name`.
    pub fn in_tensor(self, name: impl Into<String>) -> Error {
        Error::Tensor {
            name: name.into(),
            source: Box::new(self),
        }
    }

    /// True when the file could not be read at all (an I/O error, a
    /// directory, a format no reader knows, a format whose feature is off),
    /// as opposed to a file whose reader found it broken: `validate`'s
    /// "trouble" rather than "invalid".
    pub fn is_unreadable(&self) -> bool {
        matches!(
            self,
            Error::Io(_)
                | Error::IsDirectory
                | Error::UnknownFormat
                | Error::FeatureDisabled { .. }
        )
    }

    /// The whole message: this error and its causes, joined by `: `, each
    /// said once (a cause that a message already ends with is not repeated).
    pub fn full_message(&self) -> String {
        chain_message(self)
    }
}

/// What a conversion read a slice at a time cannot do
/// ([`Error::NeedsWholeModel`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WholeModelNeed {
    /// Converting an NNabla file keeps its model (networks, executors)
    /// along with the parameters.
    KeepsModel {
        /// The input's format.
        from: Format,
        /// The output format.
        target: Format,
    },
    /// Converting an ONNX model imports its graph (into NNabla or TenniS).
    ImportsGraph {
        /// The output format.
        target: Format,
    },
    /// The file stores a parameter name more than once, and converting it
    /// as it is writes every stored entry.
    RepeatedNames {
        /// The input's format.
        from: Format,
        /// The output format.
        target: Format,
    },
    /// Converting to ONNX exports the input's graph.
    ExportsGraph {
        /// The input's format.
        from: Format,
    },
    /// An ONNX initializer holds its data and also says where it is, so
    /// converting the model to ONNX exports its graph.
    LocatedInitializer {
        /// The initializer's name.
        name: String,
    },
    /// `--params` merges parameters into the input's network.
    Params,
    /// Re-encoding a file into a format is done from the whole file.
    Reencode {
        /// The input's format.
        from: Format,
        /// The output format.
        target: Format,
    },
}

impl std::fmt::Display for WholeModelNeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (what, instead) = match self {
            WholeModelNeed::KeepsModel { from, target } => (
                format!(
                    "converting this {from} to {target} keeps its model (networks, executors, \
                     ...) along with the parameters"
                ),
                "add --weights-only to write the parameters alone, or convert to .h5, or ",
            ),
            WholeModelNeed::ImportsGraph { target } => (
                format!(
                    "converting an ONNX model to {target} imports its graph as {}",
                    if *target == Format::TennisModule {
                        "a TenniS module"
                    } else {
                        "an NNabla network"
                    }
                ),
                "add --weights-only to write its initializers alone, or ",
            ),
            WholeModelNeed::RepeatedNames { from, target } => (
                format!(
                    "this {from} stores a parameter name more than once, and converting it to \
                     {target} as it is writes every stored entry"
                ),
                "any option such as --weights-only writes each name once, or ",
            ),
            WholeModelNeed::ExportsGraph { from } => (
                format!("converting this {from} to ONNX exports its graph"),
                "add --weights-only to write its tensors alone, or ",
            ),
            WholeModelNeed::LocatedInitializer { name } => {
                return write!(
                    f,
                    "initializer {name:?} holds its data and also says where it is \
                     (data_location, external_data), so converting this ONNX model to ONNX \
                     exports its graph, which needs the whole model in memory; this file is \
                     read a slice at a time (add --weights-only to write its tensors alone, \
                     or use `mlformats convert`)"
                );
            }
            WholeModelNeed::Params => {
                return f.write_str(
                    "--params merges parameters into the input's network, which needs the whole \
                     file in memory; this file is read a slice at a time (use `mlformats convert`)",
                );
            }
            WholeModelNeed::Reencode { from, target } => {
                return write!(
                    f,
                    "re-encoding a {from} file into {target} rewrites it from the whole file, \
                     and this file is read a slice at a time (use `mlformats convert`)"
                );
            }
        };
        write!(
            f,
            "{what}, which needs the whole model in memory; this file is read a slice at a time \
             ({instead}use `mlformats convert`)"
        )
    }
}

/// [`Error::UnsupportedDType`]'s message, in each writer's words.
fn dtype_refusal(format: Format, dtype: DType) -> String {
    match format {
        Format::Npz => format!("dtype {dtype} has no numpy equivalent"),
        Format::Onnx => format!("dtype {dtype} has no ONNX data type"),
        Format::Safetensors => format!("dtype {dtype} cannot be stored in safetensors"),
        Format::CvmParams
        | Format::Primitiv
        | Format::NnablaNnp
        | Format::NnablaNntxt
        | Format::NnablaProtobuf
        | Format::NnablaH5
        | Format::TennisModule
        | Format::External(_) => format!("dtype {dtype} cannot be stored in {format}"),
    }
}

/// [`Error::DuplicateName`]'s message, in each writer's words.
fn duplicate_message(name: &str, format: Option<Format>) -> String {
    match format {
        Some(Format::Onnx) => {
            format!("the name {name:?} occurs twice; ONNX initializer names are unique")
        }
        Some(Format::Safetensors) => {
            format!("the name {name:?} occurs twice (or is reserved) in a safetensors file")
        }
        Some(
            Format::CvmParams
            | Format::Primitiv
            | Format::NnablaNnp
            | Format::NnablaNntxt
            | Format::NnablaProtobuf
            | Format::NnablaH5
            | Format::TennisModule
            | Format::Npz
            | Format::External(_),
        )
        | None => format!("the name {name:?} is given twice"),
    }
}

/// [`Error::CannotHoldTensors`]'s message.
fn cannot_hold_message(target: Format, tensors: &[(String, String)]) -> String {
    let list: Vec<String> = tensors
        .iter()
        .map(|(n, why)| format!("{n:?} ({why})"))
        .collect();
    format!(
        "{target} cannot hold {} of the tensors: {}; --skip-unsupported converts the rest",
        tensors.len(),
        list.join(", ")
    )
}

/// An error and its causes joined by `: `, skipping a cause whose text the
/// message so far already ends with (many errors print their cause too).
pub fn chain_message(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let text = c.to_string();
        if !s.ends_with(&text) {
            s.push_str(": ");
            s.push_str(&text);
        }
        cur = c.source();
    }
    s
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Adds the tensor name to an error.
pub(crate) trait InTensor<T> {
    fn in_tensor(self, name: &str) -> Result<T>;
}

impl<T, E: Into<Error>> InTensor<T> for std::result::Result<T, E> {
    fn in_tensor(self, name: &str) -> Result<T> {
        self.map_err(|e| e.into().in_tensor(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NameFilter, SaveOptions, Tensor, save_to_writer};

    /// Saves one tensor `name` of `dtype` (one element) as `format`: the error.
    fn save_err(format: Format, tensors: &[(&str, DType)]) -> Error {
        let list: Vec<(&str, Tensor<'static>)> = tensors
            .iter()
            .map(|&(n, d)| (n, Tensor::new(d, vec![1], vec![0u8; d.size()]).unwrap()))
            .collect();
        let mut out = Vec::new();
        save_to_writer(&mut out, format, list, &SaveOptions::new()).unwrap_err()
    }

    #[cfg(feature = "npz")]
    #[test]
    fn a_dtype_npz_cannot_hold_is_typed() {
        let e = save_err(Format::Npz, &[("w", DType::C32)]);
        let Error::Tensor { name, source } = &e else {
            panic!("{e:?}")
        };
        assert_eq!(name, "w");
        assert!(
            matches!(
                **source,
                Error::UnsupportedDType {
                    format: Format::Npz,
                    dtype: DType::C32
                }
            ),
            "{source:?}"
        );
        let said = format!("dtype {} has no numpy equivalent", DType::C32);
        assert_eq!(source.to_string(), said);
        assert_eq!(e.full_message(), format!("tensor \"w\": {said}"));
    }

    #[cfg(feature = "safetensors")]
    #[test]
    fn a_dtype_safetensors_cannot_hold_is_typed() {
        let e = save_err(Format::Safetensors, &[("z", DType::C128)]);
        let Error::Tensor { source, .. } = &e else {
            panic!("{e:?}")
        };
        let Error::UnsupportedDType { format, dtype } = **source else {
            panic!("{source:?}")
        };
        assert_eq!((format, dtype), (Format::Safetensors, DType::C128));
        assert_eq!(
            source.to_string(),
            format!("dtype {} cannot be stored in safetensors", DType::C128)
        );
    }

    #[cfg(feature = "safetensors")]
    #[test]
    fn a_name_given_twice_is_typed() {
        let e = save_err(
            Format::Safetensors,
            &[("a", DType::F32), ("b", DType::F32), ("a", DType::F64)],
        );
        let Error::DuplicateName { name, format } = &e else {
            panic!("{e:?}")
        };
        assert_eq!((name.as_str(), *format), ("a", None));
        assert_eq!(e.to_string(), "the name \"a\" is given twice");
    }

    #[test]
    fn a_bad_glob_is_typed() {
        let e = NameFilter::new(&["ok".into()], &["a[b".into()]).unwrap_err();
        let Error::BadPattern {
            option,
            pattern,
            regex,
            ..
        } = &e
        else {
            panic!("{e:?}")
        };
        assert_eq!(
            (option.as_str(), pattern.as_str(), *regex),
            ("--exclude", "a[b", false)
        );
        assert!(
            e.to_string().starts_with("--exclude: bad glob \"a[b\": "),
            "{e}"
        );
    }

    #[test]
    fn whole_model_needs_say_what_needs_it() {
        let e = Error::NeedsWholeModel {
            need: WholeModelNeed::ExportsGraph {
                from: Format::NnablaNnp,
            },
        };
        assert_eq!(
            e.to_string(),
            format!(
                "converting this {} to ONNX exports its graph, which needs the whole model in \
                 memory; this file is read a slice at a time (add --weights-only to write its \
                 tensors alone, or use `mlformats convert`)",
                Format::NnablaNnp
            )
        );
    }
}
