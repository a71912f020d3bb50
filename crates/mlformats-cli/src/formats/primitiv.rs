//! primitiv in the CLI (crate `primitiv-format`).
//!
//! Naming (the inspect contract): a Tensor file's tensor is `tensor`; a
//! Parameter file has `value` and `value/<stat>`; a Model file has the key
//! path joined with `.` and `<joined>/<stat>`, in file order. `convert`
//! uses the same names. Writing a name → tensor set makes a Model with one
//! single-component key per name (so names keep their exact spelling),
//! each tensor as an f32 column-major value with batch 1.

use std::path::Path;

use anyhow::{Context, Result};
use mlformats::primitiv::{self as prim, File, ModelWriter, Parameter, WriteOptions};
use serde_json::{Map, Value, json};
use tensor_core::TensorMap;

use super::Source;
use crate::report::{Report, TensorEntry, float_json};

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn entry(
    name: String,
    t: &prim::Tensor<'_>,
    path: &[Vec<u8>],
    stat: Option<&[u8]>,
) -> Result<TensorEntry> {
    let core = t.to_core()?;
    let mut e = TensorEntry::new(name, &core);
    e.shape = t
        .shape()
        .stored_dims()
        .iter()
        .map(|&d| d as usize)
        .collect();
    let path: Vec<String> = path.iter().map(|c| lossy(c)).collect();
    Ok(e.with("path", json!(path))
        .with("stat", json!(stat.map(lossy)))
        .with("batch", json!(t.shape().batch()))
        .with("order", json!("column-major")))
}

/// One tensor of a file: (contract name, key path, stat key, tensor).
type Walked<'f, 'a> = (
    String,
    &'f [Vec<u8>],
    Option<&'f [u8]>,
    &'f prim::Tensor<'a>,
);

/// Every tensor of a file, in file order.
fn walk<'f, 'a>(file: &'f File<'a>) -> Vec<Walked<'f, 'a>> {
    let mut v = Vec::new();
    let mut param = |base: String, path: &'f [Vec<u8>], p: &'f Parameter<'a>| {
        v.push((base.clone(), path, None, &p.value));
        for (k, t) in &p.stats {
            v.push((format!("{base}/{}", lossy(k)), path, Some(k.as_slice()), t));
        }
    };
    match file {
        File::Tensor(t) => return vec![("tensor".into(), &[][..], None, t)],
        File::Parameter(p) => param("value".into(), &[], p),
        File::Model(m) => {
            for (k, p) in &m.entries {
                param(prim::join_key(k), k, p);
            }
        }
        _ => {}
    }
    v
}

fn f32_json(v: f32) -> Value {
    if v.is_finite() {
        // The shortest decimal that reads back as this f32 (0.1, not 0.10000000149…).
        format!("{v}")
            .parse::<f64>()
            .map_or_else(|_| json!(v as f64), |x| json!(x))
    } else {
        float_json(v as f64)
    }
}

pub fn inspect(src: &Source) -> Result<Report> {
    let file = prim::read(src.bytes())?;
    let mut r = Report::new("primitiv", src.file_size());
    r.kind = Some(file.data_type().kind());
    match &file {
        File::Shape(s) => {
            r.extras.insert(
                "shape".into(),
                json!({"dims": s.stored_dims(), "batch": s.batch()}),
            );
        }
        File::Optimizer(o) => {
            // keys as stored; a repeated key keeps its first value (as the library reads it)
            let mut u = Map::new();
            for (k, v) in &o.uint_configs {
                u.entry(lossy(k)).or_insert(json!(v));
            }
            let mut f = Map::new();
            for (k, v) in &o.float_configs {
                f.entry(lossy(k)).or_insert(f32_json(*v));
            }
            r.extras.insert("uint_configs".into(), Value::Object(u));
            r.extras.insert("float_configs".into(), Value::Object(f));
        }
        _ => {
            for (name, path, stat, t) in walk(&file) {
                r.tensors.push(entry(name, t, path, stat)?);
            }
        }
    }
    Ok(r)
}

pub fn tensors(src: &Source) -> Result<TensorMap<'static>> {
    // Shape and Optimizer files hold no tensors: an empty set.
    let file = prim::read(src.bytes())?;
    let mut map = TensorMap::new();
    for (name, _, _, t) in walk(&file) {
        map.insert(name, t.to_core()?.rebase(&src.map));
    }
    Ok(map)
}

pub fn write(out: &Path, tensors: &TensorMap<'_>) -> Result<()> {
    // Check every tensor before touching the output (cheap: dtype and
    // shape), then convert one at a time while writing, so peak memory stays
    // near the largest tensor.
    let mut keys = Vec::with_capacity(tensors.len());
    for (name, t) in tensors.iter() {
        let ok = if t.dtype() == tensor_core::DType::F32 {
            prim::Shape::from_dims(t.dims()).map(drop)
        } else {
            prim::Tensor::from_core(t).map(drop)
        };
        ok.with_context(|| format!("tensor '{name}' (shape {:?})", t.dims()))?;
        keys.push((vec![name.as_bytes().to_vec()], t));
    }
    keys.sort_by(|a, b| a.0.cmp(&b.0));
    let count = u32::try_from(keys.len()).context("too many tensors for a primitiv model")?;
    tensor_core::io::write_atomic(out, |w| -> Result<(), prim::Error> {
        let mut mw = ModelWriter::new(w, count, WriteOptions::default())?;
        for (k, t) in &keys {
            let p = prim::Tensor::from_core(t).and_then(Parameter::new)?;
            mw.param(k, &p)?;
        }
        mw.finish().map(drop)
    })?;
    Ok(())
}

pub fn reencode(src: &Source, out: &Path) -> Result<()> {
    let file = prim::read(src.bytes()).with_context(|| src.path.display().to_string())?;
    file.save(out, &WriteOptions::default())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tensor_core::{DType, MemoryOrder, Tensor};

    #[test]
    fn write_makes_a_sorted_column_major_model() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("m.data");
        let mut map = TensorMap::new();
        // row-major [[1,2,3],[4,5,6]]
        map.insert(
            "w",
            Tensor::from_values([2, 3], &[1f32, 2., 3., 4., 5., 6.]).unwrap(),
        );
        map.insert("b", Tensor::from_values([3, 1], &[7f32, 8., 9.]).unwrap());
        map.insert("s", Tensor::from_values::<f32>([], &[2.5]).unwrap());
        write(&out, &map).unwrap();
        let bytes = std::fs::read(&out).unwrap();
        let m = prim::Model::read(&bytes).unwrap();
        let names: Vec<String> = m.entries.iter().map(|(k, _)| prim::join_key(k)).collect();
        assert_eq!(names, ["b", "s", "w"], "byte-wise sorted");
        let w = &m.get(&["w"]).unwrap().value;
        assert_eq!(w.shape().dims(), &[2, 3]);
        assert_eq!(w.shape().batch(), 1);
        assert_eq!(&*w.values(), &[1., 4., 2., 5., 3., 6.], "column-major");
        // a trailing 1 is dropped, as the library does
        assert_eq!(m.get(&["b"]).unwrap().value.shape().dims(), &[3]);
        assert_eq!(m.get(&["s"]).unwrap().value.shape().dims(), &[] as &[u32]);

        // a column-major tensor is taken as it is
        let col = Tensor::with_order(
            DType::F32,
            [2, 2],
            MemoryOrder::ColumnMajor,
            [1f32, 2., 3., 4.]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect::<Vec<u8>>(),
        )
        .unwrap();
        let mut map = TensorMap::new();
        map.insert("c", col);
        write(&out, &map).unwrap();
        let bytes = std::fs::read(&out).unwrap();
        let m = prim::Model::read(&bytes).unwrap();
        assert_eq!(&*m.get(&["c"]).unwrap().value.values(), &[1., 2., 3., 4.]);
    }

    #[test]
    fn unwritable_tensors_are_refused_clearly() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("m.data");
        let cases: [(Tensor<'static>, &str); 3] = [
            (
                Tensor::from_values([1, 1, 1, 1, 1, 1, 1, 1, 2], &[0f32; 2]).unwrap(),
                "exceeding the dimension depth limit of 8",
            ),
            (
                Tensor::from_values::<f32>([2, 0], &[]).unwrap(),
                "invalid shape",
            ),
            (
                Tensor::from_values([2], &[1i32, 2]).unwrap(),
                "primitiv stores only f32",
            ),
        ];
        for (t, msg) in cases {
            let mut map = TensorMap::new();
            map.insert("x", t);
            let e = format!("{:#}", write(&out, &map).unwrap_err());
            assert!(e.contains("tensor 'x'") && e.contains(msg), "{e}");
            assert!(!out.exists(), "nothing written on error");
        }
    }
}
