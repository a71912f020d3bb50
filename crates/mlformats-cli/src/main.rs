//! `mlformats`: inspect and convert primitiv, NNabla, TenniS and TVM/CVM files.
//!
//! A front over the `mlformats` library: argument parsing, progress bars,
//! tables and JSON. Every format rule lives in the library.
//!
//! Exit status: 0 on success, 1 when a file cannot be read or written
//! (`error: <path>: <what is wrong>` on stderr), 2 for usage errors.

mod diff;
mod failure;
mod graph;
mod inspect;
mod progress;
mod stats_cmd;
mod table;
mod validate;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};
use mlformats::{ConvertOptions, DType, Document, Format};

use failure::{AtPath, Failure};

/// Read, inspect and convert the model and parameter files of primitiv,
/// NNabla, TenniS and CVM-Runtime / Apache TVM (and safetensors and npz).
#[derive(Parser, Debug)]
#[command(name = "mlformats", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// A format named on the command line: its contract name or an alias
/// (listed in `--help` and in shell completions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FormatArg(Format);

impl clap::ValueEnum for FormatArg {
    fn value_variants<'a>() -> &'a [Self] {
        const ALL: [FormatArg; Format::ALL.len()] = {
            let mut out = [FormatArg(Format::CvmParams); Format::ALL.len()];
            let mut i = 0;
            while i < out.len() {
                out[i] = FormatArg(Format::ALL[i]);
                i += 1;
            }
            out
        };
        &ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let aliases: Vec<&'static str> = ALIASES
            .iter()
            .filter(|a| Format::from_name(a) == Some(self.0))
            .copied()
            .collect();
        Some(clap::builder::PossibleValue::new(self.0.name()).aliases(aliases))
    }
}

/// The short names `Format::from_name` also accepts.
const ALIASES: [&str; 16] = [
    "params", "cvm", "tvm", "data", "nnp", "nntxt", "prototxt", "protobuf", "h5", "tsm", "tennis",
    "st", "numpy", "pb", "pbtxt", "hdf5",
];

/// The float type `--dtype` casts to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum CastTo {
    /// IEEE binary16.
    F16,
    /// bfloat16.
    Bf16,
    /// IEEE binary32.
    F32,
}

impl CastTo {
    fn dtype(self) -> DType {
        match self {
            CastTo::F16 => DType::F16,
            CastTo::Bf16 => DType::BF16,
            CastTo::F32 => DType::F32,
        }
    }
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Show a file's format, tensors and graph.
    Inspect {
        /// The file to inspect.
        file: PathBuf,
        /// Print the JSON document of the inspect contract (schema 1).
        #[arg(long)]
        json: bool,
        /// Read the file as this format instead of detecting it.
        #[arg(long, value_name = "FORMAT", value_enum)]
        format: Option<FormatArg>,
    },
    /// Copy a file's tensors into another file, of the format OUT's
    /// extension names (or --to). Converting to the same format re-encodes
    /// the whole file.
    Convert {
        /// The file to read.
        input: PathBuf,
        /// The file to write (replaced atomically).
        output: PathBuf,
        /// The output format (default: from OUT's extension; an extension no
        /// format claims keeps the input's format when the input has it too).
        #[arg(long, value_name = "FORMAT", value_enum)]
        to: Option<FormatArg>,
        /// Read the input as this format instead of detecting it.
        #[arg(long, value_name = "FORMAT", value_enum)]
        from: Option<FormatArg>,
        /// Keep only tensors whose name matches GLOB (repeatable).
        #[arg(long, value_name = "GLOB")]
        only: Vec<String>,
        /// Leave out tensors whose name matches GLOB (repeatable).
        #[arg(long, value_name = "GLOB")]
        exclude: Vec<String>,
        /// Rename tensors: a regular expression and its replacement, e.g.
        /// `--rename '^(.*)/value$=$1'` (repeatable, applied in order).
        #[arg(long, value_name = "FROM=TO", value_parser = parse_rename)]
        rename: Vec<(String, String)>,
        /// Convert the tensors the target can hold and list the others,
        /// instead of refusing the conversion.
        #[arg(long)]
        skip_unsupported: bool,
        /// Write the tensors alone: an NNabla model's network does not go
        /// along, and a graph is not exported to ONNX.
        #[arg(long)]
        weights_only: bool,
        /// ONNX export: the NNabla network to export (default: the first
        /// executor's network).
        #[arg(long, value_name = "NAME")]
        network: Option<String>,
        /// ONNX export: the operator set version (13 to 21; default 13).
        #[arg(long, value_name = "N")]
        opset: Option<i64>,
        /// Cast floating-point tensors to this type.
        #[arg(long, value_enum, value_name = "TYPE")]
        dtype: Option<CastTo>,
        /// Write row-major data (the default for every target but primitiv,
        /// whose column-major data is transposed on the way out).
        #[arg(long, conflicts_with = "keep_order")]
        row_major: bool,
        /// Keep column-major data as it is where the target can say so (npz).
        #[arg(long)]
        keep_order: bool,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
        #[command(flatten)]
        durability: Durability,
    },
    /// Compare the tensors of two files of any formats. Exit 0 when equal
    /// within tolerance, 1 when not.
    Diff {
        /// The first file.
        a: PathBuf,
        /// The second file.
        b: PathBuf,
        /// Largest absolute difference still counted as equal.
        #[arg(long, default_value_t = 0.0)]
        tolerance: f64,
        /// Largest relative difference still counted as equal.
        #[arg(long, default_value_t = 0.0)]
        rtol: f64,
        /// Count a dtype difference as a difference even when values agree.
        #[arg(long)]
        strict_dtype: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Per-tensor min, max, mean, std and counts of NaN, inf and zeros.
    Stats {
        /// The file to read.
        file: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// The reader's strictest checks plus data checks (NaN, inf, duplicate
    /// names). Exit 0 when valid, 1 when not.
    Validate {
        /// The file to check.
        file: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Draw the network of an NNabla file or a TenniS module.
    Graph {
        /// The file to draw.
        file: PathBuf,
        /// Output syntax.
        #[arg(long, value_enum, default_value = "dot")]
        format: graph::GraphFormat,
        /// The NNabla network to draw (default: the first).
        #[arg(long, value_name = "NAME")]
        network: Option<String>,
        /// Write to this file instead of stdout.
        #[arg(long, short, value_name = "OUT")]
        output: Option<PathBuf>,
        #[command(flatten)]
        durability: Durability,
    },
    /// Print a shell completion script.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff).
    Man,
}

/// How a written file is replaced: `--sync` or not.
#[derive(clap::Args, Debug)]
struct Durability {
    /// Flush the output to the disk (file, then folder) before finishing.
    /// Without it the output is still replaced atomically: a killed or
    /// crashed run leaves the previous file intact (and no temporary file,
    /// or on filesystems without O_TMPFILE one the next write removes), but
    /// after a power loss or an operating-system crash the new file may be
    /// missing or incomplete (as with cp or safetensors). With it, once
    /// the command exits the new file survives a power loss too; it costs
    /// a wait for the disk.
    #[arg(long)]
    sync: bool,
}

impl Durability {
    fn options(&self) -> tensor_core::io::WriteOptions {
        tensor_core::io::WriteOptions::new().sync(self.sync)
    }
}

fn parse_rename(s: &str) -> Result<(String, String), String> {
    s.split_once('=')
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .ok_or_else(|| format!("{s:?} is not FROM=TO"))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(f) => {
            let _ = writeln!(
                std::io::stderr(),
                "error: {}: {}",
                f.path.display(),
                mlformats::chain_message(f.error.as_ref())
            );
            ExitCode::from(if f.usage { 2 } else { 1 })
        }
    }
}

fn print(bytes: &[u8]) {
    let mut out = std::io::stdout().lock();
    // A closed pipe (`| head`) is not an error worth a message.
    let _ = out.write_all(bytes).and_then(|()| out.flush());
}

/// Pretty JSON with one-space indents, as the contract's examples print it.
fn json_text(v: &serde_json::Value) -> anyhow::Result<Vec<u8>> {
    let mut buf = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
    serde::Serialize::serialize(v, &mut ser)?;
    buf.push(b'\n');
    Ok(buf)
}

/// Opens `path` (as `format`, or detected); errors name the path.
fn open(path: &Path, format: Option<Format>) -> Result<Document, Failure> {
    match format {
        Some(f) => Document::open_as(path, f),
        None => Document::open(path),
    }
    .map_err(anyhow::Error::new)
    .at(path)
}

fn run(cli: Cli) -> Result<ExitCode, Failure> {
    match cli.command {
        Command::Inspect { file, json, format } => {
            let doc = open(&file, format.map(|f| f.0))?;
            let text = if json {
                json_text(&doc.inspect_json()).at(&file)?
            } else {
                inspect::table(&doc, &file.display().to_string()).into_bytes()
            };
            print(&text);
            Ok(ExitCode::SUCCESS)
        }
        Command::Convert {
            input,
            output,
            to,
            from,
            only,
            exclude,
            rename,
            skip_unsupported,
            weights_only,
            network,
            opset,
            dtype,
            row_major: _,
            keep_order,
            quiet,
            durability,
        } => {
            let ext = |p: &Path| p.extension().map(|e| e.to_ascii_lowercase());
            let same_family = ext(&input).is_some() && ext(&input) == ext(&output);
            if to.is_none() && Format::from_extension(&output).is_none() && !same_family {
                return Err(Failure::usage(
                    &output,
                    format!(
                        "cannot tell the output format from the extension; give --to FORMAT (one of: {})",
                        Format::names().join(", ")
                    ),
                ));
            }
            let doc = open(&input, from.map(|f| f.0))?;
            let total = doc.tensors().map(|(_, t)| t.bytes().len() as u64).sum();
            let pb = progress::bar(doc.file_size(), total, quiet, "converting");
            let bar = pb.clone();
            let mut opts = ConvertOptions::new()
                .keep_order(keep_order)
                .skip_unsupported(skip_unsupported)
                .weights_only(weights_only)
                .progress(move |n| bar.inc(n));
            opts.to = to.map(|f| f.0);
            opts.only = only;
            opts.exclude = exclude;
            opts.renames = rename;
            opts.network = network;
            opts.opset = opset;
            opts.dtype = dtype.map(CastTo::dtype);
            opts.sync = durability.sync;
            let result = mlformats::convert_document(&doc, &output, &opts);
            pb.finish_and_clear();
            // Errors reading named the input above; errors writing name the output.
            let summary = result.map_err(anyhow::Error::new).at(&output)?;
            for (name, why) in &summary.skipped {
                let _ = writeln!(std::io::stderr(), "skipped {name:?}: {why}");
            }
            for w in &summary.warnings {
                let _ = writeln!(std::io::stderr(), "warning: {w}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Diff {
            a,
            b,
            tolerance,
            rtol,
            strict_dtype,
            json,
        } => {
            let opts = mlformats::DiffOptions::new()
                .tolerance(tolerance)
                .rtol(rtol)
                .strict_dtype(strict_dtype);
            let da = open(&a, None)?;
            let db = open(&b, None)?;
            let report = mlformats::diff::diff_documents(&da, &db, &opts)
                .map_err(anyhow::Error::new)
                .at(&a)?;
            if json {
                print(&json_text(&report.to_json()).at(&a)?);
            } else {
                print(diff::text(&report, &a, &b).as_bytes());
            }
            Ok(if report.is_equal() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Command::Stats { file, json, quiet } => {
            let doc = open(&file, None)?;
            let text = stats_cmd::run(&doc, &file, json, quiet).at(&file)?;
            print(text.as_bytes());
            Ok(ExitCode::SUCCESS)
        }
        Command::Validate { file, json, quiet } => {
            let doc = open(&file, None)?;
            let out = validate::run(&doc, &file, quiet);
            if json {
                print(&json_text(&out.json).at(&file)?);
            } else {
                print(out.text.as_bytes());
            }
            Ok(if out.ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Command::Graph {
            file,
            format,
            network,
            output,
            durability,
        } => {
            let doc = open(&file, None)?;
            let text = graph::render(&doc, format, network.as_deref()).at(&file)?;
            match output {
                Some(out) => tensor_core::io::write_atomic_with(
                    &out,
                    &durability.options(),
                    |w| -> anyhow::Result<()> {
                        w.write_all(text.as_bytes())?;
                        Ok(())
                    },
                )
                .at(&out)?,
                None => print(text.as_bytes()),
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Completions { shell } => {
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "mlformats", &mut buf);
            print(&buf);
            Ok(ExitCode::SUCCESS)
        }
        Command::Man => {
            let mut buf = Vec::new();
            clap_mangen::Man::new(Cli::command())
                .render(&mut buf)
                .map_err(anyhow::Error::new)
                .at(Path::new("man"))?;
            print(&buf);
            Ok(ExitCode::SUCCESS)
        }
    }
}
