//! `cargo xtask web [--out DIR] [--check]`: builds the viewer page into a
//! folder any static host can serve.
//!
//! The page's own files (HTML, CSS and JavaScript, among them the
//! hand-written loader `mlformats.js`) live in one place,
//! `crates/mlformats/web/`, which the CLI embeds for `mlformats view`. The
//! module `mlformats_web.wasm` beside them is a build artifact:
//!
//! 1. `cargo build -p mlformats-web --target wasm32-unknown-unknown` in a
//!    size-optimised profile (`panic = "abort"`), with the machine's paths
//!    remapped out of the module (its panic messages name source files);
//! 2. the module is written into the folder (by default
//!    `crates/mlformats/web/`; with `--out DIR` the page's files are copied
//!    there too), and, in `crates/mlformats/web/`, `mlformats_web.inputs`
//!    records the sha256 of what it was built from (the toolchain, the
//!    lockfile and manifests, the sources of every workspace crate the module
//!    links, this file's build flags) and of the module itself.
//!
//! `--check` builds nothing: it fails when the committed module is stale,
//! i.e. its inputs' hash or its own differ from the record (CI runs it).
//!
//! It needs cargo and the target only (`rustup target add
//! wasm32-unknown-unknown`): no wasm-bindgen, no npm.

use std::path::{Path, PathBuf};
use std::process::Command;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// Where the page's files live and the CLI embeds them from.
const PAGE: &str = "crates/mlformats/web";

/// The record of the module's inputs, beside the module.
const RECORD: &str = "mlformats_web.inputs";

/// The files of the built page, in the order the CLI embeds them.
pub const FILES: &[&str] = &[
    "index.html",
    "app.js",
    "mlformats.js",
    "remote.js",
    "drawing.js",
    "graphview.js",
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
    let page = root.join(PAGE);
    let mut out = page.clone();
    let mut check = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--out" => out = PathBuf::from(it.next().ok_or("--out needs a folder")?),
            "--check" => check = true,
            other => return Err(format!("web: unknown argument {other:?}").into()),
        }
    }
    if check {
        return check_fresh(root);
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
    let into_page = same_dir(&out, &page);
    for name in FILES {
        let from = if *name == "mlformats_web.wasm" {
            wasm.clone()
        } else if into_page {
            continue;
        } else {
            page.join(name)
        };
        // read and write, not copy: the page's files get the umask's
        // permissions (cargo makes the wasm executable)
        let bytes = std::fs::read(&from).map_err(|e| format!("{}: {e}", from.display()))?;
        let to = out.join(name);
        let _ = std::fs::remove_file(&to);
        std::fs::write(&to, bytes).map_err(|e| format!("{}: {e}", to.display()))?;
    }
    if into_page {
        let record = Record {
            inputs: inputs_hash(root)?,
            wasm: sha256_file(&page.join("mlformats_web.wasm"))?,
        };
        std::fs::write(page.join(RECORD), record.to_text())?;
    }
    println!("the viewer is in {}", out.display());
    Ok(())
}

/// Whether two folders are one (both exist; compared canonically).
fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// `--check`: the committed module was built from the inputs of this tree.
fn check_fresh(root: &Path) -> Result<()> {
    let page = root.join(PAGE);
    let path = page.join(RECORD);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "{}: {e} (`cargo xtask web` writes it with the module)",
            path.display()
        )
    })?;
    let record = Record::parse(&text).ok_or_else(|| format!("{}: not a record", path.display()))?;
    let wasm = sha256_file(&page.join("mlformats_web.wasm"))?;
    if wasm != record.wasm {
        return Err(format!(
            "{PAGE}/mlformats_web.wasm is not the module {RECORD} records \
             (sha256 {wasm}, recorded {}): run `cargo xtask web` and commit",
            record.wasm
        )
        .into());
    }
    let inputs = inputs_hash(root)?;
    if inputs != record.inputs {
        return Err(format!(
            "{PAGE}/mlformats_web.wasm is stale: its inputs changed since it was built \
             (sha256 {inputs}, recorded {}): run `cargo xtask web` and commit",
            record.inputs
        )
        .into());
    }
    println!("{PAGE}/mlformats_web.wasm is fresh (inputs {inputs})");
    Ok(())
}

/// What `mlformats_web.inputs` says.
struct Record {
    /// sha256 of the module's inputs ([`inputs_hash`]).
    inputs: String,
    /// sha256 of the module.
    wasm: String,
}

impl Record {
    fn to_text(&self) -> String {
        format!(
            "# written by `cargo xtask web`; checked by `cargo xtask web --check`\n\
             inputs {}\nwasm {}\n",
            self.inputs, self.wasm
        )
    }

    fn parse(text: &str) -> Option<Record> {
        let field = |key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(key)?.strip_prefix(' '))
                .map(str::to_string)
        };
        Some(Record {
            inputs: field("inputs")?,
            wasm: field("wasm")?,
        })
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn sha256_file(path: &Path) -> Result<String> {
    use sha2::Digest;
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(hex(&sha2::Sha256::digest(&bytes)))
}

/// sha256 over what the module is built from: `rustc -V`, the root
/// `Cargo.toml` and `Cargo.lock`, this file (the build flags), and for every
/// workspace crate the module links (`cargo tree`) its `Cargo.toml`,
/// `build.rs` and every file under `src/`, each as its path relative to
/// the root and its bytes, in path order.
fn inputs_hash(root: &Path) -> Result<String> {
    use sha2::Digest;
    let mut files = vec![
        PathBuf::from("Cargo.toml"),
        PathBuf::from("Cargo.lock"),
        PathBuf::from("xtask/src/web.rs"),
    ];
    for dir in linked_crates(root)? {
        for name in ["Cargo.toml", "build.rs"] {
            if root.join(&dir).join(name).is_file() {
                files.push(dir.join(name));
            }
        }
        walk(root, &dir.join("src"), &mut files)?;
    }
    files.sort();
    files.dedup();
    let mut h = sha2::Sha256::new();
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = Command::new(&rustc).arg("-V").output()?;
    h.update(&version.stdout);
    for f in &files {
        let rel = f.to_string_lossy().replace('\\', "/");
        let bytes = std::fs::read(root.join(f)).map_err(|e| format!("{rel}: {e}"))?;
        h.update((rel.len() as u64).to_le_bytes());
        h.update(rel.as_bytes());
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
    Ok(hex(&h.finalize()))
}

/// The folders (relative to `root`) of the workspace crates the wasm module
/// links, as `cargo tree` lists them for its target.
fn linked_crates(root: &Path) -> Result<Vec<PathBuf>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(&cargo)
        .current_dir(root)
        .args(["tree", "--locked", "-p", "mlformats-web"])
        .args(["--target", "wasm32-unknown-unknown", "-e", "normal,build"])
        .args(["--prefix", "none", "-f", "{p}"])
        .output()?;
    if !out.status.success() {
        return Err(format!(
            "cargo tree failed: {}",
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    let canon = root.canonicalize()?;
    let mut dirs = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Some(open) = line.find(" (") else {
            continue;
        };
        let rest = &line[open + 2..];
        let Some(close) = rest.find(')') else {
            continue;
        };
        let dir = PathBuf::from(&rest[..close]);
        if let Ok(rel) = dir.strip_prefix(&canon).or_else(|_| dir.strip_prefix(root)) {
            dirs.push(rel.to_path_buf());
        }
    }
    dirs.sort();
    dirs.dedup();
    if dirs.is_empty() {
        return Err("cargo tree listed no workspace crate for mlformats-web".into());
    }
    Ok(dirs)
}

/// Every file under `dir` (relative to `root`), recursively.
fn walk(root: &Path, dir: &Path, files: &mut Vec<PathBuf>) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
        return Ok(());
    };
    for e in entries {
        let e = e?;
        let rel = dir.join(e.file_name());
        if e.file_type()?.is_dir() {
            walk(root, &rel, files)?;
        } else {
            files.push(rel);
        }
    }
    Ok(())
}
