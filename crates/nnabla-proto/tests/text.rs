//! The text format: every syntax protobuf allows, Python's merge semantics
//! and errors, and a printer identical to Python's `text_format`.

use std::path::{Path, PathBuf};

use nnabla_proto::*;

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/nnabla")
}

fn edge_case(name: &str) -> serde_json::Value {
    let all: serde_json::Value =
        serde_json::from_slice(&std::fs::read(testdata().join("edge_cases.json")).unwrap())
            .unwrap();
    all[name].clone()
}

fn dims(m: &NNablaProtoBuf) -> Vec<i64> {
    m.network[0].variable[0]
        .shape
        .clone()
        .unwrap_or_default()
        .dim
}

#[test]
fn all_standard_syntax_is_accepted() {
    // NNC's compact style (edge case text_compact_forms: dims [-1, 8])
    let want = edge_case("text_compact_forms")["result"].clone();
    let want: Vec<i64> = serde_json::from_value(want).unwrap();
    for text in [
        "network { variable { shape: { dim:-1 dim: 8 } } }",
        "network { variable { shape { dim: [-1, 8] } } }",
        "network: { variable: { shape: < dim: -1; dim: 8, > } }",
        "# comment\nnetwork {  # trailing comment\n variable {\n shape { dim: -1 }\n shape { dim: [8] } } }\n",
        "network { variable { shape { dim: -0x1 dim: 010 } } }",
    ] {
        let m = text::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(dims(&m), want, "{text}");
    }
    // strings: both quotes, adjacent literals, every escape kind
    let m = text::parse(
        r#"network { name: 'r\303\251' "seau" } network { name: "\xc3\xa9\u00e9\t\"\'\\\?\a" }"#,
    )
    .unwrap();
    assert_eq!(m.network[0].name, "réseau");
    assert_eq!(m.network[1].name, "éé\t\"'\\?\u{7}");
    // floats: integers, exponents, suffix f, inf/nan; bools in every spelling
    let m = text::parse(
        "parameter { data: [1, 2.5f, -1e-3, inf, -Infinity, nan, .5] need_grad: t }\n\
         parameter { need_grad: True } parameter { need_grad: 1 }",
    )
    .unwrap();
    let d = &m.parameter[0].data;
    assert_eq!(&d[..3], &[1.0, 2.5, -1e-3]);
    assert_eq!((d[3], d[4]), (f32::INFINITY, f32::NEG_INFINITY));
    assert!(d[5].is_nan());
    assert_eq!(d[6], 0.5);
    assert!(m.parameter.iter().all(|p| p.need_grad));
    // empty lists, empty messages, a trailing separator
    let m =
        text::parse("network { variable: [] function: [{ name: 'f' }, { name: 'g' }], }").unwrap();
    assert_eq!(m.network[0].function.len(), 2);
    // the function parameter oneof and maps
    let m = text::parse(
        "network { function { type: 'ReLU' relu_param { inplace: true } } }\n\
         optimizer { solver { type: 'Adam' adam_param { alpha: 0.001 }\n\
           states { key: 'w' value { t: 3 } } states { key: 'a' value { t: 1 } } } }",
    )
    .unwrap();
    assert!(matches!(
        m.network[0].function[0].parameter,
        Some(proto::function::Parameter::ReluParam(ref p)) if p.inplace
    ));
    let solver = m.optimizer[0].solver.as_ref().unwrap();
    assert_eq!(solver.states.len(), 2);
    // maps print sorted by key
    let text = text::print(&m).unwrap();
    let a = text.find("key: \"a\"").unwrap();
    let w = text.find("key: \"w\"").unwrap();
    assert!(a < w, "{text}");
}

#[test]
fn merge_semantics_follow_python() {
    // two files, one network each: both networks (edge case two_nntxt_merged)
    let want: Vec<String> =
        serde_json::from_value(edge_case("two_nntxt_merged")["result"].clone()).unwrap();
    let m = text::parse_all([
        "network { name: 'net1' batch_size: 1 }\nglobal_config { default_context { device_id: '0' array_class: 'A' } }",
        "network { name: 'net2' }\nglobal_config { default_context { device_id: '1' } }",
    ])
    .unwrap();
    let names: Vec<String> = m.network.iter().map(|n| n.name.clone()).collect();
    assert_eq!(names, want);
    // singular fields overwritten, sub-messages merged
    let ctx = m.global_config.unwrap().default_context.unwrap();
    assert_eq!(
        (ctx.device_id.as_str(), ctx.array_class.as_str()),
        ("1", "A")
    );
    // within one file, a repeated singular field: the last value wins (Merge)
    let m = text::parse("network { name: 'a' name: 'b' }").unwrap();
    assert_eq!(m.network[0].name, "b");
    // a later oneof member replaces the earlier one
    let m = text::parse("network { function { relu_param {} affine_param { base_axis: 2 } } }")
        .unwrap();
    assert!(matches!(
        m.network[0].function[0].parameter,
        Some(proto::function::Parameter::AffineParam(ref p)) if p.base_axis == 2
    ));
    // text::merge into an existing message; on error it is left unchanged
    let mut root = text::parse("network { name: 'x' }").unwrap();
    let before = root.clone();
    assert!(text::merge(&mut root, "network { name: 'y' bogus: 1 }").is_err());
    assert_eq!(root, before);
    text::merge(&mut root, "network { name: 'y' }").unwrap();
    assert_eq!(root.network.len(), 2);
}

#[test]
fn errors_name_line_and_column() {
    let want = edge_case("unknown_text_field")["error"]
        .as_str()
        .unwrap()
        .to_string();
    let e = text::parse("network {\n  name: \"n\"\n  batch_size: 1\n  future_field: 3\n}\n")
        .unwrap_err();
    // Python: `ParseError: 4:3 : Message type "Network" has no field named "future_field".`
    assert!(want.contains("4:3 : Message type \"Network\" has no field named \"future_field\""));
    assert_eq!(
        e.to_string(),
        "4:3: Message type \"Network\" has no field named \"future_field\""
    );
    let cases = [
        (
            "network { name: \"abc\n}",
            "1:17: string missing ending quote",
        ),
        ("network { name: 'abc", "1:17: string missing ending quote"),
        ("network { batch_size: 1.5 }", "1:23: expected an integer"),
        (
            "network { batch_size: 99999999999999999999 }",
            "out of range",
        ),
        ("network { name 'x' }", "1:16: expected \":\""),
        ("network { name: x }", "1:17: expected a string"),
        ("network {", "1:10: expected \"}\", found end of input"),
        ("network }", "1:9: expected \"{\" or \"<\""),
        ("}", "1:1: expected a field name"),
        (
            "network { variable { shape { dim: [1, 2 } } }",
            "expected \",\"",
        ),
        ("[ext.x] {}", "not supported"),
        (
            "parameter { need_grad: yes }",
            "expected \"true\" or \"false\"",
        ),
        ("network { name: '\\x' }", "hex"),
        ("network { name: '\\400' }", "octal"),
        ("network { name: '\\377' }", "UTF-8"),
        ("network { name: 'a' @ }", "1:21: unexpected character '@'"),
        (
            "optimizer { solver { states { key: 'x' value { t: -1 } } } }",
            "out of range",
        ),
    ];
    for (text, needle) in cases {
        let e = text::parse(text).unwrap_err().to_string();
        assert!(e.contains(needle), "{text:?}: {e}");
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    for open in ["network {", "{", "network <", "network: ["] {
        let text = open.repeat(10_000);
        assert!(text::parse(&text).is_err(), "{open}");
    }
    // The schema is not recursive, so real nesting stops at its depth; the
    // parser also refuses anything deeper than text::MAX_DEPTH.
    assert_eq!(text::MAX_DEPTH, 100);
}

#[test]
fn printer_matches_python_text_format() {
    // edge case non_ascii_text_output
    let want = edge_case("non_ascii_text_output")["result"]
        .as_str()
        .unwrap()
        .to_string();
    let m = text::parse("network { name: 'réseau' }").unwrap();
    assert_eq!(text::print(&m).unwrap(), want);
    // edge case float_text_formatting
    let want = edge_case("float_text_formatting")["result"]
        .as_str()
        .unwrap()
        .to_string();
    let values = [
        0.1f32,
        1.0,
        1e-5,
        1e-8,
        123456790.0,
        3.4e38,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -0.0,
        0.0001,
        1e16,
        2.8026e-45,
    ];
    let m = NNablaProtoBuf {
        parameter: vec![Parameter {
            data: values.to_vec(),
            ..Default::default()
        }],
        ..Default::default()
    };
    assert_eq!(text::print(&m).unwrap(), want);
    // the streaming parameter writer prints the same bytes as text::print
    let t = tensor_core::Tensor::from_values([13], &values).unwrap();
    let mut out = Vec::new();
    text::write_parameters(&mut out, [("", &t, false)]).unwrap();
    let shaped = NNablaProtoBuf {
        parameter: vec![Parameter {
            shape: Some(Shape { dim: vec![13] }),
            data: values.to_vec(),
            ..Default::default()
        }],
        ..Default::default()
    };
    assert_eq!(
        String::from_utf8(out).unwrap(),
        text::print(&shaped).unwrap()
    );
    // empty sub-messages print on two lines; defaults are not printed
    let m = text::parse("network { name: '' batch_size: 0 function { relu_param {} } }").unwrap();
    assert_eq!(
        text::print(&m).unwrap(),
        "network {\n  function {\n    relu_param {\n    }\n  }\n}\n"
    );
}

#[test]
fn text_binary_round_trips_preserve_the_message() {
    for entry in std::fs::read_dir(testdata()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "nntxt") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let m = text::parse(&text).unwrap();
        let back = binary::decode(&binary::encode(&m)).unwrap();
        assert_eq!(back, m, "{}", path.display());
        let printed = text::print(&m).unwrap();
        assert_eq!(text::parse(&printed).unwrap(), m, "{}", path.display());
        assert_eq!(
            text::print(&text::parse(&printed).unwrap()).unwrap(),
            printed
        );
    }
}

#[test]
fn truncated_text_never_panics() {
    let text = std::fs::read_to_string(testdata().join("mlp_with_params.nntxt")).unwrap();
    let mut errors = 0;
    for cut in 0..text.len() {
        if let Some(prefix) = text.get(..cut)
            && text::parse(prefix).is_err()
        {
            errors += 1;
        }
    }
    // Only cuts between top-level fields (or inside trailing whitespace) parse.
    assert!(errors > text.len() * 9 / 10, "{errors} of {}", text.len());
}
