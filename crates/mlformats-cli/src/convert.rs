//! `convert`: its arguments, and the conversion with its progress bar and
//! what it says it did.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use mlformats::{ConvertOptions, ConvertSummary, Format};

use crate::failure::{AtPath, Failure};
use crate::{
    CastTo, Durability, FormatArg, Input, json_text, open_input, parse_input_shape,
    parse_input_value, parse_rename, print, progress, stdout,
};

// The arguments of `convert`. A plain comment, not a doc comment: the
// subcommand's help is the doc comment of `Command::Convert`.
#[derive(clap::Args, Debug)]
pub struct ConvertArgs {
    /// The file to read.
    input: PathBuf,
    /// The file to write (a regular file is replaced atomically; a
    /// symlink's target is replaced; a FIFO or device is written
    /// through; `-` writes to standard output, with --to).
    output: PathBuf,
    /// The output format (default: from OUT's extension; an extension no
    /// format claims keeps the input's format when the input has it too).
    #[arg(long, value_name = "FORMAT", value_enum)]
    to: Option<FormatArg>,
    /// Read the input as this format instead of detecting it.
    #[arg(long, value_name = "FORMAT", value_enum)]
    from: Option<FormatArg>,
    /// Keep only tensors whose name matches GLOB, or equals it (names as
    /// `inspect` prints them; repeatable).
    #[arg(long, value_name = "GLOB")]
    only: Vec<String>,
    /// Leave out tensors whose name matches GLOB, or equals it (repeatable).
    #[arg(long, value_name = "GLOB")]
    exclude: Vec<String>,
    /// Rename tensors: a regular expression and its replacement, e.g.
    /// `--rename '^conv(.*)$=backbone/conv$1'` (repeatable, applied in order).
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
    /// ONNX export: the operator set version (13 to 21; default 13, or the
    /// lowest one the network's functions need, e.g. 16 for WarpByGrid).
    #[arg(long, value_name = "N")]
    opset: Option<i64>,
    /// An NNabla parameter file (.h5, .protobuf, .nntxt, .nnp) to merge
    /// into the input network (Neural Network Console's net.nntxt +
    /// parameters.h5).
    #[arg(long, value_name = "FILE")]
    params: Option<PathBuf>,
    /// ONNX import: fix the shape of an input with symbolic dimensions,
    /// e.g. `--input-shape input=1,3,224,224` (repeatable).
    #[arg(long, value_name = "NAME=D0,D1,...", value_parser = parse_input_shape)]
    input_shape: Vec<(String, Vec<i64>)>,
    /// ONNX import: fix an input to constant values, e.g. `--input-value
    /// sr=16000` (repeatable); an `If` on it imports as the branch it takes.
    #[arg(long, value_name = "NAME=V0,V1,...", value_parser = parse_input_value)]
    input_value: Vec<(String, Vec<f64>)>,
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
    /// Print what was done as JSON on stdout (instead of the one line;
    /// on stderr when OUT is `-`).
    #[arg(long)]
    json: bool,
    /// No progress bar and no line saying what was done (warnings are
    /// still printed).
    #[arg(long, short)]
    quiet: bool,
    #[command(flatten)]
    durability: Durability,
}

/// Runs `convert`: reads the input (merged with `--params`), converts
/// it and says what was done.
pub fn command(args: ConvertArgs) -> Result<ExitCode, Failure> {
    let ConvertArgs {
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
        params,
        input_shape,
        input_value,
        dtype,
        row_major: _,
        keep_order,
        json,
        quiet,
        durability,
    } = args;
    let ext = |p: &Path| p.extension().map(|e| e.to_ascii_lowercase());
    let same_family = ext(&input).is_some() && ext(&input) == ext(&output);
    let to_stdout = stdout::is_stdout(&output);
    if to_stdout {
        stdout::check(to.map(|f| f.0))?;
    } else if output.is_dir() {
        return Err(Failure::usage(
            &output,
            "is a directory; give the name of the file to write".into(),
        ));
    }
    if to.is_none() && Format::from_extension(&output).is_none() && !same_family {
        return Err(Failure::usage(
            &output,
            format!(
                "cannot tell the output format from the extension; give --to FORMAT (one of: {})",
                Format::names().join(", ")
            ),
        ));
    }
    let mut opts = ConvertOptions::new()
        .keep_order(keep_order)
        .skip_unsupported(skip_unsupported)
        .weights_only(weights_only);
    opts.to = to.map(|f| f.0);
    opts.only = only;
    opts.exclude = exclude;
    opts.renames = rename;
    opts.network = network;
    opts.opset = opset;
    opts.input_shapes = input_shape;
    opts.input_values = input_value;
    opts.dtype = dtype.map(CastTo::dtype);
    opts.sync = durability.sync;
    let from = from.map(|f| f.0);
    let (quiet_bar, out) = (
        quiet || json,
        Output {
            path: &output,
            to_stdout,
        },
    );
    let mut doc = match open_input(&input, from, quiet_bar)? {
        // a remote file read by its index: converted a tensor at a time
        // (the library reads the whole file when the conversion needs the
        // whole model)
        Input::Streamed { doc, .. } if params.is_none() => {
            let result = streamed(&doc, &opts, quiet_bar, &out);
            return report(result, doc.format(), json, quiet, &out);
        }
        other => other.into_document(&input, from, quiet_bar)?,
    };
    // merged with --params, the document is a .protobuf in memory
    let from_format = doc.format();
    if let Some(p) = &params {
        // errors reading the parameter file name it
        doc = doc.with_parameters(p).map_err(anyhow::Error::new).at(p)?;
    }
    let total = doc.tensors().map(|(_, t)| t.bytes().len() as u64).sum();
    let pb = progress::bar(doc.file_size(), total, quiet_bar, "converting");
    let bar = pb.clone();
    let opts = opts.progress(move |n| bar.inc(n));
    let result = match opts.to {
        Some(target) if to_stdout => {
            mlformats::convert_document_to_writer(&doc, target, &mut stdout::writer(), &opts)
        }
        _ => mlformats::convert_document(&doc, &output, &opts),
    };
    pb.finish_and_clear();
    report(result, from_format, json, quiet, &out)
}

/// Where the conversion writes.
struct Output<'p> {
    path: &'p Path,
    to_stdout: bool,
}

/// Converts a remote file read by its index, a tensor at a time, with a
/// progress bar.
fn streamed(
    doc: &mlformats::Document,
    opts: &ConvertOptions,
    quiet: bool,
    out: &Output<'_>,
) -> mlformats::Result<ConvertSummary> {
    let total = doc.entries().iter().map(|t| t.byte_len()).sum();
    let pb = progress::Remote::new(total, quiet, "converting");
    let bar = pb.clone();
    let opts = opts.clone().progress(move |n| {
        bar.inc(n);
    });
    let result = match opts.to {
        Some(target) if out.to_stdout => {
            mlformats::convert_document_to_writer(doc, target, &mut stdout::writer(), &opts)
        }
        _ => mlformats::convert_document(doc, out.path, &opts),
    };
    pb.finish();
    result
}

/// Says what a conversion from `from_format` did (or why it failed).
fn report(
    result: mlformats::Result<ConvertSummary>,
    from_format: Format,
    json: bool,
    quiet: bool,
    out: &Output<'_>,
) -> Result<ExitCode, Failure> {
    let (output, to_stdout) = (out.path, out.to_stdout);
    // Errors reading named the input above; errors writing name the output.
    let mut summary = result.map_err(anyhow::Error::new).at(output)?;
    summary.from = from_format;
    // with `-`, stdout holds the file alone: what was done goes to stderr
    let say = |bytes: &[u8]| {
        if to_stdout {
            let _ = std::io::stderr().write_all(bytes);
        } else {
            print(bytes);
        }
    };
    if json {
        say(&json_text(&summary.to_json()).at(output)?);
    }
    for (name, why) in &summary.skipped {
        let _ = writeln!(std::io::stderr(), "skipped {name:?}: {why}");
    }
    for w in &summary.warnings {
        let _ = writeln!(std::io::stderr(), "warning: {w}");
    }
    if !json && !quiet {
        say(format!("{}: {}\n", output.display(), summary.line()).as_bytes());
    }
    Ok(ExitCode::SUCCESS)
}
