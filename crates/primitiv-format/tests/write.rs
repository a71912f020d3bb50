//! The writer reproduces the C++ library's files byte for byte.

mod common;

use common::*;
use primitiv_format::{File, Model, Order, Parameter, Shape, Tensor, WriteOptions};

fn write(f: &File<'_>, opts: &WriteOptions) -> Vec<u8> {
    let mut out = Vec::new();
    f.write(&mut out, opts).unwrap();
    out
}

#[test]
fn every_golden_rewrites_byte_for_byte() {
    for path in goldens() {
        let bytes = std::fs::read(&path).unwrap();
        let f = File::parse(&bytes).unwrap();
        assert_eq!(
            write(&f, &WriteOptions::default()),
            bytes,
            "{}",
            path.display()
        );
    }
}

#[test]
fn model_keys_are_sorted_bytewise_whatever_the_entry_order() {
    for name in [
        "model_nested_adam",
        "model_string_lengths",
        "model_20_params_sorted",
    ] {
        let bytes = std::fs::read(testdata().join(format!("{name}.data"))).unwrap();
        let mut m = Model::parse(&bytes).unwrap();
        m.entries.reverse();
        m.entries.rotate_left(1);
        let mut out = Vec::new();
        m.write(&mut out, &WriteOptions::default()).unwrap();
        assert_eq!(out, bytes, "{name}");
    }
    // repeated keys cannot be written (a C++ model cannot hold them)
    let bytes = std::fs::read(testdata().join("reader_cases/ok_model_duplicate_key.data")).unwrap();
    let mut m = Model::parse(&bytes).unwrap();
    let e = m.write(Vec::new(), &WriteOptions::default()).unwrap_err();
    assert!(e.to_string().contains("unique"), "{e}");
    m.dedup();
    assert_eq!(m.len(), 1);
    assert_eq!(
        &*m.get(&["w"]).unwrap().value.values(),
        &[3.0, 4.0],
        "last wins"
    );
}

#[test]
fn cpp_order_option_matches_the_library() {
    // A fresh Adam parameter: stats inserted m1 then m2 are written m2, m1.
    let bytes = std::fs::read(testdata().join("param_2x3_adam_1step.data")).unwrap();
    let p = Parameter::parse(&bytes).unwrap();
    let keys: Vec<&[u8]> = p.stats.iter().map(|(k, _)| k.as_slice()).collect();
    assert_eq!(keys, [b"Adam.m2".as_slice(), b"Adam.m1"]);
    let mut fresh = Parameter::new(p.value.clone()).unwrap();
    fresh = fresh
        .with_stat("Adam.m1", p.stat("Adam.m1").unwrap().clone())
        .with_stat("Adam.m2", p.stat("Adam.m2").unwrap().clone());
    let mut out = Vec::new();
    fresh.write(&mut out, &WriteOptions::cpp_order()).unwrap();
    assert_eq!(out, bytes);
    // load → save in C++ reverses the order (docs/formats/primitiv.md §4); so
    // does ours with the option
    let mut again = Vec::new();
    p.write(&mut again, &WriteOptions::cpp_order()).unwrap();
    let q = Parameter::parse(&again).unwrap();
    let keys: Vec<&[u8]> = q.stats.iter().map(|(k, _)| k.as_slice()).collect();
    assert_eq!(keys, [b"Adam.m1".as_slice(), b"Adam.m2"]);
    // 10 stats inserted a..h, z, stat_long come out as the library wrote them
    let bytes = std::fs::read(testdata().join("param_2x2_10stats.data")).unwrap();
    let p = Parameter::parse(&bytes).unwrap();
    let mut fresh = Parameter::new(p.value.clone()).unwrap();
    for k in ["a", "b", "c", "d", "e", "f", "g", "h", "z", "stat_long"] {
        fresh = fresh.with_stat(k, p.stat(k).unwrap().clone());
    }
    let mut out = Vec::new();
    fresh.write(&mut out, &WriteOptions::cpp_order()).unwrap();
    assert_eq!(out, bytes);
    // optimizer configs in any order are written in the library's order
    for name in ["adam_custom", "rmsprop_default", "adagrad_default"] {
        let bytes = std::fs::read(testdata().join(format!("optimizer_{name}.data"))).unwrap();
        let mut o = primitiv_format::Optimizer::parse(&bytes).unwrap();
        o.float_configs.sort_by(|a, b| a.0.cmp(&b.0));
        let opts = WriteOptions::default().with_config_order(Order::Libstdcxx);
        let mut out = Vec::new();
        o.write(&mut out, &opts).unwrap();
        assert_eq!(out, bytes, "{name}");
    }
}

#[test]
fn with_stats_false_writes_a_zero_count() {
    let with = std::fs::read(testdata().join("model_nested_adam.data")).unwrap();
    let without =
        std::fs::read(testdata().join("model_nested_adam_with_stats_false.data")).unwrap();
    let m = Model::parse(&with).unwrap();
    let mut out = Vec::new();
    m.write(&mut out, &WriteOptions::default().with_stats(false))
        .unwrap();
    assert_eq!(out, without);
}

#[test]
fn headers_are_minimal_and_uints_fixed_width() {
    // 63 floats → bin8, 64 → bin16, 128*129 → bin32 (as in the goldens)
    for (n, marker) in [(63usize, 0xc4u8), (64, 0xc5), (128 * 129, 0xc6)] {
        let t = Tensor::from_values(Shape::new([n as u32], 1).unwrap(), &vec![0.5; n]).unwrap();
        let mut out = Vec::new();
        t.write(&mut out, &WriteOptions::default()).unwrap();
        assert_eq!(&out[..4], &[0xce, 0, 0, 0]);
        assert_eq!(out[15], 0x91);
        let mut dim = vec![0xce];
        dim.extend_from_slice(&(n as u32).to_be_bytes());
        assert_eq!(&out[16..21], &dim[..]);
        assert_eq!(out[26], marker, "{n} floats");
    }
    // trailing 1-dims are dropped on write, as the library does
    let s = Shape::new([3, 1, 1], 1).unwrap();
    let mut out = Vec::new();
    s.write(&mut out, &WriteOptions::default()).unwrap();
    assert_eq!(
        out,
        std::fs::read(testdata().join("shape_trailing_ones_3x1x1.data")).unwrap()
    );
    assert!(Shape::new([1; 9], 1).is_err());
    assert!(
        Shape::new([2, 0], 1)
            .unwrap_err()
            .to_string()
            .contains("[2,0]x1")
    );
    // a parameter must have batch 1
    let t = Tensor::from_values(Shape::new([2], 2).unwrap(), &[1.0; 4]).unwrap();
    assert!(Parameter::new(t).is_err());
}

#[test]
fn save_is_atomic_and_nested_access_works() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.data");
    let bytes = std::fs::read(testdata().join("model_nested_adam.data")).unwrap();
    let m = Model::parse(&bytes).unwrap();
    m.save(&path, &WriteOptions::default()).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temporary left"
    );

    let loaded = File::open(&path).unwrap();
    let File::Model(m) = loaded else { panic!() };
    let u = m.get(&["enc", "rnn", "u"]).unwrap();
    assert!(u.stat("Adam.m1").is_some());
    assert!(u.value.storage().is_zero_copy(), "mapped, not copied");
    assert!(m.get_by_name("enc.rnn.u").is_some());
    let enc: Vec<String> = m
        .submodel(&["enc"])
        .map(|(k, _)| primitiv_format::join_key(k))
        .collect();
    assert_eq!(enc, ["b", "rnn.u", "w"]);
}
