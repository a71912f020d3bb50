//! `mlformats`: inspect and convert primitiv, NNabla, TenniS and TVM/CVM files.
//!
//! Exit status: 0 on success, 1 when a file cannot be read or written
//! (`error: <path>: <what is wrong>` on stderr), 2 for usage errors.

mod formats;
mod report;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use mlformats::Format;

use formats::Source;

/// Read, inspect and convert the model and parameter files of primitiv,
/// NNabla, TenniS and CVM-Runtime / Apache TVM.
#[derive(Parser, Debug)]
#[command(name = "mlformats", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
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
        #[arg(long, value_name = "FORMAT", value_parser = parse_format)]
        format: Option<Format>,
    },
    /// Copy a file's tensors into another file, of the format OUT's
    /// extension names (or --to). Converting to the same format re-encodes
    /// the whole file.
    Convert {
        /// The file to read.
        input: PathBuf,
        /// The file to write (replaced atomically).
        output: PathBuf,
        /// The output format (default: from OUT's extension).
        #[arg(long, value_name = "FORMAT", value_parser = parse_format)]
        to: Option<Format>,
        /// Read the input as this format instead of detecting it.
        #[arg(long, value_name = "FORMAT", value_parser = parse_format)]
        from: Option<Format>,
    },
}

fn parse_format(s: &str) -> Result<Format, String> {
    Format::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
        format!("unknown format {s:?}; one of: {}", names.join(", "))
    })
}

/// An error that names the file it concerns.
struct Failure {
    path: PathBuf,
    error: anyhow::Error,
}

trait AtPath<T> {
    fn at(self, path: &Path) -> Result<T, Failure>;
}

impl<T> AtPath<T> for anyhow::Result<T> {
    fn at(self, path: &Path) -> Result<T, Failure> {
        self.map_err(|error| Failure {
            path: path.to_path_buf(),
            error,
        })
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            let chain: Vec<String> = f.error.chain().map(|e| e.to_string()).collect();
            let _ = writeln!(
                std::io::stderr(),
                "error: {}: {}",
                f.path.display(),
                chain.join(": ")
            );
            ExitCode::from(1)
        }
    }
}

fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Inspect { file, json, format } => {
            let src = Source::open(&file, format).at(&file)?;
            let report = formats::inspect(&src).at(&file)?;
            let text = if json {
                let mut buf = Vec::new();
                let fmt = serde_json::ser::PrettyFormatter::with_indent(b" ");
                let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
                serde::Serialize::serialize(&report.to_json(), &mut ser)
                    .map_err(anyhow::Error::new)
                    .at(&file)?;
                buf.push(b'\n');
                buf
            } else {
                report.to_table(&file.display().to_string()).into_bytes()
            };
            let mut out = std::io::stdout().lock();
            // A closed pipe (`| head`) is not an error worth a message.
            let _ = out.write_all(&text).and_then(|()| out.flush());
            Ok(())
        }
        Command::Convert {
            input,
            output,
            to,
            from,
        } => {
            let target = match to.or_else(|| Format::from_extension(&output)) {
                Some(f) => f,
                None => {
                    return Err(anyhow::anyhow!(
                        "cannot tell the output format from the extension; give --to FORMAT"
                    ))
                    .at(&output);
                }
            };
            let src = Source::open(&input, from).at(&input)?;
            if src.format == target {
                formats::reencode(&src, &output).at(&output)
            } else {
                let tensors = formats::tensors(&src).at(&input)?;
                formats::write(target, &output, &tensors).at(&output)
            }
        }
    }
}
