use super::*;
use crate::ALL_DTYPES;

#[test]
fn try_as_slice_says_why_it_cannot_lend() {
    let t = Tensor::from_values([2, 2], &[1i32, 2, 3, 4]).unwrap();
    assert_eq!(t.try_as_slice::<i32>().unwrap(), &[1, 2, 3, 4]);
    assert!(matches!(
        t.try_as_slice::<u32>(),
        Err(Error::DTypeMismatch { .. })
    ));
    let col: Vec<u8> = [1i32, 3, 2, 4]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let c = Tensor::with_order(DType::I32, [2, 2], MemoryOrder::ColumnMajor, col).unwrap();
    let e = c.try_as_slice::<i32>().unwrap_err();
    assert!(e.to_string().contains("column-major"), "{e}");
    // one axis longer than 1: the same bytes in both orders, lent
    let col: Vec<u8> = [5i32, 6].iter().flat_map(|v| v.to_le_bytes()).collect();
    let c = Tensor::with_order(DType::I32, [1, 2], MemoryOrder::ColumnMajor, col).unwrap();
    assert_eq!(c.try_as_slice::<i32>().unwrap(), &[5, 6]);
}

/// Row-major from column-major the obvious way, element by element.
fn reference(src: &[u8], dims: &[usize], elem: usize) -> Vec<u8> {
    let total: usize = dims.iter().product();
    let mut out = vec![0u8; total * elem];
    for r in 0..total {
        // row-major index r -> multi-index -> column-major offset
        let (mut rest, mut c, mut stride) = (r, 0, 1);
        let mut idx = vec![0; dims.len()];
        for k in (0..dims.len()).rev() {
            idx[k] = rest % dims[k];
            rest /= dims[k];
        }
        for k in 0..dims.len() {
            c += idx[k] * stride;
            stride *= dims[k];
        }
        out[r * elem..(r + 1) * elem].copy_from_slice(&src[c * elem..(c + 1) * elem]);
    }
    out
}

#[test]
fn column_to_row_major_agrees_with_the_definition() {
    for elem in [1, 2, 3, 4, 8, 16] {
        for dims in [
            vec![5, 7],
            vec![33, 65],
            vec![64, 32],
            vec![1, 9],
            vec![9, 1],
            vec![3, 4, 5],
            vec![2, 33, 3, 2],
            vec![40, 70, 2],
        ] {
            let n: usize = dims.iter().product::<usize>() * elem;
            let src: Vec<u8> = (0..n).map(|i| (i * 31 % 251) as u8).collect();
            assert_eq!(
                column_to_row_major(&src, &dims, elem),
                reference(&src, &dims, elem),
                "elem {elem}, dims {dims:?}"
            );
        }
    }
}

#[test]
fn new_checks_length() {
    let err = Tensor::new(DType::F32, [2, 2], vec![0u8; 15]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::LengthMismatch {
                expected: 16,
                actual: 15,
                ..
            }
        ),
        "{err}"
    );
    let t = Tensor::new(DType::F32, [2, 2], vec![0u8; 16]).unwrap();
    assert_eq!(t.numel(), 4);
    let scalar = Tensor::new(DType::I64, Shape::scalar(), vec![0u8; 8]).unwrap();
    assert_eq!(scalar.numel(), 1);
    let err = Tensor::new(DType::F32, [1usize << 32, 1usize << 32, 2], vec![]).unwrap_err();
    assert!(matches!(err, Error::ShapeOverflow { .. }));
}

#[test]
fn typed_view_borrows_when_aligned_and_copies_when_not() {
    let values = [1.5f32, -2.0, 3.25];
    let owned = Tensor::from_values([3], &values).unwrap();
    // aligned: a u32 buffer viewed at offset 4
    let mut words = vec![0u32; 4];
    bytemuck::cast_slice_mut::<u32, u8>(&mut words)[4..16].copy_from_slice(owned.bytes());
    let wb: &[u8] = bytemuck::cast_slice(&words);
    let t = Tensor::new(DType::F32, [3], &wb[4..16]).unwrap();
    let v = t.view::<f32>().unwrap();
    assert!(matches!(v, Cow::Borrowed(_)), "aligned view must borrow");
    assert_eq!(&*v, &values);
    // misaligned: offset 5 of a u32 buffer
    let mut mis = vec![0u32; 5];
    bytemuck::cast_slice_mut::<u32, u8>(&mut mis)[5..17].copy_from_slice(owned.bytes());
    let mb: &[u8] = bytemuck::cast_slice(&mis);
    let t = Tensor::new(DType::F32, [3], &mb[5..17]).unwrap();
    let v = t.view::<f32>().unwrap();
    assert!(matches!(v, Cow::Owned(_)), "misaligned view must copy");
    assert_eq!(&*v, &values);
    // wrong type
    assert!(matches!(t.view::<i32>(), Err(Error::DTypeMismatch { .. })));
}

#[test]
fn half_types_and_bool_views() {
    let t = Tensor::from_values([2], &[f16::from_f32(1.5), f16::from_f32(-0.25)]).unwrap();
    assert_eq!(t.dtype(), DType::F16);
    assert_eq!(t.to_f64_vec().unwrap(), vec![1.5, -0.25]);
    let t = Tensor::from_values([1], &[bf16::from_f32(2.0)]).unwrap();
    assert_eq!(t.view::<bf16>().unwrap()[0].to_f32(), 2.0);
    let b = Tensor::new(DType::Bool, [3], vec![1u8, 0, 1]).unwrap();
    assert_eq!(&*b.view_as::<u8>(DType::Bool).unwrap(), &[1, 0, 1]);
    assert!(b.view::<u8>().is_err());
    assert!(
        Tensor::new(DType::Char8, [1], vec![b'a'])
            .unwrap()
            .to_f64_vec()
            .is_none()
    );
}

#[test]
fn column_major_to_row_major() {
    // 2x3 matrix [[1,2,3],[4,5,6]] stored column-major: 1,4,2,5,3,6
    let col = [1f32, 4., 2., 5., 3., 6.];
    let t = Tensor::from_values([2, 3], &col).unwrap();
    let t = Tensor::with_order(
        DType::F32,
        [2, 3],
        MemoryOrder::ColumnMajor,
        t.bytes().to_vec(),
    )
    .unwrap();
    let r = t.to_row_major().unwrap();
    assert_eq!(r.order(), MemoryOrder::RowMajor);
    assert_eq!(&*r.view::<f32>().unwrap(), &[1., 2., 3., 4., 5., 6.]);
    // and back
    let c = r.to_column_major().unwrap();
    assert_eq!(&*c.view::<f32>().unwrap(), &col);
    // a row-major tensor is borrowed, not copied
    let rr = r.to_row_major().unwrap();
    assert!(rr.storage().is_zero_copy());
}

#[test]
fn column_major_3d_matches_index_formula() {
    let dims = [2usize, 3, 4];
    let n = 24;
    // column-major element (i,j,k) at i + 2*(j + 3*k) holds value 100i+10j+k
    let mut col = vec![0i32; n];
    for i in 0..2 {
        for j in 0..3 {
            for k in 0..4 {
                col[i + 2 * (j + 3 * k)] = (100 * i + 10 * j + k) as i32;
            }
        }
    }
    let bytes = Tensor::from_values(dims, &col).unwrap().bytes().to_vec();
    let t = Tensor::with_order(DType::I32, dims, MemoryOrder::ColumnMajor, bytes).unwrap();
    let r = t.to_row_major().unwrap();
    let v = r.view::<i32>().unwrap();
    for i in 0..2 {
        for j in 0..3 {
            for k in 0..4 {
                assert_eq!(v[(i * 3 + j) * 4 + k], (100 * i + 10 * j + k) as i32);
            }
        }
    }
    // with a size-1 axis in the middle and zero-size tensors
    let t = Tensor::with_order(
        DType::U8,
        [2, 1, 2],
        MemoryOrder::ColumnMajor,
        vec![1, 2, 3, 4],
    )
    .unwrap();
    assert_eq!(t.to_row_major().unwrap().bytes(), &[1, 3, 2, 4]);
    let t = Tensor::with_order(DType::U8, [2, 0, 2], MemoryOrder::ColumnMajor, vec![]).unwrap();
    assert!(t.to_row_major().unwrap().bytes().is_empty());
}

fn le<T: Element>(values: &[T]) -> Vec<u8> {
    Tensor::from_values([values.len()], values)
        .unwrap()
        .into_storage()
        .into_vec()
}

/// f32 equality that treats NaN as equal to NaN.
fn same(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x == y || (x.is_nan() && y.is_nan()))
}

#[test]
fn every_numeric_dtype_converts_to_f32() {
    let cases: Vec<(DType, Vec<u8>, Vec<f32>)> = vec![
        (DType::Bool, vec![0, 1, 1], vec![0., 1., 1.]),
        (DType::I8, le(&[-128i8, 127, 0]), vec![-128., 127., 0.]),
        (DType::I16, le(&[-300i16, 1234]), vec![-300., 1234.]),
        (
            DType::I32,
            le(&[-70_000i32, 16_777_217]),
            vec![-70_000., 16_777_216.],
        ),
        (DType::I64, le(&[i64::MIN, 5]), vec![-9.223_372e18, 5.]),
        (DType::U8, le(&[0u8, 255]), vec![0., 255.]),
        (DType::U16, le(&[65_535u16]), vec![65_535.]),
        (DType::U32, le(&[4_000_000_000u32]), vec![4e9]),
        (DType::U64, le(&[u64::MAX]), vec![1.844_674_4e19]),
        (
            DType::F16,
            le(&[f16::from_f32(1.5), f16::from_f32(-0.25), f16::INFINITY]),
            vec![1.5, -0.25, f32::INFINITY],
        ),
        (
            DType::BF16,
            le(&[bf16::from_f32(2.0), bf16::from_f32(-3.5), bf16::NAN]),
            vec![2.0, -3.5, f32::NAN],
        ),
        (DType::F32, le(&[0.1f32, -0.0]), vec![0.1, -0.0]),
        (DType::F64, le(&[0.1f64, 1e300]), vec![0.1, f32::INFINITY]),
        (DType::F8E3M4, vec![0x30, 0x6f], vec![1.0, 15.5]),
        (DType::F8E4M3, vec![0x78, 0x77], vec![f32::INFINITY, 240.0]),
        (DType::F8E4M3B11Fnuz, vec![0x7f, 0x80], vec![30.0, f32::NAN]),
        (
            DType::F8E4M3Fn,
            vec![0x38, 0x7e, 0xb8, 0x01, 0x7f],
            vec![1.0, 448.0, -1.0, 2f32.powi(-9), f32::NAN],
        ),
        (DType::F8E4M3Fnuz, vec![0x40, 0x7f], vec![1.0, 240.0]),
        (
            DType::F8E5M2,
            vec![0x3c, 0x7c, 0x7b, 0x7e, 0xc0],
            vec![1.0, f32::INFINITY, 57344.0, f32::NAN, -2.0],
        ),
        (DType::F8E5M2Fnuz, vec![0x7f, 0x80], vec![57344.0, f32::NAN]),
        (
            DType::F8E8M0Fnu,
            vec![127, 130, 0xff],
            vec![1.0, 8.0, f32::NAN],
        ),
    ];
    let covered: Vec<DType> = cases.iter().map(|c| c.0).collect();
    for d in ALL_DTYPES {
        assert_eq!(d.is_numeric(), covered.contains(&d), "{d}");
    }
    for (d, bytes, want) in cases {
        let n = want.len();
        let t = Tensor::new(d, [n], bytes).unwrap();
        let got = t.to_vec::<f32>().unwrap();
        assert!(same(&got, &want), "{d}: {got:?} != {want:?}");
        // and the same values through f64
        let wide: Vec<f32> = t
            .to_vec::<f64>()
            .unwrap()
            .iter()
            .map(|&x| x as f32)
            .collect();
        assert!(same(&wide, &want), "{d} via f64: {wide:?}");
    }
}

#[test]
fn every_8_bit_float_byte_decodes_as_float8_says() {
    let all: Vec<u8> = (0..=255).collect();
    for d in ALL_DTYPES.into_iter().filter(|&d| crate::float8::is_f8(d)) {
        let t = Tensor::new(d, [256], &all[..]).unwrap();
        let want: Vec<f32> = all
            .iter()
            .map(|&b| crate::float8::f8_to_f32(d, b).unwrap())
            .collect();
        assert!(same(&t.to_vec::<f32>().unwrap(), &want), "{d}");
        // more than one decoding block
        let big = Tensor::new(d, [3000], all.repeat(12)[..3000].to_vec()).unwrap();
        let v = big.to_vec::<f32>().unwrap();
        assert_eq!(v.len(), 3000);
        assert!(same(&v[2560..2816], &want), "{d}");
    }
}

#[test]
fn to_f64_vec_keeps_its_dtypes_and_agrees_with_to_vec() {
    for d in ALL_DTYPES {
        let t = Tensor::new(d, [2], vec![0x41u8; 2 * d.size()]).unwrap();
        match t.to_f64_vec() {
            Some(v) => {
                assert!(d.sum_kind() != crate::SumKind::None, "{d}");
                assert_eq!(v, t.to_vec::<f64>().unwrap(), "{d}");
            }
            None => assert!(d.sum_kind() == crate::SumKind::None, "{d}"),
        }
    }
}

#[test]
fn ints_to_f32_and_f32_to_ints() {
    let t = Tensor::from_values([4], &[-7i32, 0, 123_456, i32::MAX]).unwrap();
    assert_eq!(
        t.to_vec::<f32>().unwrap(),
        vec![-7.0, 0.0, 123_456.0, 2_147_483_648.0]
    );
    let t = Tensor::from_values(
        [8],
        &[
            2.7f32,
            -2.7,
            0.5,
            -0.0,
            3e9,
            -3e9,
            f32::NAN,
            f32::NEG_INFINITY,
        ],
    )
    .unwrap();
    assert_eq!(
        t.to_vec::<i32>().unwrap(),
        vec![2, -2, 0, 0, i32::MAX, i32::MIN, 0, i32::MIN]
    );
    assert_eq!(t.to_vec::<u8>().unwrap(), vec![2, 0, 0, 0, 255, 0, 0, 0]);
    assert_eq!(
        t.to_vec::<bool>().unwrap(),
        vec![true, true, true, false, true, true, true, true]
    );
    // integer to integer wraps (numpy's astype)
    let t = Tensor::from_values([3], &[300i32, -1, 65_536]).unwrap();
    assert_eq!(t.to_vec::<u8>().unwrap(), vec![44, 255, 0]);
    assert_eq!(t.to_vec::<i16>().unwrap(), vec![300, -1, 0]);
    assert_eq!(t.to_vec::<i32>().unwrap(), vec![300, -1, 65_536]);
    // to the half types
    let t = Tensor::from_values([2], &[1.0f64 / 3.0, 65_519.0]).unwrap();
    assert_eq!(
        t.to_vec::<f16>().unwrap(),
        vec![f16::from_f64(1.0 / 3.0), f16::MAX]
    );
    assert_eq!(t.to_vec::<bf16>().unwrap()[0], bf16::from_f32(1.0 / 3.0));
}

#[test]
fn to_vec_gives_row_major_order() {
    // 2x3x4, column-major element (i,j,k) at i + 2*(j + 3*k) holds 100i+10j+k
    let dims = [2usize, 3, 4];
    let mut col = vec![0i16; 24];
    for i in 0..2 {
        for j in 0..3 {
            for k in 0..4 {
                col[i + 2 * (j + 3 * k)] = (100 * i + 10 * j + k) as i16;
            }
        }
    }
    let t = Tensor::with_order(DType::I16, dims, MemoryOrder::ColumnMajor, le(&col)).unwrap();
    let want: Vec<f32> = (0..2)
        .flat_map(|i| (0..3).flat_map(move |j| (0..4).map(move |k| (100 * i + 10 * j + k) as f32)))
        .collect();
    assert_eq!(t.to_vec::<f32>().unwrap(), want);
    assert_eq!(
        t.to_vec::<i16>().unwrap(),
        t.to_row_major().unwrap().view::<i16>().unwrap().to_vec()
    );
    // one-byte elements, and a layout where the order is immaterial
    let t = Tensor::with_order(
        DType::F8E4M3Fn,
        [2, 2],
        MemoryOrder::ColumnMajor,
        vec![0x38, 0x40, 0x30, 0x48],
    )
    .unwrap();
    // [[1, 0.5], [2, 4]] stored column-major as 1, 2, 0.5, 4
    assert_eq!(t.to_vec::<f32>().unwrap(), vec![1.0, 0.5, 2.0, 4.0]);
    let t = Tensor::with_order(
        DType::U8,
        [1, 3, 1],
        MemoryOrder::ColumnMajor,
        vec![1, 2, 3],
    )
    .unwrap();
    assert_eq!(t.to_vec::<u8>().unwrap(), vec![1, 2, 3]);
    let t = Tensor::with_order(DType::U8, [3, 0], MemoryOrder::ColumnMajor, vec![]).unwrap();
    assert!(t.to_vec::<f64>().unwrap().is_empty());
    let t = Tensor::new(DType::F32, Shape::scalar(), le(&[2.5f32])).unwrap();
    assert_eq!(t.to_vec::<f64>().unwrap(), vec![2.5]);
}

#[test]
fn non_numeric_dtypes_are_refused_by_name() {
    let t = Tensor::new(DType::Char8, [3], b"abc".to_vec()).unwrap();
    let err = t.to_vec::<f32>().unwrap_err();
    assert!(
        matches!(
            err,
            Error::NotNumeric {
                dtype: DType::Char8,
                target: "f32"
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "cannot convert char8 elements to f32: char8 is not a numeric type"
    );
    for d in ALL_DTYPES.into_iter().filter(|d| !d.is_numeric()) {
        let t = Tensor::new(d, [1], vec![0u8; d.size()]).unwrap();
        let msg = t.to_vec::<i64>().unwrap_err().to_string();
        assert!(msg.contains(d.name()) && msg.contains("i64"), "{msg}");
        assert!(t.to_vec::<bool>().is_err(), "{d}");
    }
    let q = Tensor::new(DType::Q8(3), [1], vec![16]).unwrap();
    assert!(q.to_vec::<f32>().unwrap_err().to_string().contains("q8_3"));
}

#[test]
fn as_slice_borrows_only_when_exact_aligned_and_row_major() {
    let values = [1.5f32, -2.0, 3.25];
    let bytes = le(&values);
    // aligned: the bytes of a u32 buffer
    let mut words = vec![0u32; 4];
    bytemuck::cast_slice_mut::<u32, u8>(&mut words)[..12].copy_from_slice(&bytes);
    let wb: &[u8] = bytemuck::cast_slice(&words);
    let t = Tensor::new(DType::F32, [3], &wb[..12]).unwrap();
    let s = t.as_slice::<f32>().unwrap();
    assert_eq!(s, &values);
    assert_eq!(s.as_ptr() as *const u8, wb.as_ptr(), "must borrow");
    assert_eq!(t.as_slice::<u32>(), None, "dtype must match exactly");
    assert_eq!(t.as_slice::<i32>(), None);
    // misaligned: the same bytes at offset 1 (of a 4-aligned buffer)
    bytemuck::cast_slice_mut::<u32, u8>(&mut words)[1..13].copy_from_slice(&bytes);
    let wb: &[u8] = bytemuck::cast_slice(&words);
    let t = Tensor::new(DType::F32, [3], &wb[1..13]).unwrap();
    assert_eq!(t.as_slice::<f32>(), None);
    assert_eq!(&*t.view::<f32>().unwrap(), &values);
    assert_eq!(t.to_vec::<f32>().unwrap(), values);
    // bytes never misalign
    let t = Tensor::new(DType::U8, [2], &wb[1..3]).unwrap();
    assert_eq!(t.as_slice::<u8>(), Some(&wb[1..3]));
    // column-major: only when the order does not matter
    let t = Tensor::with_order(DType::F32, [3, 1], MemoryOrder::ColumnMajor, &wb[4..16]).unwrap();
    assert_eq!(t.as_slice::<f32>().map(<[f32]>::len), Some(3));
    let t = Tensor::with_order(DType::U8, [2, 2], MemoryOrder::ColumnMajor, &wb[..4]).unwrap();
    assert_eq!(t.as_slice::<u8>(), None);
    assert_eq!(
        t.to_row_major().unwrap().as_slice::<u8>().map(<[u8]>::len),
        Some(4)
    );
    // empty and scalar
    let t = Tensor::new(DType::F64, [0, 4], Vec::new()).unwrap();
    assert_eq!(t.as_slice::<f64>(), Some(&[][..]));
    let t = Tensor::from_values(Shape::scalar(), &[7u64]).unwrap();
    assert_eq!(t.as_slice::<u64>(), Some(&[7][..]));
}

#[cfg(feature = "ndarray")]
#[test]
fn ndarray_arrays_and_views() {
    use ndarray::{ArrayD, IxDyn, arr2};
    // [[1, 2, 3], [4, 5, 6]] row-major and column-major
    let rows = Tensor::from_values([2, 3], &[1f32, 2., 3., 4., 5., 6.]).unwrap();
    let cols = Tensor::with_order(
        DType::F32,
        [2, 3],
        MemoryOrder::ColumnMajor,
        le(&[1f32, 4., 2., 5., 3., 6.]),
    )
    .unwrap();
    let want = arr2(&[[1f64, 2., 3.], [4., 5., 6.]]).into_dyn();
    for t in [&rows, &cols] {
        let a = t.to_ndarray::<f64>().unwrap();
        assert_eq!(a.shape(), &[2, 3]);
        assert_eq!(a, want);
        assert!(a.is_standard_layout());
        let v = t.as_array_view::<f32>().unwrap();
        assert_eq!(v.shape(), &[2, 3]);
        assert_eq!(v.mapv(f64::from), want);
        assert_eq!(v.as_ptr() as *const u8, t.bytes().as_ptr(), "zero-copy");
        assert!(t.as_array_view::<f64>().is_none());
    }
    assert!(rows.as_array_view::<f32>().unwrap().is_standard_layout());
    assert_eq!(cols.as_array_view::<f32>().unwrap().strides(), &[1, 2]);
    // conversion to integers and bool, a 3-d and a 0-d shape
    let t = Tensor::from_values([2, 1, 2], &[0.5f32, -1.5, 0.0, 9.9]).unwrap();
    let a: ArrayD<i8> = t.to_ndarray().unwrap();
    assert_eq!(
        a,
        ArrayD::from_shape_vec(IxDyn(&[2, 1, 2]), vec![0i8, -1, 0, 9]).unwrap()
    );
    let b = t.to_ndarray::<bool>().unwrap();
    assert_eq!(
        b.iter().copied().collect::<Vec<_>>(),
        [true, true, false, true]
    );
    let s = Tensor::from_values(Shape::scalar(), &[3u16]).unwrap();
    let a = s.to_ndarray::<u64>().unwrap();
    assert_eq!((a.ndim(), a[IxDyn(&[])]), (0, 3));
    assert_eq!(s.as_array_view::<u16>().unwrap().ndim(), 0);
    // misaligned bytes: no view, but the array converts
    let words = vec![0u32; 4];
    let wb: &[u8] = bytemuck::cast_slice(&words);
    let t = Tensor::new(DType::I32, [3], &wb[1..13]).unwrap();
    assert!(t.as_array_view::<i32>().is_none());
    assert_eq!(t.to_ndarray::<i32>().unwrap().len(), 3);
    // refusals
    let c = Tensor::new(DType::Char8, [1], vec![b'x']).unwrap();
    assert!(matches!(
        c.to_ndarray::<f32>(),
        Err(Error::NotNumeric { .. })
    ));
    let huge = Tensor::new(DType::U8, [0, 1usize << 63], Vec::new()).unwrap();
    assert!(matches!(
        huge.to_ndarray::<u8>(),
        Err(Error::ArrayShape { .. })
    ));
    assert!(huge.as_array_view::<u8>().is_none());
}
