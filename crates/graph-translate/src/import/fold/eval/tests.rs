//! The evaluators' unit tests, hostile constants among them.

use super::*;
use onnx_format::proto::AttributeProto;

fn node(op: &str, axis: Option<i64>) -> Node {
    Node {
        op: op.into(),
        domain: String::new(),
        name: op.into(),
        inputs: vec![],
        outputs: vec!["y".into()],
        attrs: axis
            .map(|v| AttributeProto {
                name: Some("axis".into()),
                i: Some(v),
                ..Default::default()
            })
            .into_iter()
            .collect(),
    }
}

fn c(e: i32, dims: &[usize], v: &[f64]) -> Option<Const> {
    Some(Const::from_f64(e, dims.to_vec(), v).unwrap())
}

/// The rule of `n`'s operator in the fold table.
fn rule(n: &Node) -> Rule {
    super::super::foldable(&n.op).unwrap().rule
}

fn run(n: &Node, opset: i64, ins: &[Option<Const>]) -> Result<(Vec<usize>, Vec<f64>), String> {
    eval(n, opset, ins, rule(n))
        .map(|v| (v[0].dims().to_vec(), v[0].values()))
        .map_err(String::from)
}

#[test]
fn concat_refuses_parts_whose_shapes_do_not_fit() {
    let n = node("Concat", Some(1));
    let a = c(elem::FLOAT, &[2, 1], &[1.0, 2.0]);
    let ok = run(&n, 13, &[a.clone(), c(elem::FLOAT, &[2, 1], &[3.0, 4.0])]);
    assert_eq!(ok.unwrap(), (vec![2, 2], vec![1.0, 3.0, 2.0, 4.0]));
    // A second part with one row for the first's two: refused, not
    // read past its end.
    let short = run(&n, 13, &[a.clone(), c(elem::FLOAT, &[1, 1], &[3.0])]);
    assert_eq!(short.unwrap_err(), "Concat Concat: ranks differ");
    let rank = run(&n, 13, &[a, c(elem::FLOAT, &[2], &[3.0, 4.0])]);
    assert_eq!(rank.unwrap_err(), "Concat Concat: ranks differ");
    let axis = run(
        &node("Concat", Some(2)),
        13,
        &[c(elem::FLOAT, &[2], &[1.0, 2.0])],
    );
    assert_eq!(axis.unwrap_err(), "Concat Concat: axis");
}

#[test]
fn gather_refuses_indices_out_of_range() {
    let n = node("Gather", Some(0));
    let data = c(elem::FLOAT, &[3], &[10.0, 20.0, 30.0]);
    let last = run(&n, 13, &[data.clone(), c(elem::INT64, &[1], &[-1.0])]);
    assert_eq!(last.unwrap(), (vec![1], vec![30.0]));
    for i in [3.0, -4.0, i64::MAX as f64, i64::MIN as f64] {
        let e = run(&n, 13, &[data.clone(), c(elem::INT64, &[1], &[i])]);
        assert_eq!(e.unwrap_err(), "Gather Gather: index out of range", "{i}");
    }
    let axis = run(
        &node("Gather", Some(1)),
        13,
        &[data, c(elem::INT64, &[1], &[0.0])],
    );
    assert_eq!(axis.unwrap_err(), "Gather Gather: axis");
}

#[test]
fn slice_takes_extreme_starts_ends_and_steps_without_overflow() {
    let n = node("Slice", None);
    let data = c(elem::FLOAT, &[3], &[10.0, 20.0, 30.0]);
    let int = |v: f64| c(elem::INT64, &[1], &[v]);
    let (min, max) = (i64::MIN as f64, i64::MAX as f64);
    // A step of i64::MIN from the end: the last element only.
    let back = run(&n, 13, &[data.clone(), int(max), int(min), None, int(min)]);
    assert_eq!(back.unwrap(), (vec![1], vec![30.0]));
    // A step of i64::MAX from the start: the first element only.
    let fwd = run(&n, 13, &[data.clone(), int(min), int(max), None, int(max)]);
    assert_eq!(fwd.unwrap(), (vec![1], vec![10.0]));
    // An axis out of range and a zero step are refused.
    let axis = run(&n, 13, &[data.clone(), int(0.0), int(1.0), int(1.0)]);
    assert_eq!(axis.unwrap_err(), "Slice Slice: slice parameters");
    let zero = run(&n, 13, &[data, int(0.0), int(1.0), None, int(0.0)]);
    assert_eq!(zero.unwrap_err(), "Slice Slice: slice parameters");
}

#[test]
fn range_refuses_an_empty_start() {
    let n = node("Range", None);
    let e = run(
        &n,
        13,
        &[
            c(elem::FLOAT, &[0], &[]),
            c(elem::FLOAT, &[], &[3.0]),
            c(elem::FLOAT, &[], &[1.0]),
        ],
    );
    assert_eq!(e.unwrap_err(), "Range Range: no start");
}

/// A node with integer-list attribute `name` (`perm`, `axes`).
fn with_ints(op: &str, name: &str, v: &[i64]) -> Node {
    let mut n = node(op, None);
    n.attrs.push(AttributeProto {
        name: Some(name.into()),
        ints: v.to_vec(),
        ..Default::default()
    });
    n
}

/// A constant whose dimensions say `dims` but whose values cannot be
/// read as numbers (an 8-bit float type): `values()` is empty.
fn unreadable(dims: &[usize]) -> Option<Const> {
    let n: usize = dims.iter().product();
    let t = tensor_core::Tensor::new(tensor_core::DType::F8E8M0Fnu, dims.to_vec(), vec![0u8; n]);
    Some(Const {
        elem: elem::FLOAT,
        tensor: t.unwrap().into_static(),
    })
}

#[test]
fn transpose_refuses_a_perm_that_is_not_a_permutation() {
    let data = c(elem::FLOAT, &[3, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let ok = run(
        &with_ints("Transpose", "perm", &[1, 0]),
        13,
        std::slice::from_ref(&data),
    );
    assert_eq!(
        ok.unwrap(),
        (vec![2, 3], vec![1.0, 3.0, 5.0, 2.0, 4.0, 6.0])
    );
    // A repeated axis would read past the data; negative and
    // out-of-range axes and a short perm are refused too.
    for perm in [
        &[0, 0][..],
        &[1, 1],
        &[-1, 0],
        &[0, 2],
        &[0],
        &[i64::MIN, 0],
    ] {
        let e = run(
            &with_ints("Transpose", "perm", perm),
            13,
            std::slice::from_ref(&data),
        );
        assert_eq!(e.unwrap_err(), "Transpose Transpose: perm", "{perm:?}");
    }
}

#[test]
fn values_that_do_not_match_their_dimensions_are_refused() {
    let odd = unreadable(&[3]);
    assert!(odd.as_ref().unwrap().values().is_empty());
    let three = c(elem::FLOAT, &[3], &[1.0, 2.0, 3.0]);
    let shape = c(elem::INT64, &[1], &[3.0]);
    let idx = c(elem::INT64, &[1], &[2.0]);
    let cases: Vec<(Node, Vec<Option<Const>>)> = vec![
        (node("Add", None), vec![odd.clone(), three.clone()]),
        (node("Add", None), vec![three.clone(), odd.clone()]),
        (node("Transpose", None), vec![odd.clone()]),
        (node("ReduceProd", None), vec![odd.clone()]),
        (node("Expand", None), vec![odd.clone(), shape]),
        (node("Gather", Some(0)), vec![odd.clone(), idx]),
        (
            node("Where", None),
            vec![three.clone(), odd.clone(), three.clone()],
        ),
        (node("Concat", Some(0)), vec![three, odd.clone()]),
        (node("Neg", None), vec![odd]),
    ];
    for (n, ins) in cases {
        let e = run(&n, 13, &ins).unwrap_err();
        assert!(
            e.ends_with("values do not match its dimensions"),
            "{}: {e}",
            n.op
        );
    }
}

#[test]
fn results_grow_only_up_to_the_bound() {
    let too_large = |op: &str| format!("{op} {op}: too large to fold");
    // Expand of one element to 2^39, and to dimensions whose product
    // overflows.
    let one = c(elem::FLOAT, &[1], &[1.0]);
    for shape in [&[8192.0, 8192.0, 8192.0][..], &[9.0e15, 9.0e15, 9.0e15]] {
        let s = c(elem::INT64, &[3], shape);
        let e = run(&node("Expand", None), 13, &[one.clone(), s]);
        assert_eq!(e.unwrap_err(), too_large("Expand"), "{shape:?}");
    }
    // Broadcasting [8192, 1] with [1, 8192]: 2^26 elements from 2^14.
    let col = Const::from_f64(elem::FLOAT, vec![8192, 1], &[1.0; 8192]);
    let row = Const::from_f64(elem::FLOAT, vec![1, 8192], &[1.0; 8192]);
    let e = run(&node("Add", None), 13, &[col.clone(), row.clone()]);
    assert_eq!(e.unwrap_err(), too_large("Add"));
    let e = run(&node("Where", None), 13, &[col, row, one.clone()]);
    assert_eq!(e.unwrap_err(), too_large("Where"));
    // Gather of 8192 rows of 4096: 2^25 elements.
    let rows = Const::from_f64(elem::FLOAT, vec![1, 4096], &[1.0; 4096]);
    let idx = Const::from_f64(elem::INT64, vec![8192], &[0.0; 8192]);
    let e = run(&node("Gather", Some(0)), 13, &[rows, idx]);
    assert_eq!(e.unwrap_err(), too_large("Gather"));
    // A result as large as an input above the bound is accepted (the
    // input is already held), one element more is not.
    let n = MAX_FOLD_ELEMENTS + 1;
    let t = tensor_core::Tensor::new(tensor_core::DType::U8, vec![n], vec![0u8; n]);
    let held = [Some(Const {
        elem: elem::UINT8,
        tensor: t.unwrap().into_static(),
    })];
    let n8 = node("Add", None);
    let f = Args {
        node: &n8,
        opset: 13,
        ins: &held,
    };
    assert_eq!(f.bounded(&[n]), Ok(n));
    assert_eq!(
        f.bounded(&[n + 1]).unwrap_err().to_string(),
        too_large("Add")
    );
}

#[test]
fn empty_constants_with_huge_dimensions_fold_without_overflow() {
    // A 0 dimension beside two of 2^40: no element, but the strides
    // and partial products overflow.
    let dims = [0, 1 << 40, 1 << 40];
    let empty = Some(Const {
        elem: elem::FLOAT,
        tensor: tensor_core::Tensor::new(tensor_core::DType::F32, dims.to_vec(), Vec::<u8>::new())
            .unwrap()
            .into_static(),
    });
    let idx = c(elem::INT64, &[1], &[0.0]);
    for (n, ins) in [
        (node("Transpose", None), vec![empty.clone()]),
        (node("ReduceProd", None), vec![empty.clone()]),
        (with_ints("ReduceProd", "axes", &[0]), vec![empty.clone()]),
        (node("Flatten", Some(1)), vec![empty.clone()]),
        (node("Concat", Some(0)), vec![empty.clone(), empty.clone()]),
        (node("Gather", Some(1)), vec![empty.clone(), idx]),
        (node("Neg", None), vec![empty.clone()]),
    ] {
        // Refused or folded, never a panic or a count through 2^80.
        match run(&n, 13, &ins) {
            Ok((d, v)) => assert!(v.is_empty() && d.contains(&0), "{}: {d:?}", n.op),
            Err(e) => assert!(e.ends_with("too large to fold"), "{}: {e}", n.op),
        }
    }
}

#[test]
fn reshape_and_size_refuse_overflowing_counts() {
    use super::super::{fold, reshape_dims};
    assert_eq!(reshape_dims(&[2], &[i64::MAX, i64::MAX], false), None);
    // An empty tensor of huge dimensions reshapes without overflow.
    assert_eq!(
        reshape_dims(&[0, 1 << 40, 1 << 40], &[-1, 1 << 40], false),
        Some(vec![0, 1 << 40])
    );
    assert_eq!(reshape_dims(&[2, 3], &[3, -1], false), Some(vec![3, 2]));
    let mut size = node("Size", None);
    size.inputs = vec!["x".into()];
    let huge = |_: &str| Some(vec![1i64 << 40, 1 << 40, 1 << 40]);
    let e = fold(&size, 13, &|_| None, &huge).unwrap().unwrap_err();
    assert_eq!(e.to_string(), "Size Size: too large to fold");
}

#[test]
fn quantize_rounds_half_to_even_and_saturates_dequantize_per_axis() {
    let s = c(elem::FLOAT, &[], &[0.5]);
    let z = c(3, &[], &[-3.0]);
    let x = c(elem::FLOAT, &[6], &[0.25, 0.75, -0.25, 100.0, -100.0, 1.25]);
    let q = node("QuantizeLinear", None);
    let ins = [x, s, z];
    assert!(quant::folds(&q, &ins, true));
    // x / 0.5 = 0.5, 1.5, -0.5, 200, -200, 2.5 -> 0, 2, -0, 200, -200, 2; + -3; int8
    let (d, v) = run(&q, 13, &ins).unwrap();
    assert_eq!(d, vec![6]);
    assert_eq!(v, vec![-3.0, -1.0, -3.0, 127.0, -128.0, -1.0]);
    // An int8 weight [2, 3] per output channel (axis 0), dequantised.
    let dq = node("DequantizeLinear", Some(0));
    let w = c(3, &[2, 3], &[-128.0, 0.0, 127.0, 1.0, 2.0, 3.0]);
    let ins = [
        w,
        c(elem::FLOAT, &[2], &[0.5, 0.25]),
        c(3, &[2], &[0.0, 1.0]),
    ];
    assert!(quant::folds(&dq, &ins, false));
    let (d, v) = run(&dq, 13, &ins).unwrap();
    assert_eq!(d, vec![2, 3]);
    assert_eq!(v, vec![-64.0, 0.0, 63.5, 0.0, 0.25, 0.5]);
    // A scale that fits no axis, a blocked one and a 4-bit input stay with the target.
    let bad = [c(3, &[2, 3], &[0.0; 6]), c(elem::FLOAT, &[3], &[1.0; 3])];
    assert!(!quant::folds(&dq, &bad, false));
    let int4 = Const {
        elem: 22,
        tensor: tensor_core::Tensor::from_values(vec![2], &[1i8, 2])
            .unwrap()
            .into_static(),
    };
    assert!(!quant::folds(
        &dq,
        &[Some(int4), c(elem::FLOAT, &[], &[1.0])],
        false
    ));
}

#[test]
fn relu_zeroes_negatives_and_keeps_nan_and_type() {
    let n = node("Relu", None);
    let (d, v) = run(
        &n,
        14,
        &[c(elem::FLOAT, &[5], &[-2.5, -0.0, 0.0, 3.0, f64::NAN])],
    )
    .unwrap();
    assert_eq!(d, [5]);
    assert_eq!(&v[..4], [0.0, -0.0, 0.0, 3.0]);
    assert!(v[4].is_nan());
    let i = eval(&n, 14, &[c(elem::INT32, &[2], &[-3.0, 7.0])], rule(&n)).unwrap();
    assert_eq!(i[0].elem, elem::INT32);
    assert_eq!(i[0].values(), [0.0, 7.0]);
}
