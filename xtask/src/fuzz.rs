//! `cargo xtask fuzz --seconds N [--target T]... [--sanitizer address|none] [--list]`
//!
//! Builds the fuzz targets of `fuzz/` with `cargo fuzz build` (libFuzzer
//! needs nightly flags; `RUSTC_BOOTSTRAP=1` lets the stable toolchain accept
//! them), seeds `fuzz/corpus/<target>/` from `testdata/` (and from
//! `testdata/fuzz-regressions/<target>/`), then runs every target for N
//! seconds, one after the other, with
//! `-rss_limit_mb=2048 -malloc_limit_mb=512 -timeout=10`.
//!
//! A crash (panic, sanitizer report), a timeout or an out-of-memory in any
//! target makes the command fail; the input that did it is in
//! `fuzz/artifacts/<target>/`. For each target it prints libFuzzer's final
//! `#N DONE cov: X ft: Y` figures. It fails too when the fuzz toolchain
//! (cargo-fuzz) is missing: it never reports success without fuzzing.

use std::collections::BTreeSet;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// Seeds larger than this are left out: libFuzzer's `-max_len` defaults to
/// the largest seed, and a megabyte-long input only slows mutation down.
const MAX_SEED: u64 = 128 * 1024;

/// Limits every run uses. 512 MiB for one allocation and 2 GiB in total
/// are far above what any seed (≤ 128 KiB) justifies, and far below what a
/// reader that trusts a claimed length would ask for.
const LIBFUZZER_FLAGS: [&str; 4] = [
    "-rss_limit_mb=2048",
    "-malloc_limit_mb=512",
    "-timeout=10",
    "-print_final_stats=1",
];

const USAGE: &str =
    "usage: cargo xtask fuzz --seconds N [--target T]... [--sanitizer address|none] [--list]";

struct Args {
    seconds: u64,
    targets: Vec<String>,
    sanitizer: String,
    list: bool,
}

fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut a = Args {
        seconds: 0,
        targets: Vec::new(),
        sanitizer: "address".into(),
        list: false,
    };
    let mut seconds = None;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value\n{USAGE}"))
        };
        match arg.as_str() {
            "--seconds" | "-s" => {
                let v = value("--seconds")?;
                seconds = Some(
                    v.parse::<u64>()
                        .ok()
                        .filter(|&n| n > 0)
                        .ok_or_else(|| format!("--seconds {v:?}: a positive whole number"))?,
                );
            }
            "--target" | "-t" => a.targets.push(value("--target")?),
            "--sanitizer" => a.sanitizer = value("--sanitizer")?,
            "--list" => a.list = true,
            "-h" | "--help" => return Err(USAGE.into()),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    if !a.list {
        a.seconds = seconds.ok_or_else(|| format!("--seconds is required\n{USAGE}"))?;
    }
    if !["address", "none"].contains(&a.sanitizer.as_str()) {
        return Err(format!("--sanitizer {:?}: address or none", a.sanitizer));
    }
    Ok(a)
}

/// The fuzz targets: the `[[bin]]` names of `fuzz/Cargo.toml`.
fn targets(root: &Path) -> Result<Vec<String>, String> {
    let toml = fs::read_to_string(root.join("fuzz/Cargo.toml"))
        .map_err(|e| format!("fuzz/Cargo.toml: {e}"))?;
    let mut out = Vec::new();
    let mut in_bin = false;
    for line in toml.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_bin = line == "[[bin]]";
        } else if in_bin && let Some(rest) = line.strip_prefix("name") {
            let name = rest
                .trim_start()
                .trim_start_matches('=')
                .trim()
                .trim_matches('"');
            out.push(name.to_string());
        }
    }
    if out.is_empty() {
        return Err("fuzz/Cargo.toml lists no [[bin]] targets".into());
    }
    Ok(out)
}

/// Which testdata files seed a target.
fn seeds_for(target: &str, file: &Path) -> bool {
    let ext = file
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    if matches!(ext.as_str(), "json" | "md" | "txt") {
        return false;
    }
    let under = |dir: &str| file.components().any(|c| c.as_os_str() == dir);
    match target {
        "cvm_params" => ext == "params",
        "nnabla_text" => matches!(ext.as_str(), "nntxt" | "prototxt"),
        "nnabla_binary" => matches!(ext.as_str(), "protobuf" | "pb"),
        "nnabla_h5" => ext == "h5",
        "nnp" => ext == "nnp",
        "tennis_module" => ext == "tsm",
        "onnx_import" => ext == "onnx" && under("translate"),
        "graph_export" => matches!(ext.as_str(), "nnp" | "nntxt" | "protobuf" | "tsm"),
        "inspect" => !under("shapes"),
        // programs that build hostile shapes (fuzz/src/shapes.rs)
        "zip_shapes" | "nesting" | "h5_shapes" => under("shapes") && under(target),
        t if t.starts_with("primitiv_") => {
            if !under("primitiv") {
                return false;
            }
            // The data type code is the big-endian u32 after `0xce` at byte 10;
            // a file without a known one (a hostile reader case) seeds every type.
            let want = match t {
                "primitiv_shape" => 0u32,
                "primitiv_tensor" => 0x100,
                "primitiv_parameter" => 0x200,
                "primitiv_model" => 0x300,
                "primitiv_optimizer" => 0x400,
                _ => return false,
            };
            match fs::read(file).ok().and_then(|b| primitiv_code(&b)) {
                Some(code) => code == want,
                None => true,
            }
        }
        _ => false,
    }
}

fn primitiv_code(b: &[u8]) -> Option<u32> {
    if b.len() < 15 || b[10] != 0xce {
        return None;
    }
    let code = u32::from_be_bytes([b[11], b[12], b[13], b[14]]);
    [0, 0x100, 0x200, 0x300, 0x400]
        .contains(&code)
        .then_some(code)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// Copies the seeds of `target` into `fuzz/corpus/<target>/` (keeping what
/// earlier runs found there); returns how many seeds it holds.
fn seed_corpus(root: &Path, target: &str) -> Result<usize, String> {
    let corpus = root.join("fuzz/corpus").join(target);
    fs::create_dir_all(&corpus).map_err(|e| format!("{}: {e}", corpus.display()))?;
    let mut files = Vec::new();
    let testdata = root.join("testdata");
    let regressions = testdata.join("fuzz-regressions");
    let mut all = Vec::new();
    walk(&testdata, &mut all);
    for f in all {
        if f.starts_with(&regressions) {
            continue;
        }
        if seeds_for(target, &f) {
            files.push(f);
        }
    }
    walk(&regressions.join(target), &mut files);
    let mut n = 0;
    for f in files {
        let Ok(meta) = fs::metadata(&f) else { continue };
        if meta.len() > MAX_SEED {
            continue;
        }
        let rel = f.strip_prefix(root).unwrap_or(&f);
        let name = format!("seed-{}", rel.to_string_lossy().replace(['/', '\\'], "__"));
        fs::copy(&f, corpus.join(name)).map_err(|e| format!("{}: {e}", f.display()))?;
        n += 1;
    }
    Ok(n)
}

fn host_triple() -> Result<String, String> {
    let out = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
        .arg("-vV")
        .output()
        .map_err(|e| format!("running rustc -vV: {e}"))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .ok_or_else(|| "rustc -vV printed no host triple".into())
}

fn check_cargo_fuzz() -> Result<(), String> {
    match Command::new("cargo")
        .args(["fuzz", "--version"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
    {
        Ok(o) if o.status.success() => Ok(()),
        _ => Err("cargo-fuzz is not available; install it with \
                  `cargo install cargo-fuzz --locked` (fuzzing needs it; nothing was run)"
            .into()),
    }
}

/// What one run of one target gave.
struct Outcome {
    target: String,
    seeds: usize,
    ok: bool,
    problem: Option<String>,
    done_line: Option<String>,
    execs: Option<u64>,
    cov: Option<u64>,
    ft: Option<u64>,
    corpus: Option<String>,
    seconds: f64,
    artifact: Option<String>,
}

fn field(line: &str, key: &str) -> Option<u64> {
    let mut words = line.split_whitespace();
    while let Some(w) = words.next() {
        if w == key {
            return words.next()?.parse().ok();
        }
    }
    None
}

fn run_target(root: &Path, bin: &Path, target: &str, seconds: u64, seeds: usize) -> Outcome {
    let corpus = root.join("fuzz/corpus").join(target);
    let artifacts = root.join("fuzz/artifacts").join(target);
    let _ = fs::create_dir_all(&artifacts);
    let log_path = artifacts.join("last-run.log");
    let mut outcome = Outcome {
        target: target.to_string(),
        seeds,
        ok: false,
        problem: None,
        done_line: None,
        execs: None,
        cov: None,
        ft: None,
        corpus: None,
        seconds: 0.0,
        artifact: None,
    };
    println!("\n--- fuzz {target}: {seconds} s, {seeds} seeds");
    let start = Instant::now();
    let mut cmd = Command::new(bin);
    cmd.arg(format!("-max_total_time={seconds}"))
        .args(LIBFUZZER_FLAGS)
        .arg(format!("-artifact_prefix={}/", artifacts.display()))
        .arg(&corpus)
        .current_dir(root)
        .env("RUST_BACKTRACE", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            outcome.problem = Some(format!("cannot run {}: {e}", bin.display()));
            return outcome;
        }
    };
    let mut log = Vec::new();
    let mut report = Vec::new();
    let mut in_report = false;
    if let Some(stderr) = child.stderr.take() {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.starts_with('#') && line.split_whitespace().nth(1) == Some("DONE") {
                outcome.execs = line
                    .split_whitespace()
                    .next()
                    .and_then(|w| w.trim_start_matches('#').parse().ok());
                outcome.cov = field(&line, "cov:");
                outcome.ft = field(&line, "ft:");
                outcome.corpus = line
                    .split_whitespace()
                    .skip_while(|w| *w != "corp:")
                    .nth(1)
                    .map(str::to_string);
                outcome.done_line = Some(line.clone());
            }
            let problem = [
                ("ERROR: libFuzzer: deadly signal", "crash"),
                ("ERROR: libFuzzer: timeout", "timeout"),
                ("ERROR: libFuzzer: out-of-memory", "out-of-memory"),
                ("ERROR: libFuzzer: fuzz target exited", "exit"),
                ("ERROR: libFuzzer: leak", "leak"),
                ("ERROR: AddressSanitizer", "sanitizer report"),
                ("==ERROR: LeakSanitizer", "leak"),
            ]
            .iter()
            .find(|(m, _)| line.contains(m));
            if let Some((_, what)) = problem {
                outcome.problem.get_or_insert_with(|| what.to_string());
                in_report = true;
            }
            if line.contains("panicked at") {
                outcome.problem.get_or_insert_with(|| "panic".into());
                in_report = true;
            }
            if let Some(rest) = line.split("Test unit written to ").nth(1) {
                outcome.artifact = Some(rest.trim().to_string());
            }
            if in_report && report.len() < 40 {
                report.push(line.clone());
            }
            if line.starts_with("#") && (line.contains(" pulse ") || line.contains(" INITED ")) {
                println!("  {line}");
            }
            log.push(line);
        }
    }
    let status = child.wait();
    outcome.seconds = start.elapsed().as_secs_f64();
    let _ = fs::write(&log_path, log.join("\n") + "\n");
    let success = matches!(&status, Ok(s) if s.success());
    if !success && outcome.problem.is_none() {
        outcome.problem = Some(match &status {
            Ok(s) => format!("libFuzzer exited with {s}"),
            Err(e) => format!("waiting for libFuzzer: {e}"),
        });
    }
    if success && outcome.done_line.is_none() {
        outcome.problem = Some("libFuzzer printed no final `DONE` line".into());
    }
    outcome.ok = outcome.problem.is_none();
    match &outcome.done_line {
        Some(l) => println!("  {l}"),
        None => println!("  (no final DONE line; full log in {})", log_path.display()),
    }
    if !outcome.ok {
        println!("  FAILED: {}", outcome.problem.as_deref().unwrap_or("?"));
        for l in &report {
            println!("  | {l}");
        }
        if let Some(a) = &outcome.artifact {
            println!("  input: {a}");
            println!("  reproduce: {} {a}", bin.display());
            println!("  keep it as a regression: cp {a} testdata/fuzz-regressions/{target}/<name>");
        }
        println!("  full log: {}", log_path.display());
    }
    outcome
}

/// Runs the command.
pub fn run(root: &Path, args: &[String]) -> Result<(), String> {
    let args = parse_args(args)?;
    let all = targets(root)?;
    if args.list {
        for t in &all {
            println!("{t}");
        }
        return Ok(());
    }
    let chosen: Vec<String> = if args.targets.is_empty() {
        all.clone()
    } else {
        let known: BTreeSet<&String> = all.iter().collect();
        for t in &args.targets {
            if !known.contains(t) {
                return Err(format!(
                    "unknown fuzz target {t:?}; targets: {}",
                    all.join(", ")
                ));
            }
        }
        args.targets.clone()
    };
    check_cargo_fuzz()?;
    let triple = host_triple()?;

    println!(
        "=== building {} fuzz target(s) (cargo fuzz build, sanitizer {}, RUSTC_BOOTSTRAP=1)",
        chosen.len(),
        args.sanitizer
    );
    let mut build = Command::new("cargo");
    build
        .args(["fuzz", "build", "--sanitizer", &args.sanitizer])
        .current_dir(root)
        .env("RUSTC_BOOTSTRAP", "1");
    if chosen.len() == 1 {
        build.arg(&chosen[0]);
    }
    let st = build
        .status()
        .map_err(|e| format!("running cargo fuzz build: {e}"))?;
    if !st.success() {
        return Err(format!("cargo fuzz build failed ({st})"));
    }
    let bin_dir = root.join("fuzz/target").join(&triple).join("release");

    let mut outcomes = Vec::new();
    for t in &chosen {
        let seeds = seed_corpus(root, t)?;
        let bin = bin_dir.join(t);
        outcomes.push(run_target(root, &bin, t, args.seconds, seeds));
    }

    println!(
        "\n=== fuzz summary ({} s per target, sanitizer {})",
        args.seconds, args.sanitizer
    );
    println!(
        "{:<20} {:>7} {:>12} {:>7} {:>7} {:>14} {:>7}  result",
        "target", "seeds", "execs", "cov", "ft", "corpus", "secs"
    );
    let show = |v: Option<u64>| v.map_or_else(|| "-".to_string(), |n| n.to_string());
    for o in &outcomes {
        println!(
            "{:<20} {:>7} {:>12} {:>7} {:>7} {:>14} {:>7.0}  {}",
            o.target,
            o.seeds,
            show(o.execs),
            show(o.cov),
            show(o.ft),
            o.corpus.as_deref().unwrap_or("-"),
            o.seconds,
            if o.ok {
                "ok".to_string()
            } else {
                format!(
                    "FAILED: {}{}",
                    o.problem.as_deref().unwrap_or("?"),
                    o.artifact
                        .as_deref()
                        .map(|a| format!(" ({a})"))
                        .unwrap_or_default()
                )
            }
        );
    }
    let failed: Vec<&str> = outcomes
        .iter()
        .filter(|o| !o.ok)
        .map(|o| o.target.as_str())
        .collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("fuzzing found problems in: {}", failed.join(", ")))
    }
}
