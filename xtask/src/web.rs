//! `cargo xtask web [--out DIR]`: builds the viewer page into a folder any
//! static host can serve (default `crates/mlformats/web/`, which the CLI
//! embeds for `mlformats view`).
//!
//! 1. `cargo build -p mlformats-web --target wasm32-unknown-unknown` in a
//!    size-optimised profile (`panic = "abort"`), with the machine's paths
//!    remapped out of the module (its panic messages name source files);
//! 2. the module (`mlformats_web.wasm`) and the page's own files
//!    (`crates/mlformats-web/www/`: HTML, CSS and JavaScript, among them the
//!    hand-written loader `mlformats.js`) are copied into the folder.
//!
//! It needs cargo and the target only (`rustup target add
//! wasm32-unknown-unknown`): no wasm-bindgen, no npm.

use std::path::{Path, PathBuf};
use std::process::Command;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// The files of the built page, in the order the CLI embeds them.
pub const FILES: &[&str] = &[
    "index.html",
    "app.js",
    "layout.js",
    "mlformats.js",
    "worker.js",
    "style.css",
    "mlformats_web.wasm",
];

fn run(cmd: &mut Command) -> Result<()> {
    let status = cmd.status().map_err(|e| format!("{cmd:?}: {e}"))?;
    if !status.success() {
        return Err(format!("{cmd:?} failed ({status})").into());
    }
    Ok(())
}

pub fn run_web(root: &Path, args: &[String]) -> Result<()> {
    let mut out = root.join("crates/mlformats/web");
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--out" => out = PathBuf::from(it.next().ok_or("--out needs a folder")?),
            other => return Err(format!("web: unknown argument {other:?}").into()),
        }
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let home = std::env::var("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|_| std::env::var("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .unwrap_or_default();
    let rustup = std::env::var("RUSTUP_HOME")
        .map(PathBuf::from)
        .or_else(|_| std::env::var("HOME").map(|h| PathBuf::from(h).join(".rustup")))
        .unwrap_or_default();
    let rustflags = format!(
        "--remap-path-prefix={}=/cargo --remap-path-prefix={}=/rustup --remap-path-prefix={}=/mlformats",
        home.display(),
        rustup.display(),
        root.display()
    );
    run(Command::new(&cargo)
        .current_dir(root)
        .env("RUSTFLAGS", rustflags)
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .args(["build", "--locked", "-p", "mlformats-web"])
        .args(["--target", "wasm32-unknown-unknown", "--profile", "web"])
        .args(["--config", "profile.web.inherits=\"release\""])
        .args(["--config", "profile.web.opt-level=\"s\""])
        .args(["--config", "profile.web.lto=\"thin\""])
        .args(["--config", "profile.web.codegen-units=16"])
        .args(["--config", "profile.web.panic=\"abort\""])
        .args(["--config", "profile.web.debug=false"])
        .args(["--config", "profile.web.strip=true"]))?;
    let target = std::env::var("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join("target"));
    let wasm = target.join("wasm32-unknown-unknown/web/mlformats_web.wasm");

    std::fs::create_dir_all(&out)?;
    let www = root.join("crates/mlformats-web/www");
    for name in FILES {
        let from = if *name == "mlformats_web.wasm" {
            wasm.clone()
        } else {
            www.join(name)
        };
        // read and write, not copy: the page's files get the umask's
        // permissions (cargo makes the wasm executable)
        let bytes = std::fs::read(&from).map_err(|e| format!("{}: {e}", from.display()))?;
        let to = out.join(name);
        let _ = std::fs::remove_file(&to);
        std::fs::write(&to, bytes).map_err(|e| format!("{}: {e}", to.display()))?;
    }
    println!("the viewer is in {}", out.display());
    Ok(())
}
