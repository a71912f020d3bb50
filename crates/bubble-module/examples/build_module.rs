//! Builds a small convolutional module from scratch and saves it.
//!
//! `cargo run -p bubble-module --example build_module -- out.tsm`

use bubble_module::{ModuleBuilder, Packed, WriteOptions};
use tensor_core::{DType, Tensor};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args()
        .nth(1)
        .ok_or("usage: build_module OUT.tsm")?;
    let mut b = ModuleBuilder::new();
    let x = b.input_with("input", DType::F32, &[1, 3, 8, 8])?;
    let w = b.constant("conv_w", Tensor::from_values([4, 3, 3, 3], &[0.1f32; 108])?)?;
    let bias = b.constant("conv_b", Tensor::from_values([4], &[0f32; 4])?)?;
    let conv = b.op_with(
        "conv2d",
        "conv",
        &[x, w],
        [
            ("format", Packed::string("NCHW")),
            (
                "padding",
                Tensor::from_values([4, 2], &[0i32, 0, 0, 0, 1, 1, 1, 1])?.into(),
            ),
            ("padding_value", Tensor::from_values([], &[0i64])?.into()),
            ("stride", Tensor::from_values([4], &[1i32; 4])?.into()),
            ("dilation", Tensor::from_values([4], &[1i32; 4])?.into()),
        ],
    )?;
    let biased = b.op_with(
        "add_bias",
        "bias",
        &[conv, bias],
        [("dim", Packed::from(Tensor::from_values([], &[1i32])?))],
    )?;
    let relu = b.op("relu", "relu", &[biased])?;
    b.output(relu)?;
    b.output(conv)?;
    let module = b.build()?;
    module.save(&out, &WriteOptions::default())?;
    println!("wrote {out}: {} nodes", module.len());
    Ok(())
}
