//! Every refusal's text, written out: the `Display` of each variant is
//! the reason exactly as the old `format!`s wrote it.

use super::*;
use crate::import::onnx_graph::elem;

#[test]
fn display_is_the_refusal_text() {
    let cases = [
        (
            LowerError::NoTennisOp { op: "Foo".into() },
            "no TenniS operator for Foo",
        ),
        (
            LowerError::UnsupportedAttr {
                attr: "direction",
                value: format!("{:?}", "reverse"),
            },
            "direction=\"reverse\"",
        ),
        (
            LowerError::NotConstant { what: "axes" },
            "axes computed at run time",
        ),
        (
            LowerError::UnknownShape { name: "x".into() },
            "no shape known for \"x\"",
        ),
        (LowerError::DType { elem: elem::BOOL }, "a BOOL input"),
        (
            LowerError::AcrossBatch {
                what: "reshape across",
            },
            "reshape across the symbolic batch dimension (fix it with --input-shape)",
        ),
        (
            LowerError::AxisOutOfRange { axis: 3, rank: 2 },
            "axis 3 out of range for rank 2",
        ),
        (LowerError::MissingInput { index: 1 }, "input 1 missing"),
        (LowerError::NoOutput, "no output"),
        (
            LowerError::FoldTooLarge {
                node: "Expand e".into(),
            },
            "Expand e: too large to fold",
        ),
        (
            LowerError::IndexOutOfRange {
                index: -4,
                of: "dimension",
                size: 3,
            },
            "index -4 out of range for a dimension of 3",
        ),
        (
            LowerError::ConstantKind {
                attr: "sparse_value".into(),
            },
            "attribute sparse_value",
        ),
        (
            LowerError::ConstantValue {
                attr: "value_floats",
            },
            "value_floats",
        ),
        (LowerError::ConstantWithoutValue, "Constant without a value"),
        (
            LowerError::NeedsInputShape {
                what: "a symbolic dimension",
                plural: false,
            },
            "a symbolic dimension (fix it with --input-shape)",
        ),
        (
            LowerError::NeedsInputShape {
                what: "symbolic or empty dimensions",
                plural: true,
            },
            "symbolic or empty dimensions (fix them with --input-shape)",
        ),
        (LowerError::TooLarge("pads too large"), "pads too large"),
        (
            LowerError::ElemType {
                elem: elem::INT32,
                what: "input",
                why: "NNabla computes in f32",
            },
            "INT32 input (NNabla computes in f32)",
        ),
        (
            LowerError::Value {
                name: "auto_pad",
                value: "SAME_LOWER".into(),
            },
            "auto_pad SAME_LOWER",
        ),
        (LowerError::Missing { what: "indices" }, "indices missing"),
        (LowerError::Absent { what: "starts" }, "no starts"),
        (LowerError::from("free text"), "free text"),
    ];
    for (e, want) in cases {
        assert_eq!(String::from(e), want);
    }
}

/// The texts the `format!`s these variants replace wrote, written out.
#[test]
fn rewrite_and_control_flow_texts_are_the_refusals() {
    let rewrites = [
        (
            RewriteError::NotYetAnOperator {
                opset: 5,
                since: Some(6),
            },
            "not an operator of ONNX opset 5; it appeared in opset 6",
        ),
        (
            RewriteError::MissingAttr {
                attr: "to",
                opset: None,
            },
            "no attribute to",
        ),
        (
            RewriteError::NotConstant {
                what: "tiles or axis",
                opset: 5,
            },
            "tiles or axis computed at run time at opset 5",
        ),
        (
            RewriteError::TrainingMode {
                opset: 6,
                does: "drops elements at random",
            },
            "is_test 0 at opset 6: training mode, which drops elements at random",
        ),
        (
            RewriteError::attr("no max", 5, " (it clips nothing)"),
            "no max at opset 5 (it clips nothing)",
        ),
        (
            RewriteError::UnknownShape("slope"),
            "the shape of its slope is not known",
        ),
    ];
    for (e, want) in rewrites {
        assert_eq!(e.to_string(), want);
    }
    let flows = [
        (
            ControlFlowError::TripCountAtRunTime { name: "n".into() },
            "its trip count \"n\" is computed at run time; a constant one (an initializer, \
             folded shapes, or --input-value on the graph input it comes from) would unroll it",
        ),
        (
            ControlFlowError::ConditionAtRunTime { name: "c".into() },
            "its condition \"c\" is computed at run time; a constant true one (an \
             initializer, folded values, or --input-value on the graph input it comes from) \
             would unroll it",
        ),
        (
            ControlFlowError::NeverStops,
            "it has no trip count and its body keeps its condition: it would never stop",
        ),
        (
            ControlFlowError::BodyConditionAtRunTime,
            "its body computes its condition at run time (a loop that may stop early on what \
             it computes)",
        ),
        (
            ControlFlowError::NoIteration,
            "it runs no iteration (a trip count of 0 or a false condition), and an output \
             stacked over the iterations would be empty",
        ),
        (
            ControlFlowError::TooManyNodes {
                iterations: 1000,
                body: 300,
                limit: 200_000,
            },
            "1000 iterations of a body of 300 nodes, more than the 200000 nodes unrolled",
        ),
        (
            ControlFlowError::AlongBatch(Box::new(ControlFlowError::UnknownLength {
                name: "x".into(),
            })),
            "the length of its sequence \"x\" is not known (--input-shape would fix it) \
             (along the batch axis 0)",
        ),
        (
            ControlFlowError::PartialLengths {
                name: "l".into(),
                steps: 4,
            },
            "its sequence lengths \"l\" are not all the full length 4 (only sequences of \
             one static length are unrolled)",
        ),
        (
            ControlFlowError::LengthsAtRunTime {
                name: "l".into(),
                steps: 4,
            },
            "its sequence lengths \"l\" are computed at run time; constant ones, all 4 (an \
             initializer, or --input-value on the graph input they come from), or none \
             would unroll it",
        ),
        (
            ControlFlowError::SubgraphOutputs {
                key: "then_branch",
                has: 2,
                node: 1,
            },
            "its then_branch has 2 outputs, the node 1",
        ),
        (
            ControlFlowError::BranchShapes {
                output: "y".into(),
                then_shape: Some(vec![2, 3]),
                else_shape: Some(vec![]),
                inputs: vec!["sr".into(), "t".into()],
            },
            "its condition is computed at run time, and its branches give y different shapes \
             ([2, 3] and []), so it is not computed as both branches and a select; its \
             condition is computed at run time from input(s) sr, t; --input-value sr=... \
             --input-value t=... (ConvertOptions::input_values) would make it importable",
        ),
        (
            ControlFlowError::BranchShapes {
                output: "y".into(),
                then_shape: None,
                else_shape: Some(vec![1]),
                inputs: vec![],
            },
            "its condition is computed at run time, and its branches give y different shapes \
             (unknown and [1]), so it is not computed as both branches and a select; its \
             condition is computed at run time; fixing the input it depends on with \
             --input-value NAME=... would make it importable",
        ),
    ];
    for (e, want) in flows {
        assert_eq!(e.to_string(), want);
    }
}
