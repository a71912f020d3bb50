//! Golden files written by the real nnabla 1.39.0 (copied into testdata/nnabla).

use std::path::{Path, PathBuf};

use nnabla_proto::*;

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/nnabla")
}

fn read(name: &str) -> Vec<u8> {
    std::fs::read(testdata().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// nntxt files written by nnabla's `save()` (the loop_* files are Neural
/// Network Console files in its compact style, not nnabla output).
const NNABLA_WRITTEN: [&str; 5] = [
    "mlp.nntxt",
    "mlp_fixed_batch.nntxt",
    "convnet.nntxt",
    "train.nntxt",
    "mlp_with_params.nntxt",
];

#[test]
fn reprinting_nnabla_text_is_byte_identical() {
    for name in NNABLA_WRITTEN {
        let text = String::from_utf8(read(name)).unwrap();
        let model = text::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let printed = text::print(&model).unwrap();
        if printed != text {
            let line = printed
                .lines()
                .zip(text.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            panic!(
                "{name}: differs at line {}: {:?} vs {:?}",
                line + 1,
                printed.lines().nth(line),
                text.lines().nth(line)
            );
        }
    }
}

#[test]
fn binary_reencodes_byte_identically() {
    for name in ["mlp.protobuf", "mlp_params.protobuf"] {
        let bytes = read(name);
        let model = binary::decode(&bytes).unwrap();
        assert_eq!(binary::encode(&model), bytes, "{name}");
        // the borrowed path gives the same parameters, zero-copy
        let file = binary::parse(&bytes).unwrap();
        let owned = parameters(&model).unwrap();
        assert_eq!(file.parameters.len(), owned.len());
        for (a, b) in file.parameters.iter().zip(&owned) {
            assert_eq!(a.name, b.name);
            assert_eq!(a.tensor.dims(), b.tensor.dims());
            assert_eq!(a.tensor.bytes(), b.tensor.bytes());
            assert_eq!(a.need_grad, b.need_grad);
            assert!(a.tensor.storage().is_zero_copy());
        }
        let mut rest = model.clone();
        rest.parameter.clear();
        assert_eq!(file.model, rest);
    }
}

/// Writing the fields before the parameters, the parameters one at a time,
/// then the fields after gives the bytes of the whole model, in both
/// encodings, for models with networks, parameters, datasets, optimizers,
/// monitors and executors.
#[test]
fn streaming_around_parameters_matches_whole_model() {
    for name in ["train.nntxt", "mlp_with_params.nntxt"] {
        let mut model = text::parse(std::str::from_utf8(&read(name)).unwrap()).unwrap();
        if model.parameter.is_empty() {
            model.parameter = binary::decode(&read("mlp_params.protobuf"))
                .unwrap()
                .parameter;
        }
        let params = parameters(&model).unwrap();
        assert!(!params.is_empty(), "{name} has parameters");
        let (head, tail) = split_around_parameters(&model);
        assert!(head.parameter.is_empty() && tail.parameter.is_empty());
        let each = || {
            params
                .iter()
                .map(|p| (p.name.as_str(), &p.tensor, p.need_grad))
        };

        let mut bin = binary::encode(&head);
        binary::write_parameters(&mut bin, each()).unwrap();
        bin.extend(binary::encode(&tail));
        assert_eq!(bin, binary::encode(&model), "{name}: binary");

        let mut txt = text::print(&head).unwrap().into_bytes();
        text::write_parameters(&mut txt, each()).unwrap();
        txt.extend(text::print(&tail).unwrap().into_bytes());
        assert_eq!(
            String::from_utf8(txt).unwrap(),
            text::print(&model).unwrap(),
            "{name}: text"
        );
    }
}
