//! Opens any supported file, lists its tensors, reads the first as f32 and
//! saves every tensor as `out.safetensors`:
//!
//! ```sh
//! cargo run -p mlformats --example list_tensors -- testdata/nnabla/mlp.nnp
//! ```
//!
//! The body is the program the API was designed against, kept verbatim
//! (it takes `&name` so that `name` may be `&str` or `String`).
#![allow(clippy::needless_borrow)]

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).unwrap();
    let doc = mlformats::open(&path)?;
    println!("{}", doc.format());
    for (name, t) in doc.tensors() {
        println!("{name} {} {:?}", t.dtype(), t.shape());
    }
    if let Some((name, _)) = doc.tensors().next() {
        let v: Vec<f32> = doc.tensor(&name).unwrap().to_vec::<f32>()?;
        println!("{name}: {} values", v.len());
    }
    mlformats::save("out.safetensors", doc.tensors())?;
    Ok(())
}
