//! Helpers shared by the TenniS export refusal tests.

use bubble_module::{ModuleBuilder, NodeId, Packed, WriteOptions};
use mlformats::export::{ExportOptions, export_model};
use mlformats::{DType, Document, Tensor};

/// An int32 scalar parameter.
pub fn int(v: i32) -> Packed<'static> {
    Tensor::from_values([], &[v]).unwrap().into()
}

/// Saves a module built by `f` (given the builder and a float input `x0` of
/// shape `dims`), opens it and returns the export's full error message;
/// panics when the export succeeds.
pub fn export_refusal(
    dims: &[i32],
    f: impl FnOnce(&mut ModuleBuilder, NodeId) -> NodeId,
) -> String {
    let mut b = ModuleBuilder::new();
    let x = b.input_with("x0", DType::F32, dims).unwrap();
    let y = f(&mut b, x);
    b.output(y).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("m.tsm");
    b.build()
        .unwrap()
        .save(&path, &WriteOptions::default())
        .unwrap();
    let doc = Document::open(&path).unwrap();
    match export_model(&doc, &ExportOptions::new()) {
        Ok(_) => panic!("the module was exported"),
        Err(e) => e.full_message(),
    }
}
