//! Opening a 256 MiB `.nnp` (64 × f32 [1024, 1024], parameters in
//! `parameter.h5`, then in `parameter.protobuf`) and reading every parameter
//! into owned tensors, against a memcpy of the same bytes measured in the
//! same run. Then writing the same parameters as an `.h5` (`h5::write`), an
//! `.nnp` with `parameter.h5` and one with `parameter.protobuf`
//! (`nnp_archive::write`, streaming), each to a new file, against one
//! `write_all` of the written file's bytes to a new file in the same
//! temporary folder, the two alternated (median of 5; ratio = `write_all`
//! seconds / writer seconds). Run with `cargo bench -p nnp-archive --bench nnp`.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use nnp_archive::nnabla_proto::NNablaProtoBuf;
use nnp_archive::{Nnp, ParamFormat, Parameter, ParameterSet, WriteOptions, h5};
use tensor_core::Tensor;

const N: usize = 64;
const SIDE: usize = 1024;

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64()
}

fn time<T>(reps: usize, mut f: impl FnMut() -> T) -> f64 {
    let mut v = Vec::new();
    for _ in 0..reps {
        let t = Instant::now();
        std::hint::black_box(f());
        v.push(t.elapsed());
    }
    median(v)
}

/// Times `ours` and `base` alternately `reps` times; the medians.
fn pair(reps: usize, mut ours: impl FnMut(), mut base: impl FnMut()) -> (f64, f64) {
    let (mut o, mut b) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        let t = Instant::now();
        ours();
        o.push(t.elapsed());
        let t = Instant::now();
        base();
        b.push(t.elapsed());
    }
    (median(o), median(b))
}

fn write_file(path: &Path, bytes: &[u8]) {
    let mut f = File::create(path).unwrap();
    f.write_all(bytes).unwrap();
}

fn writers(nnp: &Nnp<'_>, dir: &Path) {
    type Writer<'n> = Box<dyn Fn(File) + 'n>;
    let ops: [(&str, Writer<'_>); 3] = [
        (
            "write_h5",
            Box::new(|f| h5::write(BufWriter::new(f), nnp.parameters()).unwrap()),
        ),
        (
            "write_nnp_h5",
            Box::new(|f| {
                nnp.write(BufWriter::new(f), &WriteOptions::default())
                    .unwrap();
            }),
        ),
        (
            "write_nnp_protobuf",
            Box::new(|f| {
                let opts = WriteOptions::default().with_param_format(ParamFormat::Protobuf);
                nnp.write(BufWriter::new(f), &opts).unwrap();
            }),
        ),
    ];
    for (op, write) in ops {
        let out = dir.join(format!("{op}.out"));
        let base_out = dir.join(format!("{op}.base"));
        write(File::create(&out).unwrap());
        let bytes = std::fs::read(&out).unwrap();
        let (o, b) = pair(
            5,
            || write(File::create(&out).unwrap()),
            || write_file(&base_out, &bytes),
        );
        assert_eq!(std::fs::metadata(&out).unwrap().len(), bytes.len() as u64);
        let n = bytes.len() as u64;
        let ratio = b / o;
        println!(
            "{op}: {:.0} MiB in {o:.3} s = {:.2} GB/s; write_all {b:.3} s; ratio {ratio:.2}",
            n as f64 / 1048576.0,
            n as f64 / o / 1e9,
        );
        println!(
            "BENCH {{\"crate\":\"nnp-archive\",\"op\":\"{op}\",\"bytes\":{n},\"seconds\":{o:.6},\"baseline\":\"write_all\",\"baseline_seconds\":{b:.6},\"ratio\":{ratio:.4}}}"
        );
        drop(bytes);
        let _ = std::fs::remove_file(&out);
        let _ = std::fs::remove_file(&base_out);
    }
}

fn main() {
    let params: ParameterSet<'static> = (0..N)
        .map(|i| {
            let vals: Vec<f32> = (0..SIDE * SIDE)
                .map(|j| (i * 31 + j) as f32 * 1e-3)
                .collect();
            Parameter::new(
                format!("l{i:02}/affine/W"),
                Tensor::from_values([SIDE, SIDE], &vals).unwrap(),
                i % 2 == 0,
            )
        })
        .collect();
    let bytes: u64 = params.iter().map(|p| p.tensor.bytes().len() as u64).sum();
    let nnp = Nnp::new(NNablaProtoBuf::default(), params).expect("valid parameters");
    let dir = tempfile::tempdir().unwrap();

    // The baseline: one memcpy of the same number of bytes into a fresh buffer.
    let src: Vec<u8> = vec![7u8; bytes as usize];
    let memcpy = time(5, || src.clone());

    for (op, format) in [
        ("open_read_owned_h5", ParamFormat::H5),
        ("open_read_owned_protobuf", ParamFormat::Protobuf),
    ] {
        let path = dir.path().join(format!("{op}.nnp"));
        let t = Instant::now();
        nnp.save(&path, &WriteOptions::default().with_param_format(format))
            .unwrap();
        let save = t.elapsed().as_secs_f64();
        let read = time(5, || {
            let m = Nnp::open(&path).unwrap();
            let owned: Vec<Parameter<'static>> = m
                .parameters()
                .iter()
                .map(Parameter::to_owned_param)
                .collect();
            assert_eq!(owned.len(), N);
            owned
        });
        let open_only = time(3, || Nnp::open(&path).unwrap().parameters().len());
        println!("{op}: open alone (zero-copy) {open_only:.3} s");
        let ratio = memcpy / read;
        println!(
            "{op}: {:.0} MiB in {:.3} s = {:.2} GB/s; memcpy {:.3} s; ratio {:.2} (save took {:.2} s)",
            bytes as f64 / 1048576.0,
            read,
            bytes as f64 / read / 1e9,
            memcpy,
            ratio,
            save
        );
        println!(
            "BENCH {{\"crate\":\"nnp-archive\",\"op\":\"{op}\",\"bytes\":{bytes},\"seconds\":{read:.6},\"baseline\":\"memcpy\",\"baseline_seconds\":{memcpy:.6},\"ratio\":{ratio:.4}}}"
        );
    }
    drop(src);
    writers(&nnp, dir.path());
}
