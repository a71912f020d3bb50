//! Opening a 256 MiB `.nnp` (64 × f32 [1024, 1024], parameters in
//! `parameter.h5`, then in `parameter.protobuf`) and reading every parameter
//! into owned tensors, against a memcpy of the same bytes measured in the
//! same run. Run with `cargo bench -p nnp-archive --bench nnp`.

use std::time::{Duration, Instant};

use nnp_archive::nnabla_proto::NNablaProtoBuf;
use nnp_archive::{Nnp, ParamFormat, Parameter, ParameterSet, WriteOptions};
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
}
