//! Killed and concurrent writers: `write_atomic` in child processes (this
//! test binary run again as `child_writer`), killed with SIGKILL at random
//! moments of a write that takes over a second, or racing each other.
#![cfg(unix)]

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tensor_core::Error;
use tensor_core::io::{WriteOptions, count_entries, write_atomic_with};

const CHUNK: usize = 512 << 10;

fn opts(named: bool) -> WriteOptions {
    WriteOptions::new().named_temporary(named)
}

/// The writer run in a child process: `MLF_CHILD_OUT` gets `MLF_CHILD_CHUNKS`
/// chunks of the byte `MLF_CHILD_BYTE`, with `MLF_CHILD_PACE_MS` between
/// chunks; "WRITING" on stdout once the first chunk is written.
#[test]
#[ignore = "a child process of the tests below, not a test"]
fn child_writer() {
    let Ok(out) = std::env::var("MLF_CHILD_OUT") else {
        return;
    };
    let var = |k: &str| std::env::var(k).unwrap().parse::<u64>().unwrap();
    let named = var("MLF_CHILD_NAMED") == 1;
    let byte = var("MLF_CHILD_BYTE") as u8;
    let chunks = var("MLF_CHILD_CHUNKS");
    let pace = Duration::from_millis(var("MLF_CHILD_PACE_MS"));
    write_atomic_with::<Error>(&out, &opts(named), |w| {
        let chunk = vec![byte; CHUNK];
        for i in 0..chunks {
            w.write_all(&chunk).map_err(|e| Error::io("w", e))?;
            if i == 0 {
                w.flush().map_err(|e| Error::io("w", e))?;
                let mut so = std::io::stdout();
                writeln!(so, "WRITING").unwrap();
                so.flush().unwrap();
            }
            std::thread::sleep(pace);
        }
        Ok(())
    })
    .unwrap();
}

fn spawn(out: &Path, named: bool, byte: u8, chunks: u64, pace_ms: u64) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "child_writer", "--nocapture"])
        .env("MLF_CHILD_OUT", out)
        .env("MLF_CHILD_NAMED", if named { "1" } else { "0" })
        .env("MLF_CHILD_BYTE", byte.to_string())
        .env("MLF_CHILD_CHUNKS", chunks.to_string())
        .env("MLF_CHILD_PACE_MS", pace_ms.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Waits for the child's "WRITING".
fn wait_writing(child: &mut Child) {
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for line in lines.by_ref() {
        if line.unwrap().trim() == "WRITING" {
            // keep reading the rest in the background so the child never blocks
            std::thread::spawn(move || lines.for_each(drop));
            return;
        }
    }
    panic!("the child ended before writing");
}

fn assert_filled(path: &Path, bytes: &[u8], len: usize) -> u8 {
    let got = fs::read(path).unwrap();
    assert_eq!(got.len(), len, "{} is incomplete", path.display());
    let b = got[0];
    assert!(bytes.contains(&b), "unexpected contents {b}");
    assert!(
        got.iter().all(|&x| x == b),
        "{} mixes writers",
        path.display()
    );
    b
}

/// True when this folder's filesystem gives unnamed temporaries.
fn unnamed_supported(dir: &Path) -> bool {
    let probe = dir.join("probe");
    let mut seen = usize::MAX;
    write_atomic_with::<Error>(&probe, &opts(false), |_| {
        seen = count_entries(dir);
        Ok(())
    })
    .unwrap();
    fs::remove_file(&probe).unwrap();
    seen == 0
}

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn kill_at_random_moments(named: bool) {
    const KILLS: usize = 20;
    // 48 chunks of 512 KiB, 25 ms apart: 24 MiB over at least 1.2 s
    const CHUNKS: u64 = 48;
    const PACE_MS: u64 = 25;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("model.safetensors");
    let unnamed = !named && unnamed_supported(dir.path());
    let old = vec![0xAAu8; 3 * CHUNK + 17];
    fs::write(&out, &old).unwrap();
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    eprintln!("named={named} seed={seed}");
    let mut rng = XorShift(seed);
    for i in 0..KILLS {
        let mut child = spawn(&out, named, 0x11, CHUNKS, PACE_MS);
        wait_writing(&mut child);
        // anywhere in the first 0.9 s of the 1.175 s the write still has to run
        // (the margin absorbs a loaded machine oversleeping)
        let delay = Duration::from_micros(rng.next() % 900_000);
        let t = Instant::now();
        std::thread::sleep(delay);
        child.kill().unwrap(); // SIGKILL
        let status = child.wait().unwrap();
        assert!(
            !status.success(),
            "kill {i} came after the write ended ({:?})",
            t.elapsed()
        );
        assert_eq!(
            fs::read(&out).unwrap(),
            old,
            "kill {i}: previous output damaged"
        );
        if unnamed {
            assert_eq!(
                count_entries(dir.path()),
                1,
                "kill {i}: an unnamed temporary left a name behind"
            );
        }
    }
    if named {
        assert!(
            count_entries(dir.path()) > 1,
            "the killed writers left no temporaries to sweep"
        );
    }
    // one more write, to the end: it sweeps its dead predecessors' temporaries
    let mut child = spawn(&out, named, 0x22, 4, 0);
    assert!(child.wait().unwrap().success());
    assert_filled(&out, &[0x22], 4 * CHUNK);
    let left: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, vec![std::ffi::OsString::from("model.safetensors")]);
}

#[test]
fn killed_writers_leave_the_old_output_and_nothing_else_unnamed() {
    kill_at_random_moments(false);
}

#[test]
fn killed_writers_leave_the_old_output_and_nothing_else_named() {
    kill_at_random_moments(true);
}

#[test]
fn two_concurrent_writers_leave_one_complete_output() {
    for named in [false, true] {
        let mut winners = Vec::new();
        for _ in 0..3 {
            let dir = tempfile::tempdir().unwrap();
            let out = dir.path().join("out.npz");
            fs::write(&out, b"old").unwrap();
            // 16 MiB each, 5 ms between chunks: both run at once
            let mut a = spawn(&out, named, 1, 32, 5);
            let mut b = spawn(&out, named, 2, 32, 5);
            assert!(a.wait().unwrap().success());
            assert!(b.wait().unwrap().success());
            winners.push(assert_filled(&out, &[1, 2], 32 * CHUNK));
            assert_eq!(count_entries(dir.path()), 1, "named={named}: debris left");
        }
        eprintln!("named={named}: winners {winners:?}");
    }
}
