//! Outputs behave as in Unix tools: `-` is standard output, a symlink's
//! target is replaced (the link stays), a FIFO is written through (never
//! replaced), a replaced file keeps its permissions and owner, and nothing
//! else is written anywhere.
#![cfg(unix)]

mod common;

use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{run_str, testdata};

/// Runs `mlformats` in `dir` with stdout piped.
fn run_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mlformats"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("the mlformats binary runs")
}

fn ok(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn input() -> String {
    testdata()
        .join("cvm/two_entry.params")
        .to_str()
        .unwrap()
        .to_string()
}

/// The bytes `convert INPUT FILE --to FORMAT` writes to a file.
fn converted(format: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = run_str(&["convert", &input(), out.to_str().unwrap(), "--to", format]);
    ok(&o, format);
    fs::read(out).unwrap()
}

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn dash_writes_the_file_to_stdout_and_nothing_else() {
    // .nnp, .h5 and .npz are written by writers that seek
    for format in [
        "safetensors",
        "npz",
        "nnabla-h5",
        "nnabla-nnp",
        "cvm-params",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let o = run_in(dir.path(), &["convert", &input(), "-", "--to", format]);
        ok(&o, format);
        assert!(
            o.stdout == converted(format),
            "{format}: {} bytes",
            o.stdout.len()
        );
        let said = String::from_utf8_lossy(&o.stderr);
        assert!(
            said.starts_with(&format!("-: wrote 2 tensors (cvm-params -> {format}"))
                && said.ends_with(")\n")
                && said.lines().count() == 1,
            "{said}"
        );
        assert!(entries(dir.path()).is_empty(), "{:?}", entries(dir.path()));
    }
    // --json goes to stderr too
    let dir = tempfile::tempdir().unwrap();
    let o = run_in(
        dir.path(),
        &["convert", &input(), "-", "--to", "npz", "--json"],
    );
    ok(&o, "--json");
    assert!(o.stdout == converted("npz"));
    let json: serde_json::Value = serde_json::from_slice(&o.stderr).unwrap();
    assert_eq!(json["tensors"], 2, "{json}");
    // and --quiet says nothing
    let o = run_in(dir.path(), &["convert", &input(), "-", "--to", "npz", "-q"]);
    ok(&o, "-q");
    assert!(o.stderr.is_empty());
    assert!(entries(dir.path()).is_empty());
}

#[test]
fn dash_needs_to_and_a_failure_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let o = run_in(dir.path(), &["convert", &input(), "-"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with("error: -: standard output has no extension") && err.contains("--to"),
        "{err}"
    );
    assert!(o.stdout.is_empty());
    // a conversion that fails writes nothing to stdout
    let o = run_in(
        dir.path(),
        &[
            "convert",
            &input(),
            "-",
            "--to",
            "npz",
            "--only",
            "nothing*",
        ],
    );
    assert!(!o.status.success());
    assert!(o.stdout.is_empty(), "{} bytes", o.stdout.len());
    assert!(entries(dir.path()).is_empty());
}

#[test]
fn graph_dash_o_writes_to_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let file = testdata().join("nnabla/mlp.nntxt");
    let file = file.to_str().unwrap();
    let plain = run_in(dir.path(), &["graph", file]);
    ok(&plain, "graph");
    let dash = run_in(dir.path(), &["graph", file, "-o", "-"]);
    ok(&dash, "graph -o -");
    assert!(plain.stdout.starts_with(b"digraph"));
    assert_eq!(plain.stdout, dash.stdout);
    assert!(entries(dir.path()).is_empty());
}

#[test]
fn a_pipe_named_by_proc_self_fd_stands_for_dev_stdout() {
    // what `/dev/stdout` leads to when stdout is a pipe (the real
    // /dev/stdout is never used in a test: a broken writer would replace it)
    if !Path::new("/proc/self/fd").is_dir() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let o = run_in(
        dir.path(),
        &[
            "convert",
            &input(),
            "/proc/self/fd/1",
            "--to",
            "safetensors",
            "-q",
        ],
    );
    ok(&o, "/proc/self/fd/1");
    assert!(o.stdout == converted("safetensors"));
    assert!(entries(dir.path()).is_empty());
}

fn mkfifo(path: &Path) {
    let st = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(st.success());
}

fn read_in_thread(path: &Path) -> std::thread::JoinHandle<Vec<u8>> {
    let path = path.to_path_buf();
    std::thread::spawn(move || fs::read(path).unwrap())
}

#[test]
fn a_fifo_and_a_symlink_to_it_are_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    let stdout = dir.path().join("stdout");
    symlink("fifo", &stdout).unwrap();
    for (out, format) in [
        (&fifo, "npz"),
        (&stdout, "safetensors"),
        (&stdout, "nnabla-h5"),
    ] {
        let reader = read_in_thread(&fifo);
        let o = run_in(
            dir.path(),
            &["convert", &input(), out.to_str().unwrap(), "--to", format],
        );
        ok(&o, format);
        assert!(reader.join().unwrap() == converted(format), "{format}");
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        assert!(
            fs::symlink_metadata(&stdout)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(entries(dir.path()), ["fifo", "stdout"]);
    }
}

/// The effective user id of this test (the owner of a file it creates).
fn euid(dir: &Path) -> u32 {
    let p = dir.join(".euid");
    fs::write(&p, b"").unwrap();
    let uid = fs::metadata(&p).unwrap().uid();
    fs::remove_file(&p).unwrap();
    uid
}

#[test]
fn a_symlinked_0600_file_is_replaced_keeping_the_link_mode_and_owner() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("keep");
    fs::create_dir(&sub).unwrap();
    let real = sub.join("model.safetensors");
    fs::write(&real, b"old").unwrap();
    fs::set_permissions(&real, fs::Permissions::from_mode(0o600)).unwrap();
    if euid(dir.path()) == 0 {
        std::os::unix::fs::chown(&real, Some(1234), Some(5678)).unwrap();
    }
    let before = fs::metadata(&real).unwrap();
    let link = dir.path().join("link.safetensors");
    symlink("keep/model.safetensors", &link).unwrap();
    let o = run_in(dir.path(), &["convert", &input(), "link.safetensors"]);
    ok(&o, "link");
    assert!(fs::read(&real).unwrap() == converted("safetensors"));
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let after = fs::metadata(&real).unwrap();
    assert_eq!(after.mode() & 0o7777, 0o600);
    assert_eq!((after.uid(), after.gid()), (before.uid(), before.gid()));
    assert_eq!(entries(dir.path()), ["keep", "link.safetensors"]);
    assert_eq!(entries(&sub), ["model.safetensors"]);
}

#[test]
fn a_dangling_symlink_gets_its_file() {
    let dir = tempfile::tempdir().unwrap();
    symlink("made.npz", dir.path().join("link.npz")).unwrap();
    let o = run_in(dir.path(), &["convert", &input(), "link.npz"]);
    ok(&o, "dangling");
    assert!(fs::read(dir.path().join("made.npz")).unwrap() == converted("npz"));
    assert!(
        fs::symlink_metadata(dir.path().join("link.npz"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(entries(dir.path()), ["link.npz", "made.npz"]);
}

#[test]
fn a_folder_that_cannot_take_the_file_is_an_error_and_untouched() {
    let dir = tempfile::tempdir().unwrap();
    // a parent that is a regular file: refused whoever runs the test
    fs::write(dir.path().join("file"), b"x").unwrap();
    let o = run_in(dir.path(), &["convert", &input(), "file/out.npz"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr).starts_with("error: file/out.npz: "),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(entries(dir.path()), ["file"]);
    // a folder without write permission (root writes regardless: skipped)
    if euid(dir.path()) != 0 {
        let ro: PathBuf = dir.path().join("ro");
        fs::create_dir(&ro).unwrap();
        fs::set_permissions(&ro, fs::Permissions::from_mode(0o555)).unwrap();
        let o = run_in(dir.path(), &["convert", &input(), "ro/out.npz"]);
        assert_eq!(o.status.code(), Some(1));
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("cannot create a file in the folder ro"),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(entries(&ro).is_empty());
        fs::set_permissions(&ro, fs::Permissions::from_mode(0o755)).unwrap();
    }
}
