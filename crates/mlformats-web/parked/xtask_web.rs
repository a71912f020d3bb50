//! `cargo xtask web [--out DIR]`: builds the viewer page into a folder any
//! static host can serve (default `crates/mlformats-web/dist/`, which the CLI
//! embeds for `mlformats view`).
//!
//! 1. `cargo build -p mlformats-web --target wasm32-unknown-unknown` in a
//!    size-optimised profile, with the machine's paths remapped out of the
//!    module (its panic messages name source files);
//! 2. `wasm-bindgen --target web` (the `wasm-bindgen-cli` of the version in
//!    Cargo.lock: `cargo install wasm-bindgen-cli --version V`) writes the
//!    module and its JavaScript glue into `pkg/`;
//! 3. the page's own files (`crates/mlformats-web/www/`) are copied beside it.

use std::path::{Path, PathBuf};
use std::process::Command;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// The wasm-bindgen version Cargo.lock pins (the CLI must be the same).
pub fn wasm_bindgen_version(root: &Path) -> Result<String> {
    let lock = std::fs::read_to_string(root.join("Cargo.lock"))?;
    let mut lines = lock.lines();
    while let Some(l) = lines.next() {
        if l == "name = \"wasm-bindgen\"" {
            if let Some(v) = lines.next().and_then(|v| v.strip_prefix("version = \"")) {
                return Ok(v.trim_end_matches('"').to_string());
            }
        }
    }
    Err("Cargo.lock has no wasm-bindgen".into())
}

fn run(cmd: &mut Command) -> Result<()> {
    let status = cmd.status().map_err(|e| format!("{cmd:?}: {e}"))?;
    if !status.success() {
        return Err(format!("{cmd:?} failed ({status})").into());
    }
    Ok(())
}

pub fn run_web(root: &Path, args: &[String]) -> Result<()> {
    let mut out = root.join("crates/mlformats-web/dist");
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--out" => out = PathBuf::from(it.next().ok_or("--out needs a folder")?),
            other => return Err(format!("web: unknown argument {other:?}").into()),
        }
    }
    let version = wasm_bindgen_version(root)?;
    let have = Command::new("wasm-bindgen")
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    if have.as_deref() != Some(&format!("wasm-bindgen {version}")) {
        return Err(format!(
            "wasm-bindgen {version} is needed (found {}): cargo install wasm-bindgen-cli --version {version}",
            have.as_deref().unwrap_or("none")
        )
        .into());
    }

    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let home = std::env::var("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|_| std::env::var("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .unwrap_or_default();
    let rustflags = format!(
        "--remap-path-prefix={}=/cargo --remap-path-prefix={}=/mlformats",
        home.display(),
        root.display()
    );
    run(Command::new(&cargo)
        .current_dir(root)
        .env("RUSTFLAGS", rustflags)
        .args(["build", "--locked", "-p", "mlformats-web"])
        .args(["--target", "wasm32-unknown-unknown", "--profile", "web"])
        .args(["--config", "profile.web.inherits=\"release\""])
        .args(["--config", "profile.web.opt-level=\"s\""])
        .args(["--config", "profile.web.lto=true"])
        .args(["--config", "profile.web.codegen-units=1"])
        .args(["--config", "profile.web.panic=\"abort\""])
        .args(["--config", "profile.web.debug=false"])
        .args(["--config", "profile.web.strip=true"]))?;
    let wasm = root.join("target/wasm32-unknown-unknown/web/mlformats_web.wasm");

    let pkg = out.join("pkg");
    if pkg.exists() {
        std::fs::remove_dir_all(&pkg)?;
    }
    std::fs::create_dir_all(&pkg)?;
    run(Command::new("wasm-bindgen")
        .args(["--target", "web", "--no-typescript", "--out-dir"])
        .arg(&pkg)
        .arg(&wasm))?;
    let www = root.join("crates/mlformats-web/www");
    for entry in std::fs::read_dir(&www)? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            std::fs::copy(entry.path(), out.join(entry.file_name()))?;
        }
    }
    println!("the viewer is in {}", out.display());
    Ok(())
}
