//! Hostile files through every command, as a server that lists the tensors
//! of uploaded models would run them: under `ulimit -v` (1 GiB of address
//! space), each command must end with a result or an error message (exit
//! 0, 1 or 2), never an abort (SIGABRT from a failed allocation), a kill
//! or a hang (a watchdog kills a run after 120 s, which fails the test;
//! the commands take seconds).
//!
//! The files are built here, on purpose (the builders are the fuzz
//! targets' own, `fuzz/src/shapes.rs`): decompression bombs in `.npz`,
//! many names for one member, a member declaring 4 GiB, documents nested
//! 65,535 levels deep, a TenniS module of a million nodes; and the crafted
//! files of `testdata/hostile/`.

mod common;

#[path = "../../../fuzz/src/shapes.rs"]
#[allow(dead_code)]
mod shapes;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use shapes::{Entry, Member, npy_header, zip};

/// 1 GiB of address space, in KiB for `ulimit -v`.
const ADDRESS_SPACE_KIB: u64 = 1 << 20;

/// Runs `mlformats ARGS` under `ulimit -v`; returns (exit code, stderr).
/// Fails on a signal or on the watchdog.
fn run_bounded(args: &[&str]) -> (i32, String) {
    let script = format!("ulimit -v {ADDRESS_SPACE_KIB} && exec \"$0\" \"$@\"");
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_mlformats"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sh runs");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("mlformats {args:?} ran over 120 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut err);
    }
    let Some(code) = status.code() else {
        panic!("mlformats {args:?} was killed by a signal ({status}): {err}");
    };
    assert!(
        !err.contains("panicked"),
        "mlformats {args:?} panicked: {err}"
    );
    assert!(
        matches!(code, 0..=2),
        "mlformats {args:?} exited {code}: {err}"
    );
    // validate and diff answer 1 on stdout (invalid, different); any other
    // failure says why on stderr
    let asks = matches!(args.first(), Some(&"validate" | &"diff"));
    if code == 2 || (code == 1 && !asks) {
        assert!(err.contains("error"), "mlformats {args:?}: {err}");
    }
    (code, err)
}

/// Every reading command on `file` (as a user would run them), under the
/// bound; returns the stderr of `stats`, the command that reads all data.
fn every_command(file: &Path, first_tensor: Option<&str>) -> String {
    let f = file.to_str().expect("a UTF-8 temp path");
    let out = file.with_extension("out.safetensors");
    let o = out.to_str().expect("UTF-8");
    for args in [
        vec!["inspect", f],
        vec!["inspect", "--json", f],
        vec!["validate", f],
        vec!["convert", f, o, "--to", "safetensors"],
        vec!["diff", f, f],
        vec!["graph", f, "--to", "dot"],
    ] {
        run_bounded(&args);
    }
    if let Some(t) = first_tensor {
        run_bounded(&["show", f, &format!("{t}[0:4]")]);
    }
    run_bounded(&["stats", f]).1
}

/// An `.npz` of `members` deflated members, each `zeros` zeros behind a
/// `.npy` header for them as f32.
fn npz_of_zeros(dir: &Path, name: &str, members: usize, zeros: u64) -> PathBuf {
    let header = npy_header(&[zeros / 4]);
    let m: Vec<Member> = (0..members)
        .map(|i| Member::new(&format!("w{i}.npy"), &header, zeros, true))
        .collect();
    let e: Vec<Entry> = (0..members)
        .map(|i| Entry {
            member: i,
            name: format!("w{i}.npy"),
            size: None,
        })
        .collect();
    let p = dir.join(name);
    std::fs::write(&p, zip(&m, &e)).unwrap();
    p
}

#[test]
fn a_decompression_bomb_is_refused_and_its_headers_listed() {
    let dir = tempfile::tempdir().unwrap();
    // 16 members of 1 GiB of zeros each (6.8 MB of deflate matches each):
    // 16 GiB inflated in all
    let p = npz_of_zeros(dir.path(), "bomb.npz", 16, 1 << 30);
    let stats = every_command(&p, Some("w0"));
    assert!(stats.contains("inflat"), "{stats}");
    // the table needs the headers alone: it lists all 16
    let out = common::run_str(&["inspect", p.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("16 tensors"), "{text}");
    assert!(text.contains("w15"), "{text}");
    // trusted, a small member of the same shape reads as the zeros it holds
    let small = npz_of_zeros(dir.path(), "small.npz", 2, 4096);
    let out = common::run_str(&["show", small.to_str().unwrap(), "w1[1020:1024]"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains('0'));
}

#[test]
fn many_names_for_one_member_and_a_member_declaring_4_gib() {
    let dir = tempfile::tempdir().unwrap();
    let header = npy_header(&[(256 << 20) / 4]);
    let m = [Member::new("w.npy", &header, 256 << 20, true)];
    let e: Vec<Entry> = (0..1000)
        .map(|i| Entry {
            member: 0,
            name: format!("w{i}.npy"),
            size: None,
        })
        .collect();
    let p = dir.path().join("names.npz");
    std::fs::write(&p, zip(&m, &e)).unwrap();
    every_command(&p, Some("w0"));

    let header = npy_header(&[16]);
    let m = [Member::new("w.npy", &header, 64, true)];
    let e = [Entry {
        member: 0,
        name: "w.npy".into(),
        size: Some(u32::MAX),
    }];
    let p = dir.path().join("declares_4gib.npz");
    std::fs::write(&p, zip(&m, &e)).unwrap();
    every_command(&p, Some("w"));
}

#[test]
fn documents_nested_65535_deep_fail_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let onnx = dir.path().join("deep.onnx");
    std::fs::write(&onnx, shapes::nested_onnx(65_535)).unwrap();
    let st = dir.path().join("deep.safetensors");
    std::fs::write(&st, shapes::nested_safetensors(65_535)).unwrap();
    for p in [&onnx, &st] {
        let (code, err) = run_bounded(&["inspect", p.to_str().unwrap()]);
        assert_eq!(code, 1, "{err}");
        every_command(p, None);
    }
}

#[test]
fn a_tennis_module_of_a_million_nodes() {
    use mlformats::tennis::{ModuleBuilder, WriteOptions};
    let dir = tempfile::tempdir().unwrap();
    let mut b = ModuleBuilder::new();
    let mut x = b.input("x");
    for i in 0..1_000_000 {
        x = b.op("relu", &format!("r{i}"), &[x]).unwrap();
    }
    b.output(x).unwrap();
    let p = dir.path().join("million.tsm");
    b.build()
        .unwrap()
        .save(&p, &WriteOptions::default())
        .unwrap();
    let f = p.to_str().unwrap();
    let (code, err) = run_bounded(&["inspect", f]);
    assert!(code <= 1, "{err}");
    for args in [
        vec!["graph", f, "--to", "dot"],
        vec!["graph", f, "--to", "svg"],
        vec!["validate", f],
    ] {
        run_bounded(&args);
    }
}

#[test]
fn the_crafted_files_of_testdata_hostile() {
    let dir = common::testdata().join("hostile");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let p = e.path();
        let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
        if matches!(ext, "h5" | "npz" | "nnp" | "onnx" | "tsm" | "safetensors") {
            let tmp = tempfile::tempdir().unwrap();
            let copy = tmp.path().join(p.file_name().unwrap());
            std::fs::copy(&p, &copy).unwrap();
            every_command(&copy, None);
            n += 1;
        }
    }
    assert!(n > 0, "no crafted files in {}", dir.display());
}

#[test]
fn the_nested_builder_writes_models_onnx_reads() {
    // shallow: a valid model, its `If` chain as deep as asked
    for depth in [0, 1, 3, 30] {
        let bytes = shapes::nested_onnx(depth);
        let doc = mlformats::Document::from_bytes(bytes, Some(Path::new("x.onnx")), None)
            .unwrap_or_else(|e| panic!("depth {depth}: {e}"));
        let g = doc.graph().expect("a graph");
        assert_eq!(
            g.graphs[0].nodes.len(),
            usize::from(depth > 0),
            "depth {depth}"
        );
    }
    // deep: refused by the nesting bound, at once
    let e = mlformats::Document::from_bytes(shapes::nested_onnx(65_535), None, None).unwrap_err();
    assert!(mlformats::chain_message(&e).contains("nest"), "{e}");
}
