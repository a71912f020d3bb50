//! `--sync`, and what killed or crashed writes leave: the CLI killed with
//! SIGKILL mid-conversion keeps the previous output and leaves nothing;
//! dead writers' temporaries are swept by the next write.
#![cfg(unix)]

mod common;

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use common::{run_str, testdata};

/// A safetensors file of one f32 tensor of `n` elements, written by hand.
fn write_safetensors(path: &Path, n: usize, fill: f32) {
    let header = format!(
        r#"{{"w":{{"dtype":"F32","shape":[{n}],"data_offsets":[0,{}]}}}}"#,
        4 * n
    );
    let mut header = header.into_bytes();
    while header.len() % 8 != 0 {
        header.push(b' ');
    }
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(&header);
    let v = fill.to_le_bytes();
    bytes.reserve(4 * n);
    for _ in 0..n {
        bytes.extend_from_slice(&v);
    }
    fs::write(path, bytes).unwrap();
}

fn convert(args: &[&str]) {
    let out = run_str(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn sync_writes_the_same_bytes_and_sweeps_dead_temporaries() {
    let dir = tempfile::tempdir().unwrap();
    let input = testdata().join("cvm/large_1mb.params");
    let input = input.to_str().unwrap();
    for ext in ["safetensors", "npz", "params", "data", "h5"] {
        let plain = dir.path().join(format!("plain.{ext}"));
        let synced = dir.path().join(format!("synced.{ext}"));
        // a temporary of a dead writer (pid 4194304 is above Linux's largest)
        let dead = dir.path().join(format!(".synced.{ext}.4194304.9a8b.tmp"));
        fs::write(&dead, b"x").unwrap();
        convert(&["convert", input, plain.to_str().unwrap(), "-q"]);
        convert(&["convert", input, synced.to_str().unwrap(), "-q", "--sync"]);
        assert_eq!(
            fs::read(&plain).unwrap(),
            fs::read(&synced).unwrap(),
            "{ext}"
        );
        if cfg!(target_os = "linux") {
            assert!(!dead.exists(), "{ext}: dead writer's temporary left");
        } else {
            fs::remove_file(&dead).unwrap();
        }
    }
    let graph_in = testdata().join("tennis");
    let tsm = common::files_with_suffix(&graph_in, ".tsm")
        .into_iter()
        .find(|f| run_str(&["graph", f.to_str().unwrap()]).status.success())
        .expect("a drawable TenniS module");
    let dot = dir.path().join("g.dot");
    let plain = run_str(&["graph", tsm.to_str().unwrap()]);
    convert(&[
        "graph",
        tsm.to_str().unwrap(),
        "-o",
        dot.to_str().unwrap(),
        "--sync",
    ]);
    assert!(
        fs::read(&dot).unwrap() == plain.stdout,
        "graph -o --sync wrote other bytes"
    );
    assert_eq!(tensor_core::io::count_entries(dir.path()), 11);
}

#[test]
fn killed_conversions_keep_the_previous_output_and_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small.safetensors");
    let big = dir.path().join("big.safetensors");
    let out = dir.path().join("out.params");
    write_safetensors(&small, 1000, 1.5);
    write_safetensors(&big, 24 << 20, 2.5); // 96 MiB
    let (small, big, out_s) = (
        small.to_str().unwrap(),
        big.to_str().unwrap(),
        out.to_str().unwrap(),
    );
    // how long a whole conversion takes here, and what it writes
    let t = Instant::now();
    convert(&["convert", big, out_s, "-q"]);
    let mut full = t.elapsed();
    let new = fs::read(&out).unwrap();
    convert(&["convert", small, out_s, "-q"]);
    let old = fs::read(&out).unwrap();
    let mut seed = (std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos() as u64)
        | 1;
    eprintln!("a conversion takes {full:?}; seed {seed}");
    // A loaded machine makes later runs slower or faster than the measured
    // one; a run that finished before the kill shortens the next delays, so
    // the loop ends with kills mid-write however the timing drifts.
    let (mut killed, mut runs) = (0, 0);
    for i in 0..24 {
        if runs >= 6 && killed >= 2 {
            break;
        }
        runs += 1;
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let at = full.mul_f64((seed % 1000) as f64 / 1000.0);
        let mut child = Command::new(env!("CARGO_BIN_EXE_mlformats"))
            .args(["convert", big, out_s, "-q"])
            .spawn()
            .unwrap();
        std::thread::sleep(at);
        child.kill().unwrap(); // SIGKILL
        let status = child.wait().unwrap();
        let now = fs::read(&out).unwrap();
        // killed before the rename: the previous output; after it (the
        // process had not exited yet): the complete new one. Never a mix.
        assert!(
            now == old || now == new,
            "run {i} ({status}, kill after {at:?}): output damaged ({} bytes)",
            now.len()
        );
        if now == new {
            convert(&["convert", small, out_s, "-q"]);
            full = full.mul_f64(0.6);
        } else {
            killed += 1;
        }
        // O_TMPFILE (Linux ext4, xfs, btrfs, tmpfs) leaves no name behind
        if cfg!(target_os = "linux") && !status.success() {
            let names: Vec<_> = fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".tmp"))
                .collect();
            let tmp_fs = Command::new("stat")
                .args(["-f", "-c", "%T", dir.path().to_str().unwrap()])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
                .unwrap_or_default();
            if ["ext2/ext3", "xfs", "btrfs", "tmpfs"].contains(&tmp_fs.as_str()) {
                assert!(names.is_empty(), "run {i}: left {names:?}");
            }
        }
    }
    assert!(
        killed >= 2,
        "only {killed} of {runs} runs were killed mid-write"
    );
    convert(&["convert", big, out_s, "-q"]);
    assert!(
        fs::read(&out).unwrap() == new,
        "the last conversion's output differs"
    );
    assert_eq!(tensor_core::io::count_entries(dir.path()), 3);
}
