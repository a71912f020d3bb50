//! The streaming `.nnp` writer: layout, parameters one at a time in both
//! formats, and its refusals (before anything is written, or per tensor).

use std::io::Cursor;

use nnp_archive::nnabla_proto::text;
use nnp_archive::{
    Error, Nnp, NnpStreamWriter, OptimizerState, ParamFormat, ParamSpec, WriteOptions, h5,
};
use tensor_core::{Bytes, DType, Tensor};

fn model() -> nnp_archive::nnabla_proto::NNablaProtoBuf {
    text::parse("network { name: \"net\" batch_size: 1 }\nexecutor { name: \"runtime\" network_name: \"net\" }\n").unwrap()
}

fn tensor_for(spec: &ParamSpec, seed: f32) -> Tensor<'static> {
    let n: usize = spec.dims.iter().product();
    let vals: Vec<f32> = (0..n).map(|i| seed + i as f32).collect();
    Tensor::from_values(spec.dims.clone(), &vals).unwrap()
}

#[test]
fn parameters_one_at_a_time_in_both_formats() {
    let specs = vec![
        ParamSpec::new("fc1/W", DType::F32, [3, 4], true),
        ParamSpec::new("fc1/b", DType::F32, [4], false),
        ParamSpec::new("scale", DType::F32, [], true),
        ParamSpec::new("empty", DType::F32, [0], true),
    ];
    let opt = OptimizerState {
        name: "optimizer_Adam_optimizer.h5.optimizer".into(),
        data: Bytes::Owned(b"state".to_vec()),
    };
    for format in [ParamFormat::H5, ParamFormat::Protobuf] {
        let opts = WriteOptions::default().with_param_format(format);
        let mut w = NnpStreamWriter::new(Cursor::new(Vec::new()), &model(), &specs, &opts).unwrap();
        let mut k = 0.0;
        while let Some(spec) = w.next_param().cloned() {
            let t = tensor_for(&spec, k);
            w.write_param(&t).unwrap();
            drop(t);
            k += 100.0;
        }
        let bytes = w.finish(std::slice::from_ref(&opt)).unwrap().into_inner();
        let nnp = Nnp::parse(&bytes).unwrap();
        let names: Vec<&str> = nnp.members().iter().map(|m| m.name.as_str()).collect();
        let member = match format {
            ParamFormat::H5 => "parameter.h5",
            _ => "parameter.protobuf",
        };
        assert_eq!(
            names,
            [
                "nnp_version.txt",
                "network.nntxt",
                member,
                opt.name.as_str()
            ]
        );
        assert_eq!(nnp.executors()[0].name, "runtime");
        let got: Vec<(&str, &[usize], bool)> = nnp
            .parameters()
            .iter()
            .map(|p| (p.name.as_str(), p.tensor.dims(), p.need_grad))
            .collect();
        let want: Vec<(&str, &[usize], bool)> = specs
            .iter()
            .map(|s| (s.name.as_str(), s.dims.as_slice(), s.need_grad))
            .collect();
        assert_eq!(got, want, "{format:?}");
        let w1 = nnp.parameters().get("fc1/b").unwrap();
        assert_eq!(
            &*w1.tensor.view::<f32>().unwrap(),
            &[100., 101., 102., 103.]
        );
        assert!(w1.tensor.storage().is_zero_copy());
        if format == ParamFormat::H5 {
            // the .h5 member's data blocks stay 64-byte aligned in the archive
            for p in nnp.parameters().iter().filter(|p| p.tensor.numel() > 0) {
                let off = p.tensor.bytes().as_ptr() as usize - bytes.as_ptr() as usize;
                assert_eq!(off % 64, 0, "{} at {off}", p.name);
            }
        }
        assert_eq!(&*nnp.optimizer_states()[0].data, b"state");
        // the same bytes as the all-at-once writer
        let params: Vec<_> = specs
            .iter()
            .enumerate()
            .map(|(i, s)| {
                nnp_archive::Parameter::new(
                    s.name.clone(),
                    tensor_for(s, 100.0 * i as f32),
                    s.need_grad,
                )
            })
            .collect();
        let again = nnp_archive::write(
            Cursor::new(Vec::new()),
            &model(),
            &params,
            std::slice::from_ref(&opt),
            &opts,
        )
        .unwrap()
        .into_inner();
        assert_eq!(again.len(), bytes.len());
        // dropped solver states
        let mut o = opts;
        o.drop_optimizer_states = true;
        let mut w = NnpStreamWriter::new(Cursor::new(Vec::new()), &model(), &specs, &o).unwrap();
        for s in &specs {
            w.write_param(&tensor_for(s, 0.0)).unwrap();
        }
        let bytes = w.finish(std::slice::from_ref(&opt)).unwrap().into_inner();
        assert!(Nnp::parse(&bytes).unwrap().optimizer_states().is_empty());
    }
}

#[test]
fn the_h5_member_is_what_the_h5_writer_writes() {
    let specs = vec![
        ParamSpec::new("a/W", DType::F16, [2], true),
        ParamSpec::new("a/b", DType::I32, [3], false),
    ];
    let ts = [
        Tensor::from_values([2], &[half::f16::from_f32(1.0); 2]).unwrap(),
        Tensor::from_values([3], &[1i32, 2, 3]).unwrap(),
    ];
    let mut w = NnpStreamWriter::new(
        Cursor::new(Vec::new()),
        &model(),
        &specs,
        &WriteOptions::default(),
    )
    .unwrap();
    let mut h = h5::StreamWriter::new(Vec::new(), &specs).unwrap();
    for t in &ts {
        w.write_param(t).unwrap();
        h.write_data(t).unwrap();
    }
    let nnp = w.finish(&[]).unwrap().into_inner();
    let file = h.finish().unwrap();
    let at = nnp
        .windows(file.len())
        .position(|win| win == file.as_slice())
        .expect("the .h5 file is stored whole");
    assert!(at > 0);
}

#[test]
fn refusals_come_before_any_byte() {
    let m = model();
    for (format, specs) in [
        (
            ParamFormat::Protobuf,
            vec![ParamSpec::new("w", DType::F64, [1], true)],
        ),
        (
            ParamFormat::Protobuf,
            vec![ParamSpec::new("w", DType::I32, [1], true)],
        ),
        (
            ParamFormat::H5,
            vec![ParamSpec::new("w", DType::C64, [1], true)],
        ),
        (
            ParamFormat::H5,
            vec![
                ParamSpec::new("w", DType::F32, [1], true),
                ParamSpec::new("w/x", DType::F32, [1], true),
            ],
        ),
    ] {
        let mut out = Cursor::new(Vec::new());
        let opts = WriteOptions::default().with_param_format(format);
        assert!(NnpStreamWriter::new(&mut out, &m, &specs, &opts).is_err());
        assert!(out.get_ref().is_empty(), "{format:?} {specs:?}");
    }
}

#[test]
fn tensors_must_match_their_specs() {
    let specs = vec![
        ParamSpec::new("w", DType::F32, [2], true),
        ParamSpec::new("b", DType::F16, [1], true),
    ];
    for format in [ParamFormat::H5, ParamFormat::Protobuf] {
        let opts = WriteOptions::default().with_param_format(format);
        let mut w = NnpStreamWriter::new(Cursor::new(Vec::new()), &model(), &specs, &opts).unwrap();
        let wrong = Tensor::from_values([3], &[1f32, 2., 3.]).unwrap();
        assert!(matches!(w.write_param(&wrong), Err(Error::Stream { .. })));
        w.write_param(&Tensor::from_values([2], &[1f32, 2.]).unwrap())
            .unwrap();
        assert!(matches!(w.finish(&[]), Err(Error::Stream { .. })));

        let mut w = NnpStreamWriter::new(Cursor::new(Vec::new()), &model(), &specs, &opts).unwrap();
        w.write_param(&Tensor::from_values([2], &[1f32, 2.]).unwrap())
            .unwrap();
        let b = Tensor::from_values([1], &[half::f16::from_f32(0.5)]).unwrap();
        w.write_param(&b).unwrap();
        assert!(w.next_param().is_none());
        assert!(matches!(w.write_param(&b), Err(Error::Stream { .. })));
        let bytes = w.finish(&[]).unwrap().into_inner();
        let nnp = Nnp::parse(&bytes).unwrap();
        let b = nnp.parameters().get("b").unwrap();
        let want = if format == ParamFormat::H5 {
            DType::F16
        } else {
            DType::F32 // the protobuf format widens
        };
        assert_eq!(b.tensor.dtype(), want);
    }
}
