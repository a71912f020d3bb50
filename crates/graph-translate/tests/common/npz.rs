//! `.npz` files of the test cases: read (the C-order `float32`, `int32`,
//! `int8` and `bool` arrays the cases hold, as `f32`) and written
//! (`float32` inputs, stored members, as numpy's `savez` writes them).

use std::io::Write;

use npyz::WriterBuilder;

/// Arrays by name: dims and values.
pub type Arrays = std::collections::BTreeMap<String, (Vec<usize>, Vec<f32>)>;

/// The arrays of the `.npz` at `path` by name (the member name without
/// `.npy`): dims and values as `f32`. The operator cases hold C-order
/// `float32`, `int32`, `int8` and `bool` arrays; any other element type is
/// an error.
pub fn read_npz(path: &std::path::Path) -> Result<Arrays, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let zip = nnp_archive::archive::parse(&bytes).map_err(|e| e.to_string())?;
    let mut arrays = Arrays::new();
    for (m, data) in zip.members.iter().zip(&zip.data) {
        let npy = npyz::NpyFile::new(&data[..]).map_err(|e| format!("{}: {e}", m.name))?;
        if npy.order() != npyz::Order::C {
            return Err(format!("{}: Fortran order", m.name));
        }
        let dims: Vec<usize> = npy.shape().iter().map(|&d| d as usize).collect();
        let descr = match npy.dtype() {
            npyz::DType::Plain(t) => t.to_string(),
            d => return Err(format!("{}: element type {}", m.name, d.descr())),
        };
        let err = |e: std::io::Error| format!("{}: {e}", m.name);
        let values: Vec<f32> = match descr.as_str() {
            "<f4" => npy.into_vec::<f32>().map_err(err)?,
            "<i4" => npy
                .into_vec::<i32>()
                .map_err(err)?
                .into_iter()
                .map(|v| v as f32)
                .collect(),
            "|i1" => npy
                .into_vec::<i8>()
                .map_err(err)?
                .into_iter()
                .map(f32::from)
                .collect(),
            "|b1" => npy
                .into_vec::<bool>()
                .map_err(err)?
                .into_iter()
                .map(f32::from)
                .collect(),
            d => return Err(format!("{}: element type {d}", m.name)),
        };
        let name = m.name.strip_suffix(".npy").unwrap_or(&m.name);
        arrays.insert(name.to_string(), (dims, values));
    }
    Ok(arrays)
}

/// Writes the `float32` arrays `feeds` as an `.npz` (stored members, C
/// order), as numpy's `savez` does.
pub fn write_npz(
    path: &std::path::Path,
    feeds: &[(String, tensor_core::Tensor<'static>)],
) -> Result<(), Box<dyn std::error::Error>> {
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut zip = nnp_archive::archive::NnpZipWriter::new(file);
    for (name, t) in feeds {
        let member_name = format!("{name}.npy");
        let member = zip.start(&member_name, false)?;
        let shape: Vec<u64> = t.dims().iter().map(|&d| d as u64).collect();
        npyz::WriteOptions::new_header_only()
            .dtype(<f32 as npyz::AutoSerialize>::default_dtype())
            .shape(&shape)
            .writer(&mut *member)
            .write_header_only()?;
        for v in t.to_vec::<f32>()? {
            member.write_all(&v.to_le_bytes())?;
        }
    }
    zip.finish()?.flush()?;
    Ok(())
}
