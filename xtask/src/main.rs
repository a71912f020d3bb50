//! `cargo xtask <command>`: maintainer tasks for the mlformats workspace.
//!
//! Commands:
//! - `regen-proto`: regenerate the prost code and descriptor of `proto/nnabla.proto`
//!   (and the prost code of `crates/onnx-format/proto/onnx.proto`)
//!   into `crates/nnabla-proto/src/generated/` (pure Rust, no protoc needed).
//! - `bench`: run every benchmark and print one table (see `bench.rs`).
//! - `web`: build the viewer page (see `web.rs`).
//!
//! Other commands (e.g. `bench`, `fuzz`) are added as further match arms in
//! [`main`]; an unknown command prints the usage and exits with status 2.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod bench;
mod fuzz;
mod regen_proto;
mod web;

const USAGE: &str = "usage: cargo xtask <command>

commands:
  regen-proto   regenerate crates/nnabla-proto/src/generated/ from proto/nnabla.proto and
                crates/onnx-format/src/generated/ from crates/onnx-format/proto/onnx.proto
                (protox + prost-build; needs no protoc)
  bench         run every benchmark and print one table of throughput and ratios
                to memcpy / write_all measured in the same run [--json] [--crate NAME]
  fuzz          build the fuzz/ targets (cargo-fuzz) and run each for N seconds; fails on
                any crash, timeout or OOM: --seconds N [--target T]... [--sanitizer none]
  web           build the viewer's wasm into crates/mlformats/web/ (the page's one home,
                embedded by `mlformats view`) and record its inputs' hash; --out DIR
                writes the whole page elsewhere; --check fails when the committed
                wasm is stale; needs the wasm32-unknown-unknown target
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("regen-proto") => regen_proto::run(&workspace_root(), &args[1..]),
        Some("bench") => bench::run(&workspace_root(), &args[1..]).map_err(Into::into),
        Some("fuzz") => fuzz::run(&workspace_root(), &args[1..]).map_err(Into::into),
        Some("web") => web::run_web(&workspace_root(), &args[1..]),
        Some("help" | "-h" | "--help") => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Some(other) => {
            eprint!("unknown command {other:?}\n\n{USAGE}");
            return ExitCode::from(2);
        }
        None => {
            eprint!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

/// The workspace root: the parent of this crate's directory.
fn workspace_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.parent().unwrap_or(here).to_path_buf()
}
