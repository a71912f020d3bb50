use super::*;
use crate::ParamSpec;
use hdf5_pure::{AttrValue, Datatype, DatatypeByteOrder, FileBuilder, FloatingPointLayout, Layout};
use std::io::Write;
use tensor_core::Limits;
use tensor_core::Tensor;

fn t32(dims: &[usize], v: &[f32]) -> Tensor<'static> {
    Tensor::from_values(dims.to_vec(), v).unwrap()
}

#[test]
fn round_trip_dtypes_shapes_and_need_grad() {
    let a = t32(&[2, 3], &[1., 2., 3., 4., 5., 6.]);
    let b = Tensor::from_values(Vec::<usize>::new(), &[7.5f64]).unwrap();
    let c = Tensor::from_values([1, 2, 1, 2], &[1i32, -2, 3, -4]).unwrap();
    let d = Tensor::from_values([3], &[half::f16::from_f32(1.5); 3]).unwrap();
    let e = Tensor::new(DType::Bool, [2], vec![1u8, 0]).unwrap();
    let mut buf = Vec::new();
    write_tensors(
        &mut buf,
        [
            ("z/W", &a, true),
            ("a/scalar", &b, false),
            ("top", &c, true),
            ("z/y/half", &d, false),
            ("mask", &e, false),
        ],
    )
    .unwrap();
    let ps = parse(&buf).unwrap();
    let names: Vec<&str> = ps.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["z/W", "a/scalar", "top", "z/y/half", "mask"]);
    assert_eq!(ps[0].tensor.bytes(), a.bytes());
    assert!(ps[0].need_grad && !ps[1].need_grad && ps[2].need_grad);
    assert_eq!(ps[1].tensor.dtype(), DType::F64);
    assert!(ps[1].tensor.dims().is_empty());
    assert_eq!(ps[2].tensor.dims(), &[1, 2, 1, 2]);
    assert_eq!(ps[2].tensor.bytes(), c.bytes());
    assert_eq!(ps[3].tensor.dtype(), DType::F16);
    assert_eq!(ps[3].tensor.bytes(), d.bytes());
    assert_eq!(ps[4].tensor.dtype(), DType::Bool);
    assert_eq!(ps[4].tensor.bytes(), &[1, 0]);
    // owned reader agrees
    let owned = from_vec(buf.clone(), &ReadOptions::default()).unwrap();
    assert_eq!(owned.len(), 5);
    assert_eq!(owned[0].tensor.bytes(), a.bytes());
}

/// Every object header after the superblock, checked: signature,
/// version 2, checksum; returns where the metadata ends.
fn check_headers(file: &[u8]) -> usize {
    assert_eq!(&file[..8], b"\x89HDF\r\n\x1a\n");
    assert_eq!(file[8], 2);
    let sum = lookup3::checksum(&file[..44]);
    assert_eq!(&file[44..48], &sum.to_le_bytes());
    let eof = u64::from_le_bytes(file[28..36].try_into().unwrap());
    assert_eq!(eof, file.len() as u64);
    let mut at = 48;
    while file.get(at..at + 4) == Some(b"OHDR") {
        assert_eq!(file[at + 4], 2);
        let width = 1usize << (file[at + 5] & 3);
        let mut size = [0u8; 8];
        size[..width].copy_from_slice(&file[at + 6..at + 6 + width]);
        let end = at + 6 + width + u64::from_le_bytes(size) as usize;
        let sum = lookup3::checksum(&file[at..end]);
        assert_eq!(&file[end..end + 4], &sum.to_le_bytes(), "header at {at}");
        at = end + 4;
    }
    at
}

fn le<T: Copy>(v: &[T], f: impl Fn(T) -> Vec<u8>) -> Vec<u8> {
    v.iter().flat_map(|&x| f(x)).collect()
}

#[test]
fn every_dtype_round_trips_aligned_and_borrowed() {
    let f16s: Vec<half::f16> = [1.5f32, -0.25, 65504.0]
        .iter()
        .map(|&x| half::f16::from_f32(x))
        .collect();
    let ts = vec![
        ("f16", Tensor::from_values([3], &f16s).unwrap()),
        ("f32", t32(&[2, 2], &[1., -2., 3.5, f32::MAX])),
        ("f64", Tensor::from_values([2], &[1e-300f64, -7.0]).unwrap()),
        (
            "i8",
            Tensor::from_values([3], &[i8::MIN, 0, i8::MAX]).unwrap(),
        ),
        (
            "i16",
            Tensor::from_values([2], &[i16::MIN, i16::MAX]).unwrap(),
        ),
        (
            "i32",
            Tensor::from_values([2], &[i32::MIN, i32::MAX]).unwrap(),
        ),
        (
            "i64",
            Tensor::from_values([2], &[i64::MIN, i64::MAX]).unwrap(),
        ),
        ("u8", Tensor::from_values([2], &[0u8, u8::MAX]).unwrap()),
        ("u16", Tensor::from_values([2], &[1u16, u16::MAX]).unwrap()),
        ("u32", Tensor::from_values([2], &[1u32, u32::MAX]).unwrap()),
        ("u64", Tensor::from_values([2], &[1u64, u64::MAX]).unwrap()),
        (
            "bool",
            Tensor::new(DType::Bool, [4], vec![1u8, 0, 0, 1]).unwrap(),
        ),
    ];
    let mut file = Vec::new();
    write_tensors(
        &mut file,
        ts.iter().enumerate().map(|(i, (n, t))| (*n, t, i % 3 == 0)),
    )
    .unwrap();
    let meta_end = check_headers(&file);
    let back = parse(&file).unwrap();
    assert_eq!(back.len(), ts.len());
    for (i, ((name, t), p)) in ts.iter().zip(&back).enumerate() {
        assert_eq!(p.name, *name);
        assert_eq!(p.tensor.dtype(), t.dtype(), "{name}");
        assert_eq!(p.tensor.dims(), t.dims(), "{name}");
        assert_eq!(p.tensor.bytes(), t.bytes(), "{name}");
        assert_eq!(p.need_grad, i % 3 == 0, "{name}");
        assert!(p.tensor.storage().is_zero_copy(), "{name}");
        let off = p.tensor.bytes().as_ptr() as usize - file.as_ptr() as usize;
        assert_eq!(off % DATA_ALIGN as usize, 0, "{name} at {off}");
        assert!(
            off >= meta_end,
            "{name}: data before the end of the metadata"
        );
    }
    // the attributes have h5py's types: need_grad the bool enum, index int64
    let h = hdf5_pure::File::from_bytes(file.clone()).unwrap();
    let ds = h.dataset("f32").unwrap();
    let attrs = ds.attrs().unwrap();
    assert!(
        matches!(attrs.get("index"), Some(AttrValue::I64(1))),
        "{attrs:?}"
    );
    let ng = attrs.get("need_grad").unwrap();
    assert_eq!(ng.as_i64(), Some(0), "{ng:?}");
}

#[test]
fn scalars_empty_deep_wide_and_non_ascii() {
    let scalar = Tensor::from_values(Vec::<usize>::new(), &[2.5f32]).unwrap();
    let empty = Tensor::new(DType::F32, [0, 3], Vec::<u8>::new()).unwrap();
    let empty_i = Tensor::new(DType::I64, [4, 0], Vec::<u8>::new()).unwrap();
    let deep_name = (0..40)
        .map(|i| format!("g{i}"))
        .collect::<Vec<_>>()
        .join("/");
    let small = t32(&[1], &[9.]);
    let mut items: Vec<(String, &Tensor<'_>, bool)> = vec![
        ("s".into(), &scalar, false),
        ("e".into(), &empty, true),
        ("z/ei".into(), &empty_i, true),
        (deep_name.clone(), &small, true),
        ("日本/重み".into(), &small, false),
        ("ü".into(), &scalar, true),
    ];
    for i in 0..100 {
        items.push((format!("wide/p{i:03}"), &small, i % 2 == 1));
    }
    items.push((format!("long/{}", "n".repeat(300)), &small, true));
    let mut file = Vec::new();
    write_tensors(
        &mut file,
        items.iter().map(|(n, t, g)| (n.as_str(), *t, *g)),
    )
    .unwrap();
    check_headers(&file);
    let back = parse(&file).unwrap();
    let got: Vec<(&str, &[usize], &[u8], bool)> = back
        .iter()
        .map(|p| {
            (
                p.name.as_str(),
                p.tensor.dims(),
                p.tensor.bytes(),
                p.need_grad,
            )
        })
        .collect();
    let want: Vec<(&str, &[usize], &[u8], bool)> = items
        .iter()
        .map(|(n, t, g)| (n.as_str(), t.dims(), t.bytes(), *g))
        .collect();
    assert_eq!(got, want);
    // the zero-size datasets have an undefined address and no bytes
    let h = hdf5_pure::File::from_bytes(file.clone()).unwrap();
    match h.dataset("e").unwrap().layout().unwrap() {
        Layout::Contiguous { address, size } => assert_eq!((address, size), (None, 0)),
        other => panic!("{other:?}"),
    }
    // also through the memory map
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.h5");
    std::fs::write(&path, &file).unwrap();
    let mapped = open(&path).unwrap();
    assert_eq!(mapped.len(), items.len());
    assert!(mapped[3].tensor.storage().is_zero_copy());
}

#[test]
fn a_file_without_datasets() {
    let mut file = Vec::new();
    write_tensors(&mut file, std::iter::empty()).unwrap();
    assert_eq!(check_headers(&file), file.len());
    assert!(parse(&file).unwrap().is_empty());
}

#[test]
fn column_major_tensors_are_written_row_major() {
    use tensor_core::MemoryOrder;
    // [[1, 2, 3], [4, 5, 6]] stored column-major
    let cm = Tensor::with_order(
        DType::F32,
        [2, 3],
        MemoryOrder::ColumnMajor,
        le(&[1f32, 4., 2., 5., 3., 6.], |x| x.to_le_bytes().to_vec()),
    )
    .unwrap();
    let mut file = Vec::new();
    write_tensors(&mut file, [("w", &cm, true)]).unwrap();
    let back = parse(&file).unwrap();
    assert_eq!(
        &*back[0].tensor.view::<f32>().unwrap(),
        &[1., 2., 3., 4., 5., 6.]
    );
}

#[test]
fn stream_writer_checks_what_it_is_given() {
    let specs = [
        ParamSpec::new("a", DType::F32, [2], true),
        ParamSpec::new("b/c", DType::I32, [], false),
    ];
    let a = t32(&[2], &[1., 2.]);
    let c = Tensor::from_values(Vec::<usize>::new(), &[5i32]).unwrap();
    let mut w = StreamWriter::new(Vec::new(), &specs).unwrap();
    assert_eq!(w.next_dataset().unwrap().name, "a");
    // wrong dtype, wrong dims: refused, nothing written, still usable
    let len = w.get_ref().len();
    for bad in [
        Tensor::from_values([2], &[1f64, 2.]).unwrap(),
        t32(&[1, 2], &[1., 2.]),
    ] {
        let e = w.write_data(&bad).unwrap_err();
        assert!(matches!(e, Error::Stream { .. }), "{e}");
    }
    assert_eq!(w.get_ref().len(), len);
    w.write_data(&a).unwrap();
    let file_len = w.file_len();
    // finishing early is an error
    let mut early = StreamWriter::new(Vec::new(), &specs).unwrap();
    early.write_data(&a).unwrap();
    assert!(matches!(early.finish(), Err(Error::Stream { .. })));
    w.write_data(&c).unwrap();
    assert!(w.next_dataset().is_none());
    assert!(matches!(w.write_data(&c), Err(Error::Stream { .. })));
    let file = w.finish().unwrap();
    assert_eq!(file.len() as u64, file_len);
    let back = parse(&file).unwrap();
    assert_eq!(back[1].name, "b/c");
    assert!(back[0].need_grad && !back[1].need_grad);
    // names and types are refused before anything is written
    let mut out = Vec::new();
    let bad = [ParamSpec::new("a\0b", DType::F32, [1], true)];
    assert!(matches!(
        StreamWriter::new(&mut out, &bad),
        Err(Error::InvalidName { .. })
    ));
    let bad = [ParamSpec::new("c", DType::C64, [1], true)];
    assert!(matches!(
        StreamWriter::new(&mut out, &bad),
        Err(Error::UnsupportedDtype { .. })
    ));
    let deep = vec!["g"; MAX_DEPTH + 1].join("/");
    let bad = [ParamSpec::new(deep, DType::F32, [1], true)];
    assert!(matches!(
        StreamWriter::new(&mut out, &bad),
        Err(Error::InvalidName { .. })
    ));
    let bad = [ParamSpec::new("r", DType::F32, vec![1; 33], true)];
    assert!(StreamWriter::new(&mut out, &bad).is_err());
    let bad = [ParamSpec::new("huge", DType::F64, [usize::MAX, 2], true)];
    assert!(StreamWriter::new(&mut out, &bad).is_err());
    assert!(out.is_empty());
}

#[test]
fn io_errors_poison_the_writer() {
    struct Full(usize);
    impl Write for Full {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            if self.0 == 0 {
                return Err(std::io::Error::other("disk full"));
            }
            let n = b.len().min(self.0);
            self.0 -= n;
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let specs = [ParamSpec::new("a", DType::F32, [1000], true)];
    let a = t32(&[1000], &[0.5; 1000]);
    let mut w = StreamWriter::new(Full(1000), &specs).unwrap();
    assert!(matches!(w.write_data(&a), Err(Error::Io { .. })));
    assert!(matches!(w.write_data(&a), Err(Error::Stream { .. })));
    assert!(StreamWriter::new(Full(10), &specs).is_err());
}

#[test]
fn solver_state_round_trips_with_its_index_attributes() {
    let m = t32(&[2], &[0.1, 0.2]);
    let v = t32(&[2], &[0.3, 0.4]);
    let t = Tensor::from_values(Vec::<usize>::new(), &[7i64]).unwrap();
    let state = SolverState {
        tensors: vec![
            ("fc/W/m".into(), m.clone()),
            ("fc/W/t".into(), t.clone()),
            ("fc/W/v".into(), v.clone()),
        ],
        index: vec![Some(0), None, Some(1)],
    };
    let mut file = Vec::new();
    write_solver_state(&mut file, &state).unwrap();
    check_headers(&file);
    assert!(matches!(parse(&file), Err(Error::MissingNeedGrad { .. })));
    let map = MappedFile::from_vec(file.clone());
    let back = solver_state_from_map_range(&map, 0..file.len(), &ReadOptions::default()).unwrap();
    assert_eq!(back.index, state.index);
    for ((n1, t1), (n2, t2)) in back.tensors.iter().zip(&state.tensors) {
        assert_eq!((n1, t1.dims(), t1.bytes()), (n2, t2.dims(), t2.bytes()));
    }
}

#[test]
fn names_that_cannot_be_stored() {
    let a = t32(&[1], &[1.]);
    for bad in [
        ["a\0b", "x"],
        ["a", "a/b"],
        ["a/b", "a"],
        ["a", "a"],
        // two names stored at one path
        ["/a", "_/a"],
        ["a/", "a"],
    ] {
        let mut buf = Vec::new();
        let e = write_tensors(&mut buf, [(bad[0], &a, true), (bad[1], &a, true)]).unwrap_err();
        assert!(matches!(e, Error::InvalidName { .. }), "{bad:?}: {e}");
    }
    let c = Tensor::new(DType::C64, [1], vec![0u8; 8]).unwrap();
    let e = write_tensors(Vec::new(), [("c", &c, true)]).unwrap_err();
    assert!(matches!(e, Error::UnsupportedDtype { .. }), "{e}");
}

#[test]
fn names_hdf5_cannot_hold_come_back() {
    // torch.onnx's names (a leading `/`), empty and `.` components: stored
    // at `h5_path`, the name kept in an attribute and given back
    let names = [
        "/model.22/Unsqueeze_12_output_0",
        "a//b",
        "/x",
        ".",
        "ok/name",
        "c/",
    ];
    let ts: Vec<Tensor<'static>> = (0..names.len()).map(|i| t32(&[1], &[i as f32])).collect();
    let mut buf = Vec::new();
    write_tensors(&mut buf, names.iter().zip(&ts).map(|(n, t)| (*n, t, true))).unwrap();
    let back = parse(&buf).unwrap();
    let got: Vec<&str> = back.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(got, names);
    for (p, t) in back.iter().zip(&ts) {
        assert_eq!(p.tensor.bytes(), t.bytes(), "{}", p.name);
    }
    // the paths the file holds (what nnabla registers)
    let f = hdf5_pure::File::from_bytes(buf.clone()).unwrap();
    for (n, want) in [
        (
            "/model.22/Unsqueeze_12_output_0",
            "_/model.22/Unsqueeze_12_output_0",
        ),
        ("a//b", "a/_/b"),
        ("/x", "_/x"),
        (".", "_."),
        ("c/", "c/_"),
    ] {
        assert_eq!(h5_path(n).unwrap(), want);
        let ds = f.dataset(want).unwrap();
        let attrs = ds.attrs().unwrap();
        assert_eq!(
            attrs.get(NAME_ATTRIBUTE),
            Some(&hdf5_pure::AttrValue::String(n.to_string())),
            "{n:?}"
        );
    }
    // a name HDF5 holds has no attribute
    let ds = f.dataset("ok/name").unwrap();
    assert!(!ds.attrs().unwrap().contains_key(NAME_ATTRIBUTE));
    // the empty name (at `_`)
    let mut buf = Vec::new();
    write_tensors(&mut buf, [("", &ts[0], false)]).unwrap();
    assert_eq!(parse(&buf).unwrap()[0].name, "");
}

#[test]
fn a_name_attribute_for_another_path_is_not_taken() {
    // the attribute names the dataset only where its path is the name's
    let bytes = custom(|fb| {
        fb.create_dataset("w")
            .with_f32_data(&[1.0])
            .set_attr("need_grad", AttrValue::I8(1))
            .set_attr("index", AttrValue::I64(1))
            .set_attr(NAME_ATTRIBUTE, AttrValue::String("/other".into()));
        let mut g = fb.create_group("_");
        g.create_dataset("y")
            .with_f32_data(&[2.0])
            .set_attr("need_grad", AttrValue::I8(1))
            .set_attr("index", AttrValue::I64(0))
            .set_attr(NAME_ATTRIBUTE, AttrValue::String("/y".into()));
        fb.add_group(g.finish());
    });
    let back = parse(&bytes).unwrap();
    let got: Vec<&str> = back.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(got, ["/y", "w"]);
}

#[test]
fn sort_rules() {
    let mk = |n: &str, i: Option<i64>| RawParam {
        name: n.into(),
        dtype: DType::F32,
        dims: vec![],
        need_grad: Some(true),
        index: i,
        data: RawData::Owned(vec![0; 4]),
        swap: false,
    };
    let mut v = vec![mk("b", Some(0)), mk("a", Some(1)), mk("c", Some(0))];
    sort_like_nnabla(&mut v).unwrap();
    let n: Vec<_> = v.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(n, ["b", "c", "a"]);
    let mut v = vec![mk("b", None), mk("a", None)];
    sort_like_nnabla(&mut v).unwrap();
    assert_eq!(v[0].name, "a");
    let mut v = vec![mk("b", None), mk("a", Some(0))];
    assert!(matches!(
        sort_like_nnabla(&mut v),
        Err(Error::MixedIndex { .. })
    ));
}

/// Files shaped like nnabla's C++ writer (int32 need_grad/index), with
/// other attribute types, missing need_grad and big-endian data.
fn custom(build: impl FnOnce(&mut FileBuilder)) -> Vec<u8> {
    let mut fb = FileBuilder::new();
    build(&mut fb);
    fb.finish().unwrap()
}

#[test]
fn cpp_writer_int32_attributes_and_other_truth_values() {
    let f = custom(|fb| {
        let mut g = fb.create_group("fc");
        g.create_dataset("W")
            .with_f32_data(&[1.0, 2.0])
            .set_attr("need_grad", AttrValue::I32(1))
            .set_attr("index", AttrValue::I32(1));
        g.create_dataset("b")
            .with_f64_data(&[3.0])
            .set_attr("need_grad", AttrValue::I32(0))
            .set_attr("index", AttrValue::I32(0));
        g.create_dataset("u")
            .with_u16_data(&[7, 8])
            .set_attr("need_grad", AttrValue::F32(0.5))
            .set_attr("index", AttrValue::I64(2));
        fb.add_group(g.finish());
    });
    let ps = parse(&f).unwrap();
    let n: Vec<_> = ps.iter().map(|p| (p.name.as_str(), p.need_grad)).collect();
    assert_eq!(n, [("fc/b", false), ("fc/W", true), ("fc/u", true)]);
    assert_eq!(ps[2].tensor.dtype(), DType::U16);
}

#[test]
fn refusals_nnabla_also_refuses() {
    let missing = custom(|fb| {
        fb.create_dataset("x").with_f32_data(&[1.0]);
    });
    assert!(matches!(
        parse(&missing),
        Err(Error::MissingNeedGrad { .. })
    ));
    let mixed = custom(|fb| {
        fb.create_dataset("x")
            .with_f32_data(&[1.0])
            .set_attr("need_grad", AttrValue::I8(1))
            .set_attr("index", AttrValue::I64(0));
        fb.create_dataset("y")
            .with_f32_data(&[1.0])
            .set_attr("need_grad", AttrValue::I8(1));
    });
    let e = parse(&mixed).unwrap_err();
    assert!(matches!(e, Error::MixedIndex { .. }), "{e}");
    let none = custom(|fb| {
        for n in ["y", "x"] {
            fb.create_dataset(n)
                .with_f32_data(&[1.0])
                .set_attr("need_grad", AttrValue::I8(1));
        }
    });
    let ps = parse(&none).unwrap();
    assert_eq!(ps[0].name, "x");
    let stringy = custom(|fb| {
        fb.create_dataset("x")
            .with_f32_data(&[1.0])
            .set_attr("need_grad", AttrValue::String("yes".into()));
    });
    assert!(matches!(parse(&stringy), Err(Error::BadAttribute { .. })));
}

#[test]
fn big_endian_data_becomes_little_endian() {
    let be_f32 = Datatype::FloatingPoint {
        size: 4,
        byte_order: DatatypeByteOrder::BigEndian,
        layout: FloatingPointLayout::IEEE754_BINARY32,
    };
    let f = custom(|fb| {
        fb.create_dataset("x")
            .with_raw_data(be_f32, 1.5f32.to_be_bytes().to_vec(), 1)
            .set_attr("need_grad", AttrValue::I8(1));
    });
    let ps = parse(&f).unwrap();
    assert_eq!(&*ps[0].tensor.view::<f32>().unwrap(), &[1.5]);
}

#[test]
fn chunked_compressed_data_is_read_and_bounded() {
    let vals: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    let f = custom(|fb| {
        fb.create_dataset("x")
            .with_f32_data(&vals)
            .with_chunks(&[100])
            .with_deflate(6)
            .set_attr("need_grad", AttrValue::I8(1));
    });
    let ps = parse(&f).unwrap();
    assert_eq!(&*ps[0].tensor.view::<f32>().unwrap(), &vals[..]);
    let e = parse_with(
        &f,
        &ReadOptions::default().with_limits(Limits::default().with_max_alloc(100)),
    )
    .unwrap_err();
    assert!(e.to_string().contains("limit"), "{e}");
}

#[test]
fn superblock_v2_pointing_past_the_end_is_an_error() {
    // Our writer's superblock v2: end-of-file address at 28, root object
    // header address at 36 (then the checksum, which also stops a reader).
    let mut good = Vec::new();
    write_tensors(&mut good, [("w", &t32(&[2], &[1., 2.]), true)]).unwrap();
    assert_eq!(good[8], 2);
    for at in [28usize, 36] {
        let mut bad = good.clone();
        bad[at..at + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
        assert!(parse(&bad).is_err());
    }
}
