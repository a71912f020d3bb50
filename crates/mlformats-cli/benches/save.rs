//! Every writer of the library against a plain `write_all`: `mlformats::save`
//! of 256 MiB of in-memory f32 tensors (64 of them) to each format the
//! library writes, against one `write_all` of the same number of bytes
//! written the way `save` with `sync` writes (a new temporary file in the
//! same folder, synced, renamed over the target), timed alternately in one run (median
//! of 5; target: at least 0.8 of `write_all`). `.nntxt` is text (each float
//! printed), so it is left out.
//!
//! `cargo bench -p mlformats-cli --bench save` prints a `BENCH {...}` line
//! per format (ratio = write_all seconds / save seconds); `cargo test
//! --benches` runs it on 4 MiB without them.

use std::io::Write;
use std::time::Instant;

use mlformats::Tensor;

const TENSORS: usize = 64;

fn tensors(total: usize) -> Vec<(String, Tensor<'static>)> {
    let per = total / TENSORS / 4;
    (0..TENSORS)
        .map(|i| {
            let values: Vec<f32> = (0..per)
                .map(|k| (k % 509) as f32 * 0.125 + i as f32)
                .collect();
            (
                format!("layer{i}/W"),
                Tensor::from_values([per / 256, 256], &values).unwrap(),
            )
        })
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let measuring = std::env::args().any(|a| a == "--bench");
    let (total, reps) = if measuring {
        (256 << 20, 5)
    } else {
        (4 << 20, 1)
    };
    let dir = tempfile::tempdir().unwrap();
    let ts = tensors(total);
    let bytes: usize = ts.iter().map(|(_, t)| t.bytes().len()).sum();
    let plain = vec![3u8; bytes];
    let base_path = dir.path().join("plain.bin");
    let tmp_path = dir.path().join(".plain.bin.tmp");
    for ext in [
        "params",
        "safetensors",
        "npz",
        "nnp",
        "h5",
        "protobuf",
        "tsm",
        "data",
        "onnx",
    ] {
        let path = dir.path().join(format!("out.{ext}"));
        let (mut ours, mut base) = (Vec::new(), Vec::new());
        for rep in 0..reps {
            let mut save = || {
                let t = Instant::now();
                let opts = mlformats::SaveOptions::new().sync(true);
                mlformats::save_with(&path, ts.iter().map(|(n, t)| (n, t)), &opts).unwrap();
                ours.push(t.elapsed().as_secs_f64());
            };
            let mut write_all = || {
                let t = Instant::now();
                let mut f = std::fs::File::create(&tmp_path).unwrap();
                f.write_all(&plain).unwrap();
                f.sync_all().unwrap();
                drop(f);
                std::fs::rename(&tmp_path, &base_path).unwrap();
                base.push(t.elapsed().as_secs_f64());
            };
            if rep % 2 == 0 {
                write_all();
                save();
            } else {
                save();
                write_all();
            }
        }
        let (o, b) = (median(ours), median(base));
        let ratio = b / o;
        println!(
            "save .{ext:<12} {o:.4} s  {:.2} GB/s   write_all {b:.4} s   ratio {ratio:.2}",
            bytes as f64 / o / 1e9
        );
        if measuring {
            println!(
                "BENCH {{\"crate\":\"mlformats-cli\",\"op\":\"save_{ext}\",\"bytes\":{bytes},\"seconds\":{o:.6},\"baseline\":\"write_all+fsync+rename\",\"baseline_seconds\":{b:.6},\"ratio\":{ratio:.3}}}"
            );
        }
        std::fs::remove_file(&path).unwrap();
    }
}
