//! TenniS → ONNX refusals of the comparison, integer, matrix and
//! packed-output operators: each names the operator and says why, and none panics.

mod common;

use bubble_module::Packed;
use common::{export_refusal as refusal, int};
use tensor_core::Tensor;

#[test]
fn equal_of_operands_of_different_ranks_is_refused() {
    let e = refusal(&[2, 3], |b, x| {
        let c = b
            .constant("c", Tensor::from_values([3], &[1f32, 2.0, 3.0]).unwrap())
            .unwrap();
        b.op_with("equal", "y", &[x, c], Vec::<(&str, Packed)>::new())
            .unwrap()
    });
    assert!(e.contains("equal of a rank-2 and a rank-1 operand"), "{e}");
}

#[test]
fn mod_of_float_values_is_refused() {
    let e = refusal(&[4], |b, x| {
        b.op_with("mod", "y", &[x, x], Vec::<(&str, Packed)>::new())
            .unwrap()
    });
    assert!(e.contains("mod on integers only"), "{e}");
}

#[test]
fn matmul_with_a_3d_second_operand_is_refused() {
    let e = refusal(&[2, 3, 4], |b, x| {
        let w = b
            .constant("w", Tensor::from_values([2, 4, 5], &[0.5f32; 40]).unwrap())
            .unwrap();
        b.op_with("matmul", "y", &[x, w], Vec::<(&str, Packed)>::new())
            .unwrap()
    });
    assert!(e.contains("matmul with a rank-3 second operand"), "{e}");
}

#[test]
fn a_field_past_the_last_is_an_error_not_a_panic() {
    let e = refusal(&[6, 2], |b, x| {
        let c = b
            .op_with(
                "chunk",
                "c",
                &[x],
                vec![("chunks", int(3)), ("dim", int(0))],
            )
            .unwrap();
        b.op_with("_field", "y", &[c], vec![("offset", int(3))])
            .unwrap()
    });
    assert!(e.contains("field 3 of a chunk with 3 fields"), "{e}");
}
