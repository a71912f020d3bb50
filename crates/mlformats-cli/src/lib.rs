//! The `mlformats` command as a library: inspect and convert primitiv,
//! NNabla, TenniS, TVM/CVM, safetensors, npz and ONNX files.
//!
//! A front over the `mlformats` library: argument parsing, progress bars,
//! tables and JSON. Every format rule lives in the library. The `mlformats`
//! binary is [`main`]; a crate that adds a format
//! ([`mlformats::register_format`]) gets the whole command with its format
//! in every list, detection and `--to`, by registering it and calling
//! [`main`] from its own binary:
//!
//! ```no_run
//! fn main() -> std::process::ExitCode {
//!     // mlformats::register_format(&MY_FORMAT).unwrap();
//!     mlformats_cli::main()
//! }
//! ```
//!
//! Exit status: 0 on success, 1 when a file cannot be read or written
//! (`error: <path>: <what is wrong>` on stderr), 2 for usage errors.
//! `diff` and `validate` answer a question, as `cmp` and `diff` do: 0 for
//! equal / valid, 1 for different / invalid, 2 for trouble (a file that
//! cannot be read, usage).

mod convert;
mod diff;
mod failure;
mod graph;
mod inspect;
mod progress;
mod show;
mod stats_cmd;
mod stdout;
mod table;
mod validate;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};
use mlformats::{DType, Document, Format};

use failure::{AtPath, Failure};

/// Read, inspect and convert the model and parameter files of primitiv,
/// NNabla, TenniS and CVM-Runtime / Apache TVM (and safetensors and npz).
#[derive(Parser, Debug)]
#[command(
    name = "mlformats",
    version,
    about,
    long_about = None,
    after_help = EXIT_STATUS,
    after_long_help = EXIT_STATUS
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    limits: LimitArgs,
}

/// How far a file may make a reader go: the defaults are safe for files
/// from anywhere; raise them for big files you trust.
#[derive(clap::Args, Debug)]
struct LimitArgs {
    /// The most bytes compressed data may inflate to, per byte of the file
    /// (default 100; any file may inflate to 64 MiB). A file past it is
    /// refused as a decompression bomb; raise it for a trusted file that
    /// compresses better (zeros compress about 1000:1).
    #[arg(long, global = true, value_name = "N")]
    max_inflate_ratio: Option<u64>,
    /// Trust the files: lift every reading limit (inflation, allocation,
    /// tensor counts, ranks, name lengths). Only for files you trust.
    #[arg(long, global = true)]
    trust: bool,
    /// After the command, print on stderr the bytes fetched and requests
    /// made for files read from `http(s)://`, `s3://`, `gs://` or `az://`.
    #[arg(long, global = true)]
    remote_stats: bool,
}

impl LimitArgs {
    fn read_options(&self) -> mlformats::ReadOptions {
        let mut limits = if self.trust {
            tensor_core::Limits::unlimited()
        } else {
            tensor_core::Limits::default()
        };
        if let Some(r) = self.max_inflate_ratio {
            limits = limits.with_max_inflate_ratio(r);
        }
        mlformats::ReadOptions::default().with_limits(limits)
    }
}

/// The reading options of this run (`--max-inflate-ratio`, `--trust`),
/// set once in `main`.
static READ_OPTIONS: std::sync::OnceLock<mlformats::ReadOptions> = std::sync::OnceLock::new();

fn read_options() -> mlformats::ReadOptions {
    READ_OPTIONS.get().cloned().unwrap_or_default()
}

/// The exit statuses, in `--help` and the man page.
const EXIT_STATUS: &str = "Exit status: 0 on success; 1 when a file cannot be read or written \
(`error: <path>: <what is wrong>` on stderr); 2 for usage errors. `diff` and `validate` \
answer a question, as cmp(1) and diff(1) do: 0 when the files are equal / the file is \
valid, 1 when they differ / it is invalid, 2 for trouble (a file that cannot be read, \
a usage error).";

/// A format named on the command line: its contract name or an alias
/// (listed in `--help` and in shell completions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FormatArg(Format);

impl clap::ValueEnum for FormatArg {
    fn value_variants<'a>() -> &'a [Self] {
        // the library's list: built-in formats, then any registered
        // (mlformats::register_format) before the arguments are parsed
        static ALL: std::sync::OnceLock<Vec<FormatArg>> = std::sync::OnceLock::new();
        ALL.get_or_init(|| Format::all().into_iter().map(FormatArg).collect())
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.0.name()).aliases(self.0.aliases()))
    }
}

/// The float type `--dtype` casts to: one of [`mlformats::CAST_TARGETS`],
/// by its contract name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CastTo(DType);

impl clap::ValueEnum for CastTo {
    fn value_variants<'a>() -> &'a [Self] {
        const ALL: [CastTo; mlformats::CAST_TARGETS.len()] = {
            let mut out = [CastTo(DType::F32); mlformats::CAST_TARGETS.len()];
            let mut i = 0;
            while i < out.len() {
                out[i] = CastTo(mlformats::CAST_TARGETS[i]);
                i += 1;
            }
            out
        };
        &ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.0.name()))
    }
}

impl CastTo {
    fn dtype(self) -> DType {
        self.0
    }
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Show files' format, tensors (names, dtypes, shapes, parameter
    /// counts, sizes), total parameters and graphs (inputs and outputs with
    /// shapes, operator counts). The names shown are the names every other
    /// command, Rust and Python take.
    Inspect {
        /// The files to inspect (`-` reads standard input).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Print the JSON document of the inspect contract (docs/INSPECT_JSON.md;
        /// a JSON array of them for several files).
        #[arg(long)]
        json: bool,
        /// The contract's schema version for --json: 2 (names as every
        /// command takes them, the typed graph) or 1 (names as stored).
        #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=2))]
        schema: u32,
        /// Read the files as this format instead of detecting it.
        #[arg(long = "from", alias = "format", value_name = "FORMAT", value_enum)]
        format: Option<FormatArg>,
        /// Names in full even on a terminal (piped output never shortens them).
        #[arg(long)]
        wide: bool,
    },
    /// Print the values of a tensor or part of it: NAME or NAME[SLICE] with
    /// numpy's slice syntax, e.g. 'fc/W[0:2, :]', 'b[-1]', 'x[..., ::2]'.
    Show {
        /// The file to read (`-` reads standard input).
        file: PathBuf,
        /// The tensor, as `inspect` names it, with an optional [SLICE].
        tensor: String,
        /// Print JSON: name, dtype, shape (of the slice), tensor_shape, values.
        #[arg(long)]
        json: bool,
        /// Read the file as this format instead of detecting it.
        #[arg(long = "from", alias = "format", value_name = "FORMAT", value_enum)]
        format: Option<FormatArg>,
    },
    /// Copy a file's tensors into another file, of the format OUT's
    /// extension names (or --to). Converting to the same format re-encodes
    /// the whole file.
    Convert(convert::ConvertArgs),
    /// Compare the tensors of two files of any formats. Exit status: 0 when
    /// equal within tolerance, 1 when different, 2 when a file cannot be
    /// read or the command line is wrong.
    Diff(diff::DiffArgs),
    /// Per-tensor min, max, mean, std and counts of NaN, inf and zeros.
    Stats {
        /// The file to read (`-` reads standard input).
        file: PathBuf,
        /// Only tensors whose name matches GLOB (or equals it; repeatable).
        #[arg(long, value_name = "GLOB")]
        only: Vec<String>,
        /// Leave out tensors whose name matches GLOB (or equals it; repeatable).
        #[arg(long, value_name = "GLOB")]
        exclude: Vec<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Names in full even on a terminal (piped output never shortens them).
        #[arg(long)]
        wide: bool,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
        /// Read the file as this format instead of detecting it.
        #[arg(long, value_name = "FORMAT", value_enum)]
        from: Option<FormatArg>,
    },
    /// The reader's strictest checks plus data checks (NaN, inf, duplicate
    /// names). Exit status: 0 when valid, 1 when invalid (the reader refuses
    /// the file, or its data breaks a rule), 2 when the file cannot be read
    /// at all (missing, a directory, unknown format) or the command line is
    /// wrong.
    Validate {
        /// The file to check.
        file: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
        /// Read the file as this format instead of detecting it.
        #[arg(long, value_name = "FORMAT", value_enum)]
        from: Option<FormatArg>,
    },
    /// Draw the graph of an NNabla network, a TenniS module or an ONNX model.
    Graph {
        /// The file to draw.
        file: PathBuf,
        /// Output syntax.
        #[arg(long = "to", alias = "format", value_enum, default_value = "dot")]
        format: graph::GraphFormat,
        /// Read the file as this format instead of detecting it.
        #[arg(long, value_name = "FORMAT", value_enum)]
        from: Option<FormatArg>,
        /// The NNabla network to draw (default: the first executor's, as
        /// `convert` exports; else the first).
        #[arg(long, value_name = "NAME")]
        network: Option<String>,
        /// Which way the layers of `--to svg` and `--to layout` run: `tb`
        /// top to bottom, `lr` left to right.
        #[arg(long, value_enum, default_value = "tb")]
        direction: graph::GraphDirection,
        /// Draw this group closed, as one box (`--to svg` and `--to
        /// layout`; repeatable): an NNabla repeat block by the id the
        /// layout's `groups` give (its `repeat_id`, after those of the
        /// blocks around it and `/`). Groups are drawn open by default.
        #[arg(long, value_name = "GROUP")]
        collapse: Vec<String>,
        /// Draw this ONNX node's subgraphs (an `If`'s branches, a `Loop`'s
        /// body) in a group, by the id the layout's `groups` give it (its
        /// node name; a node inside a body after the body's id and `/`;
        /// repeatable). Such nodes are drawn closed by default.
        #[arg(long, value_name = "GROUP")]
        expand: Vec<String>,
        /// Leave the node's name out of each box (`--to svg` and `--to
        /// layout`).
        #[arg(long)]
        hide_names: bool,
        /// Leave the folded weights out of each box (still folded: not
        /// drawn as boxes either; `--to svg` and `--to layout`).
        #[arg(long)]
        hide_weights: bool,
        /// Show up to four attributes with short values in each box, as
        /// `key = value` (`--to svg` and `--to layout`).
        #[arg(long)]
        attributes: bool,
        /// Write to this file instead of stdout (`-`: stdout).
        #[arg(long, short, value_name = "OUT")]
        output: Option<PathBuf>,
        #[command(flatten)]
        durability: Durability,
    },
    /// Look at a file in the browser: serves the viewer page (built into
    /// this program) and FILE on 127.0.0.1, and opens the default browser.
    /// The page reads the file with the library compiled to WebAssembly;
    /// nothing leaves this machine. Ctrl-C stops.
    View {
        /// The file to look at, or its location (https://, s3://, gs://, az://:
        /// the page is served the ranges it asks for, fetched from there).
        file: PathBuf,
        /// The port (default: any free port).
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// Print the address only; do not open a browser.
        #[arg(long)]
        no_browser: bool,
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

/// `NAME=1,3,224,224` as a name and its dimensions (the library's rule).
fn parse_input_shape(s: &str) -> Result<(String, Vec<i64>), String> {
    mlformats::parse_input_shape(s).map_err(|e| e.to_string())
}

/// `NAME=16000` as a name and its values (the library's rule).
fn parse_input_value(s: &str) -> Result<(String, Vec<f64>), String> {
    mlformats::parse_input_value(s).map_err(|e| e.to_string())
}

fn parse_rename(s: &str) -> Result<(String, String), String> {
    s.split_once('=')
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .ok_or_else(|| format!("{s:?} is not FROM=TO"))
}

/// Runs the command on this process's arguments and returns its exit
/// status. Formats registered before the call ([`mlformats::register_format`])
/// are offered and read as the built-in ones are.
pub fn main() -> ExitCode {
    main_with_args(std::env::args_os())
}

/// Runs the command on `args` (the first is the program's name), as
/// [`main`] does. `--help`, `--version` and usage errors print and end the
/// process, as the command does.
pub fn main_with_args<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = Cli::parse_from(args);
    let _ = READ_OPTIONS.set(cli.limits.read_options());
    let remote_stats = cli.limits.remote_stats;
    // diff and validate answer a question: 1 is their answer, trouble is 2
    let asks = matches!(cli.command, Command::Diff { .. } | Command::Validate { .. });
    let result = run(cli);
    if remote_stats {
        let (bytes, requests) = mlformats::remote::fetched_total();
        let _ = writeln!(
            std::io::stderr(),
            "remote: {bytes} bytes fetched in {requests} requests"
        );
    }
    match result {
        Ok(code) => code,
        Err(f) => {
            let _ = writeln!(
                std::io::stderr(),
                "error: {}: {}",
                f.path.display(),
                mlformats::chain_message(f.error.as_ref())
            );
            ExitCode::from(if f.usage || asks { 2 } else { 1 })
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

/// Opens `path` (as `format`, or detected; `-` reads standard input);
/// errors name the path. A remote file is read whole, with a progress bar.
fn open(path: &Path, format: Option<Format>) -> Result<Document, Failure> {
    open_quiet(path, format, false)
}

/// `path` opened by its structure alone (a local file memory-mapped, a
/// remote one read by ranges, standard input read whole): its graph,
/// names, dtypes and shapes, no tensor read until one is asked for.
fn open_structure(path: &Path, format: Option<Format>) -> Result<Document, Failure> {
    if remote_location(path).is_some() {
        return match open_input(path, format, false)? {
            Input::Whole(doc) => Ok(*doc),
            Input::Streamed { doc, .. } => Ok(*doc),
        };
    }
    let lazy = read_options().with_lazy(true);
    let opened = if path == Path::new("-") {
        let map = tensor_core::MappedFile::from_vec(read_stdin(path)?);
        Document::from_map(map, None, format, &lazy)
    } else {
        Document::open_with(path, format, &lazy)
    };
    opened.map_err(anyhow::Error::new).at(path)
}

/// [`open`], with no progress bar when `quiet`.
fn open_quiet(path: &Path, format: Option<Format>, quiet: bool) -> Result<Document, Failure> {
    if path == Path::new("-") {
        let map = tensor_core::MappedFile::from_vec(read_stdin(path)?);
        return Document::from_map(map, None, format, &read_options())
            .map_err(anyhow::Error::new)
            .at(path);
    }
    if let Some(location) = remote_location(path) {
        let remote = mlformats::remote::RemoteFile::open(location, &Default::default())
            .map_err(anyhow::Error::new)
            .at(path)?;
        return whole(&remote, path, format, quiet);
    }
    Document::open_with(path, format, &read_options())
        .map_err(anyhow::Error::new)
        .at(path)
}

/// `path` as a remote location (`http(s)://`, `s3://`, `gs://`, `az://`).
fn remote_location(path: &Path) -> Option<&str> {
    path.to_str().filter(|s| mlformats::remote::is_remote(s))
}

/// The document of a remote file read whole, with a progress bar of the
/// bytes fetched (shown when the read takes long).
fn whole(
    remote: &mlformats::remote::RemoteFile,
    path: &Path,
    format: Option<Format>,
    quiet: bool,
) -> Result<Document, Failure> {
    use mlformats::random_access::ReadAt;
    let pb = progress::Remote::new(remote.len(), quiet, "fetching");
    let bar = pb.clone();
    remote.set_progress(move |f| {
        bar.inc(f.bytes);
    });
    let doc = mlformats::remote::read_document(remote, format, &read_options());
    pb.finish();
    doc.map_err(anyhow::Error::new).at(path)
}

/// A file to read: opened whole, or (a remote file whose format is read
/// by its index) read tensor by tensor.
enum Input {
    /// Opened whole (memory-mapped, or a remote file fetched).
    Whole(Box<Document>),
    /// A remote file read tensor by tensor.
    Streamed {
        /// The document, reading through `remote`.
        doc: Box<Document>,
        /// The remote file (its progress is set there).
        remote: std::sync::Arc<mlformats::remote::RemoteFile>,
    },
}

impl Input {
    /// The document, the file read whole if it was not.
    fn into_document(
        self,
        path: &Path,
        format: Option<Format>,
        quiet: bool,
    ) -> Result<Document, Failure> {
        match self {
            Input::Whole(doc) => Ok(*doc),
            Input::Streamed { remote, .. } => whole(&remote, path, format, quiet),
        }
    }
}

/// Opens `path` as [`open_quiet`] does, but a remote file whose format is
/// read by its index is opened for reading tensor by tensor: its headers
/// fetched, nothing else yet.
fn open_input(path: &Path, format: Option<Format>, quiet: bool) -> Result<Input, Failure> {
    let Some(location) = remote_location(path) else {
        return open_quiet(path, format, quiet).map(|d| Input::Whole(Box::new(d)));
    };
    let opened = mlformats::remote::open_streamed(location, format, &read_options())
        .map_err(anyhow::Error::new)
        .at(path)?;
    match opened {
        mlformats::remote::Opened::Streamed { document, remote } => Ok(Input::Streamed {
            doc: document,
            remote,
        }),
        mlformats::remote::Opened::Whole(remote) => {
            whole(&remote, path, format, quiet).map(|d| Input::Whole(Box::new(d)))
        }
        _ => open_quiet(path, format, quiet).map(|d| Input::Whole(Box::new(d))),
    }
}

/// All of standard input (`path` is `-`, for the error).
fn read_stdin(path: &Path) -> Result<Vec<u8>, Failure> {
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut bytes)
        .map_err(anyhow::Error::new)
        .at(path)?;
    Ok(bytes)
}

/// The `--only`/`--exclude` filter; a bad pattern is a usage error.
fn name_filter(only: &[String], exclude: &[String]) -> Result<mlformats::NameFilter, Failure> {
    mlformats::NameFilter::new(only, exclude)
        .map_err(|e| Failure::usage(Path::new("--only/--exclude"), e.to_string()))
}

fn run(cli: Cli) -> Result<ExitCode, Failure> {
    match cli.command {
        Command::Inspect {
            files,
            json,
            schema,
            format,
            wide,
        } => inspect::command(files, json, schema, format, wide),
        Command::Show {
            file,
            tensor,
            json,
            format,
        } => show::command(file, tensor, json, format),
        Command::Convert(args) => convert::command(args),
        Command::Diff(args) => diff::command(args),
        Command::Stats {
            file,
            only,
            exclude,
            json,
            wide,
            quiet,
            from,
        } => stats_cmd::command(file, only, exclude, json, wide, quiet, from),
        Command::Validate {
            file,
            json,
            quiet,
            from,
        } => validate::command(file, json, quiet, from),
        Command::Graph {
            file,
            format,
            from,
            network,
            direction,
            collapse,
            expand,
            hide_names,
            hide_weights,
            attributes,
            output,
            durability,
        } => graph::command(
            file,
            format,
            from,
            network,
            graph::Drawing {
                direction,
                collapse,
                expand,
                hide_names,
                hide_weights,
                attributes,
            },
            output,
            durability,
        ),
        Command::View {
            file,
            port,
            no_browser,
        } => view(file, port, no_browser),
        Command::Completions { shell } => completions(shell),
        Command::Man => man(),
    }
}

/// Runs `view`: serves the viewer page and the file until Ctrl-C.
fn view(file: PathBuf, port: u16, no_browser: bool) -> Result<ExitCode, Failure> {
    let viewer = mlformats::view::Viewer::start(&file, port)
        .map_err(anyhow::Error::from)
        .at(&file)?;
    let url = viewer.url().to_string();
    println!("serving {} at {url} (Ctrl-C stops)", file.display());
    let _ = std::io::stdout().flush();
    if !no_browser && !mlformats::view::open_in_browser(&url) {
        eprintln!("could not open a browser: open {url}");
    }
    viewer.wait();
    Ok(ExitCode::SUCCESS)
}

/// Runs `completions`: the completion script of `shell`.
fn completions(shell: clap_complete::Shell) -> Result<ExitCode, Failure> {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "mlformats", &mut buf);
    print(&buf);
    Ok(ExitCode::SUCCESS)
}

/// Runs `man`: the man page (roff).
fn man() -> Result<ExitCode, Failure> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut buf)
        .map_err(anyhow::Error::new)
        .at(Path::new("man"))?;
    print(&buf);
    Ok(ExitCode::SUCCESS)
}
