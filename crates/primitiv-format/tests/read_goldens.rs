//! Every golden file written by the C++ library reads back with the content its sidecar records.

mod common;

use common::*;
use primitiv_format::{DataType, File, ReadOptions};

#[test]
fn every_golden_reads_with_its_sidecar_content() {
    for path in goldens() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).unwrap();
        let side = sidecar(&path);
        let file = File::parse(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            file.data_type().code() as u64,
            side["header"]["data_type"].as_u64().unwrap(),
            "{name}"
        );
        let c = &side["content"];
        match &file {
            File::Shape(s) => check_shape(s, c, &name),
            File::Tensor(t) => {
                check_tensor(t, c, &name);
                // zero-copy: the data lies inside the input
                let r = bytes.as_ptr_range();
                assert!(r.contains(&t.data().as_ptr()), "{name}: data is borrowed");
            }
            File::Parameter(p) => check_param(p, c, &name),
            File::Model(m) => check_model(m, c, &name),
            File::Optimizer(o) => check_optimizer_raw(o, c, &name),
        }
        // asking for the right type works, asking for another fails
        let dt = file.data_type();
        assert!(
            File::parse_with(&bytes, &ReadOptions::expecting(dt)).is_ok(),
            "{name}"
        );
        let other = if dt == DataType::Model {
            DataType::Parameter
        } else {
            DataType::Model
        };
        let e = File::parse_with(&bytes, &ReadOptions::expecting(other)).unwrap_err();
        assert!(
            e.to_string().contains("data type mismatched"),
            "{name}: {e}"
        );
    }
}

#[test]
fn column_major_with_batch_slowest() {
    let bytes = std::fs::read(testdata().join("tensor_2x3.data")).unwrap();
    let t = primitiv_format::Tensor::parse(&bytes).unwrap();
    // the matrix [[1,3,5],[2,4,6]] is stored 1..6
    assert_eq!(&*t.values(), &[1., 2., 3., 4., 5., 6.]);
    assert_eq!(t.to_row_major_vec(), vec![1., 3., 5., 2., 4., 6.]);
    let core = t.to_core().unwrap();
    assert_eq!(core.dims(), &[2, 3]);
    assert_eq!(
        &*core.to_row_major().unwrap().view::<f32>().unwrap(),
        &[1., 3., 5., 2., 4., 6.]
    );

    let bytes = std::fs::read(testdata().join("tensor_2x2_batch3.data")).unwrap();
    let t = primitiv_format::Tensor::parse(&bytes).unwrap();
    assert_eq!(t.shape().batch(), 3);
    let core = t.to_core().unwrap();
    assert_eq!(
        core.dims(),
        &[2, 2, 3],
        "batch is the slowest (last column-major) axis"
    );
    assert_eq!(core.order(), tensor_core::MemoryOrder::ColumnMajor);
}
