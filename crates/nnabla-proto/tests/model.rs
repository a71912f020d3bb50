//! The typed model view and loop expansion, against what the real nnabla
//! 1.39.0 loaded (the `.json` sidecars of the golden files).

use std::path::{Path, PathBuf};

use nnabla_proto::model::{Model, VariableKind, expand_all_loops, expand_loops};
use nnabla_proto::proto::{function, solver};
use nnabla_proto::text;
use serde_json::Value;
use tensor_core::Limits;

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/nnabla")
}

fn text(name: &str) -> String {
    std::fs::read_to_string(testdata().join(name)).unwrap()
}

fn sidecar(name: &str) -> Value {
    serde_json::from_slice(&std::fs::read(testdata().join(format!("{name}.json"))).unwrap())
        .unwrap()
}

#[test]
fn loop_expansion_matches_nnabla() {
    for name in ["loop_nested.nntxt", "loop_recurrent_delay.nntxt"] {
        let model = text::parse(&text(name)).unwrap();
        let loaded = sidecar(name)["loaded_networks"].clone();
        let loaded = loaded.as_object().unwrap();
        assert_eq!(loaded.len(), model.network.len(), "{name}");
        let expanded = expand_all_loops(&model, &Limits::default()).unwrap();
        for net in &expanded.network {
            let want = &loaded[&net.name];
            assert!(net.repeat_info.is_empty());
            // buffers, in order, with shapes
            let got_vars: Vec<(String, Vec<i64>)> = net
                .variable
                .iter()
                .filter(|v| v.r#type != "Parameter")
                .map(|v| (v.name.clone(), v.shape.clone().unwrap_or_default().dim))
                .collect();
            let want_vars: Vec<(String, Vec<i64>)> = want["variables"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| {
                    let dims = v
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|d| d.as_i64().unwrap())
                        .collect();
                    (k.clone(), dims)
                })
                .collect();
            assert_eq!(got_vars, want_vars, "{name}: {}", net.name);
            let want_fns = want["functions"].as_array().unwrap();
            assert_eq!(net.function.len(), want_fns.len(), "{name}: {}", net.name);
            for (f, w) in net.function.iter().zip(want_fns) {
                let strs = |v: &Value| -> Vec<String> {
                    v.as_array()
                        .unwrap()
                        .iter()
                        .map(|s| s.as_str().unwrap().to_string())
                        .collect()
                };
                assert_eq!(f.name, w["name"].as_str().unwrap(), "{name}");
                assert_eq!(f.r#type, w["type"].as_str().unwrap(), "{name}: {}", f.name);
                assert_eq!(f.input, strs(&w["inputs"]), "{name}: {}", f.name);
                assert_eq!(f.output, strs(&w["outputs"]), "{name}: {}", f.name);
                assert!(f.repeat_id.is_empty());
            }
            // every parameter nnabla loaded is a Parameter variable of the expansion
            let params: Vec<&str> = net
                .variable
                .iter()
                .filter(|v| v.r#type == "Parameter")
                .map(|v| v.name.as_str())
                .collect();
            for p in sidecar(name)["parameters"].as_array().unwrap() {
                let p = p["name"].as_str().unwrap();
                if net.name == "Main" {
                    assert!(params.contains(&p), "{name}: {p} missing from {params:?}");
                }
            }
        }
    }
}

#[test]
fn networks_without_loops_expand_to_themselves() {
    let model = text::parse(&text("train.nntxt")).unwrap();
    for n in &model.network {
        assert_eq!(&expand_loops(n, &Limits::default()).unwrap(), n);
    }
}

#[test]
fn expansion_is_bounded_and_checks_ids() {
    let huge = "network { name: 'n' repeat_info { id: 'a' times: 100000 } repeat_info { id: 'b' times: 100000 }\n\
                variable { name: 'x' type: 'Buffer' repeat_id: 'a' repeat_id: 'b' } }";
    let m = text::parse(huge).unwrap();
    let e = expand_loops(&m.network[0], &Limits::default()).unwrap_err();
    assert!(e.to_string().contains("more than"), "{e}");
    let unknown = "network { name: 'n' repeat_info { id: 'a' times: 2 }\n\
                   variable { name: 'x' type: 'Buffer' repeat_id: 'zz' } }";
    let m = text::parse(unknown).unwrap();
    let e = expand_loops(&m.network[0], &Limits::default()).unwrap_err();
    assert!(e.to_string().contains("\"zz\""), "{e}");
    let lone = "network { name: 'n' repeat_info { id: 'a' times: 2 }\n\
                function { name: 'd' type: 'Delay' input: 'x' input: 'y' output: 'z' recurrent_param { repeat_id: 'a' } } }";
    let m = text::parse(lone).unwrap();
    assert!(expand_loops(&m.network[0], &Limits::default()).is_err());
}

#[test]
fn typed_view_of_a_training_file() {
    let proto = text::parse(&text("train.nntxt")).unwrap();
    let model = Model::new(&proto).unwrap();
    let names: Vec<&str> = model.networks.iter().map(|n| n.name).collect();
    assert_eq!(names, ["training", "validation", "runtime"]);
    let train = model.network("training").unwrap();
    assert_eq!(train.batch_size, 4);
    assert!(!train.has_loops());
    let x = train.variable("x").unwrap();
    assert_eq!((x.kind, x.shape), (VariableKind::Buffer, &[-1i64, 8][..]));
    let w = train.variable("fc1/affine/W").unwrap();
    assert_eq!(w.kind, VariableKind::Parameter);
    let affine = &train.functions[0];
    assert_eq!(affine.type_name, "Affine");
    assert_eq!(affine.inputs, ["x", "fc1/affine/W", "fc1/affine/b"]);
    match affine.parameter {
        Some(function::Parameter::AffineParam(p)) => assert_eq!(p.base_axis, 1),
        other => panic!("{other:?}"),
    }
    let exe = model.executor("runtime").unwrap();
    assert_eq!(exe.network_name, "runtime");
    assert_eq!(exe.data_variables, [("x", "x")]);
    assert!(exe.parameter_variables.contains(&"fc1/affine/W"));
    assert_eq!(model.optimizers.len(), 1);
    let opt = &model.optimizers[0];
    assert_eq!(opt.network_name, "training");
    let solver = opt.solver.as_ref().unwrap();
    assert_eq!(solver.type_name, "Adam");
    assert!(matches!(
        solver.parameter,
        Some(solver::Parameter::AdamParam(_))
    ));
    let ds: Vec<&str> = model.datasets.iter().map(|d| d.name).collect();
    assert_eq!(ds, ["train_ds", "valid_ds"]);
    let mon: Vec<&str> = model.monitors.iter().map(|m| m.name).collect();
    assert_eq!(mon, ["train_error", "valid_error"]);
    assert!(model.parameters.is_empty());
    // parameters of a text file with data
    let proto = text::parse(&text("mlp_with_params.nntxt")).unwrap();
    let model = Model::new(&proto).unwrap();
    let p: Vec<(&str, &[usize])> = model
        .parameters
        .iter()
        .map(|p| (p.name.as_str(), p.tensor.dims()))
        .collect();
    assert_eq!(p[0], ("fc1/affine/W", &[8usize, 16][..]));
    assert_eq!(p.len(), 4);
}
