//! The hand-made reader cases: every `ok_*` is accepted with the content the
//! library loaded, every `bad_*` is rejected for the library's reason;
//! truncated files and absurd lengths fail cleanly.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use common::*;
use primitiv_format::{DataType, Error, File, Optimizer, ReadOptions, Sgd};
use serde_json::Value;

/// Records the largest single allocation, to prove claimed lengths are not allocated.
struct Track;
static LARGEST: AtomicUsize = AtomicUsize::new(0);
unsafe impl GlobalAlloc for Track {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LARGEST.fetch_max(l.size(), Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
}
#[global_allocator]
static A: Track = Track;

fn cases(prefix: &str) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(testdata().join("reader_cases"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "data")
                && p.file_name().unwrap().to_string_lossy().starts_with(prefix)
        })
        .collect();
    v.sort();
    v
}

fn loaded_as(side: &Value) -> DataType {
    match side["loaded_as"].as_str().unwrap() {
        "shape" => DataType::Shape,
        "tensor" => DataType::Tensor,
        "parameter" => DataType::Parameter,
        "model" => DataType::Model,
        "optimizer" => DataType::Optimizer,
        x => panic!("{x}"),
    }
}

#[test]
fn ok_cases_load_the_content_the_library_loaded() {
    let files = cases("ok_");
    assert_eq!(files.len(), 22);
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).unwrap();
        let side = sidecar(&path);
        assert_eq!(side["library_accepts"], true);
        let (file, used) = File::parse_prefix(&bytes, &ReadOptions::expecting(loaded_as(&side)))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            (bytes.len() - used) as u64,
            side["trailing_bytes_ignored"].as_u64().unwrap(),
            "{name}: trailing bytes"
        );
        let c = &side["loaded_content"];
        match file {
            File::Tensor(t) => check_tensor(&t, c, &name),
            File::Parameter(mut p) => {
                p.dedup_stats(); // the library keeps the first of a repeated key
                check_param(&p, c, &name)
            }
            File::Model(mut m) => {
                m.dedup(); // the library loads every entry in turn: the last wins
                check_model(&m, c, &name)
            }
            File::Optimizer(o) => {
                // The library loaded the file into an SGD object and saved it again.
                assert!(side["content"].is_null());
                assert!(c["class"].as_str().unwrap().starts_with("SGD"), "{name}");
                // The loaded object has no order: compare the configs by key.
                let sgd = Sgd::from_optimizer(&o).to_optimizer();
                let mut ours = sgd.clone();
                let mut want = c.clone();
                ours.float_configs.sort_by(|a, b| a.0.cmp(&b.0));
                want["float_configs"]
                    .as_array_mut()
                    .unwrap()
                    .sort_by(|a, b| a["key"].as_str().cmp(&b["key"].as_str()));
                check_optimizer_raw(&ours, &want, &name);
                let ignored: Vec<&str> = side["ignored_keys"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_str().unwrap())
                    .collect();
                for k in ignored {
                    assert!(
                        !Sgd::KEYS.contains(&k) && !k.starts_with("Optimizer.")
                            || o.uint(k).is_none(),
                        "{name}: {k} is not an SGD key in its map"
                    );
                }
            }
            File::Shape(_) => unreachable!(),
        }
    }
}

/// What the library said, as the root error of our reader.
fn same_reason(library: &str, e: &Error) -> bool {
    let r = e.root();
    match r {
        Error::Eof { .. } => library == "MessagePack: Stream reached EOF.",
        Error::WrongType {
            expected, found, ..
        } => {
            library.starts_with("MessagePack: Next object does not have")
                && (library.contains(&format!("observed: {found:x}"))
                    || library.contains(&format!("observed: <0x{found:02x}>")))
                && (library.contains("'bin'") == expected.starts_with("bin"))
                && (library.contains("'array'") == expected.starts_with("array"))
                && (library.contains("'map'") == expected.starts_with("map"))
        }
        Error::Version { major, minor, .. } => {
            library == format!("File version mismatched. required: 0.1, observed: {major}.{minor}")
        }
        Error::DataTypeMismatch {
            expected, found, ..
        } => {
            library
                == format!(
                    "Data type mismatched. required: {:x}, observed: {found:x}",
                    expected.code()
                )
        }
        Error::TooManyDims { .. } => library.starts_with("Exceeds dimension depth limit"),
        Error::InvalidShape { shape, .. } => library == format!("Invalid shape: {shape}"),
        Error::DataLength {
            expected, actual, ..
        } => {
            library
                == format!(
                    "Shape and data length mismatched. shape.size() * sizeof(float): {expected} != data.size(): {actual}"
                )
        }
        Error::ParameterBatch { shape, .. } => {
            library == format!("The batch size of the parameter should be 1. shape: {shape}")
        }
        Error::EmptyKey { .. } => library == "Model does not have a parameter with name: ''",
        _ => false,
    }
}

#[test]
fn bad_cases_are_rejected_for_the_library_reason() {
    let files = cases("bad_");
    assert_eq!(files.len(), 20);
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).unwrap();
        let side = sidecar(&path);
        assert_eq!(side["library_accepts"], false);
        let lib = side["library_error"].as_str().unwrap();
        let e = File::parse_prefix(&bytes, &ReadOptions::expecting(loaded_as(&side)))
            .map(|_| ())
            .expect_err(&name);
        assert!(
            same_reason(lib, &e),
            "{name}: ours `{e}` vs library `{lib}`"
        );
        assert!(
            e.to_string().contains("at byte"),
            "{name}: no offset in `{e}`"
        );
    }
}

#[test]
fn truncation_at_every_offset_is_an_error() {
    for path in goldens() {
        let bytes = std::fs::read(&path).unwrap();
        for n in 0..bytes.len() {
            let r = File::parse(&bytes[..n]);
            assert!(
                r.is_err(),
                "{}: prefix of {n} bytes accepted",
                path.display()
            );
        }
    }
    let bytes = std::fs::read(testdata().join("model_nested_adam.data")).unwrap();
    for n in 0..bytes.len() {
        let e = primitiv_format::Model::parse(&bytes[..n]).unwrap_err();
        assert!(matches!(e.root(), Error::Eof { .. }), "{n}: {e}");
    }
}

#[test]
fn a_4gib_bin_claim_fails_before_allocating() {
    let head = |dt: u8| -> Vec<u8> {
        let mut v = vec![0xce, 0, 0, 0, 0, 0xce, 0, 0, 0, 1, 0xce, 0, 0, dt, 0];
        v.truncate(15);
        v
    };
    // 20 bytes: a Tensor header, then bin32 of 0xffffffff bytes where the dims should be
    let mut f20 = head(1);
    f20.extend_from_slice(&[0xc6, 0xff, 0xff, 0xff, 0xff]);
    assert_eq!(f20.len(), 20);
    // and a tensor whose data claims 4 GiB
    let mut f = head(1);
    f.extend_from_slice(&[
        0x90, 0xce, 0, 0, 0, 1, 0xc6, 0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4,
    ]);
    LARGEST.store(0, Ordering::Relaxed);
    let e20 = File::parse(&f20).unwrap_err();
    let e = File::parse(&f).unwrap_err();
    let largest = LARGEST.load(Ordering::Relaxed);
    assert!(largest < 1 << 16, "allocated {largest} bytes");
    assert!(
        matches!(e20.root(), Error::WrongType { found: 0xc6, .. }),
        "{e20}"
    );
    match e.root() {
        Error::Eof {
            offset: 21,
            needed,
            available: 9,
            ..
        } => assert_eq!(*needed, 5 + 0xffff_ffff),
        other => panic!("{other}"),
    }
    // a stats count of 2^32-1 with nothing behind it
    let mut p = head(2);
    p.extend_from_slice(&[
        0x90, 0xce, 0, 0, 0, 1, 0xc4, 4, 0, 0, 0x80, 0x3f, 0xce, 0xff, 0xff, 0xff, 0xff,
    ]);
    LARGEST.store(0, Ordering::Relaxed);
    let e = File::parse(&p).unwrap_err();
    assert!(LARGEST.load(Ordering::Relaxed) < 1 << 16);
    assert!(
        e.to_string().contains("over the limit") || matches!(e.root(), Error::Eof { .. }),
        "{e}"
    );
}

#[test]
fn optimizer_typed_accessors_for_every_class() {
    use primitiv_format::{
        AdaDelta, AdaGrad, Adam, MomentumSgd, OptimizerClass, RmsProp, WriteOptions,
    };
    let load = |n: &str| -> (Vec<u8>, Optimizer) {
        let b = std::fs::read(testdata().join(format!("optimizer_{n}.data"))).unwrap();
        let o = Optimizer::parse(&b).unwrap();
        (b, o)
    };
    let same = |bytes: &[u8], o: &Optimizer| {
        let mut out = Vec::new();
        o.write(&mut out, &WriteOptions::default()).unwrap();
        assert_eq!(out, bytes);
    };
    let (b, o) = load("sgd_default");
    assert_eq!(o.guess_class(), Some(OptimizerClass::Sgd));
    assert_eq!(Sgd::from_optimizer(&o), Sgd::default());
    same(&b, &Sgd::default().to_optimizer());
    let (b, o) = load("sgd_custom");
    same(&b, &Sgd::from_optimizer(&o).to_optimizer());
    let (b, o) = load("momentumsgd_default");
    assert_eq!(o.guess_class(), Some(OptimizerClass::MomentumSgd));
    assert_eq!(MomentumSgd::from_optimizer(&o), MomentumSgd::default());
    same(&b, &MomentumSgd::default().to_optimizer());
    let (b, o) = load("adagrad_default");
    assert_eq!(AdaGrad::from_optimizer(&o), AdaGrad::default());
    same(&b, &AdaGrad::default().to_optimizer());
    let (b, o) = load("rmsprop_default");
    assert_eq!(RmsProp::from_optimizer(&o), RmsProp::default());
    same(&b, &RmsProp::default().to_optimizer());
    let (b, o) = load("adadelta_default");
    assert_eq!(o.guess_class(), Some(OptimizerClass::AdaDelta));
    assert_eq!(AdaDelta::from_optimizer(&o), AdaDelta::default());
    same(&b, &AdaDelta::default().to_optimizer());
    let (b, o) = load("adam_default");
    assert_eq!(Adam::from_optimizer(&o), Adam::default());
    same(&b, &Adam::default().to_optimizer());
    let (b, o) = load("adam_custom");
    let a = Adam::from_optimizer(&o);
    assert_eq!(
        (a.base.epoch, a.alpha, a.beta1, a.beta2, a.eps),
        (100000, 0.002, 0.8, 0.99, 1e-7)
    );
    same(&b, &a.to_optimizer());
    let (b, o) = load("adam_after_model_update");
    let a = Adam::from_optimizer(&o);
    assert_eq!(a.base.epoch, 1);
    same(&b, &a.to_optimizer());
    // no class check, as in the library: an SGD file into Adam sets only the base keys
    let (_, o) = load("sgd_custom");
    let a = Adam::from_optimizer(&o);
    assert_eq!(a.alpha, Adam::default().alpha);
    assert_eq!(a.base, primitiv_format::BaseConfigs::from_optimizer(&o));
    assert_eq!(OptimizerClass::Adam.stat_keys(), ["Adam.m1", "Adam.m2"]);
}
