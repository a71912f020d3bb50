//! primitiv MessagePack files (crate `primitiv-format`).
//!
//! Naming (the inspect contract): a Tensor file's tensor is `tensor`; a
//! Parameter file has `value` and `value/<stat>`; a Model file has the key
//! path joined with `.` and `<joined>/<stat>`, in file order. Tensors are
//! column-major with dims [`primitiv_format::Shape::core_dims`] (the batch
//! a last axis when it is not 1); the contract's `shape` is the stored dims.
//!
//! Writing a name → tensor set makes a Model with one single-component key
//! per name (so names keep their exact spelling), sorted byte-wise as the
//! library saves them, each tensor an f32 column-major value with batch 1.
//!
//! ## Reading
//!
//! primitiv MessagePack files by random access: [`primitiv_format::index`]
//! walks the file (header, key paths, shapes, stat keys, optimizer
//! configs) with the reader's own walk and checks, seeking past every
//! tensor's data, whose place it records. A tensor's data is always one
//! contiguous `bin` in the file (f32, column-major), so every primitiv
//! file is located, and this is the format's one reader (a
//! [`crate::Document`] borrows each tensor from the memory map). The
//! tensors are named, and their contract fields made, by
//! `crate::formats::primitiv`'s functions, a repeated name given `#2`,
//! `#3`, ... (the stored name kept).

use std::collections::HashSet;

use primitiv_format::{self as prim, File, ModelWriter, Parameter, WriteOptions};
use serde_json::{Map, Value, json};
use tensor_core::{DType, MemoryOrder};

use crate::codec::{Codec, Source, StoredTensor, WriteSeek, free_name};
use crate::random_access::{FileIndex, IndexedTensor, ReadAt, Stream, count, overflow};
use crate::report::float_json;
use crate::sink::{Feed, Incoming, TensorSink};
use crate::{Error, Format, Result};

pub(crate) struct Primitiv;

/// The writer: a Model of one parameter per tensor.
struct ModelSink<'w>(ModelWriter<&'w mut dyn WriteSeek>);

impl TensorSink for ModelSink<'_> {
    fn put(&mut self, t: &Incoming<'_>) -> Result<()> {
        t.with_planned(|p| {
            let p = prim::Tensor::from_core(p).and_then(Parameter::new)?;
            self.0.param(&[t.name().as_bytes().to_vec()], &p)?;
            Ok(())
        })
    }

    fn finish(self) -> Result<()> {
        self.0.finish()?;
        Ok(())
    }
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The contract entry of a tensor (stored dims, `path`, `stat`, `batch`,
/// `order`): the whole-file and the random-access paths make the same.
pub(crate) fn entry(
    name: String,
    path: &[Vec<u8>],
    stat: Option<&[u8]>,
    shape: &prim::Shape,
) -> StoredTensor {
    let path: Vec<String> = path.iter().map(|c| lossy(c)).collect();
    let dims = shape.stored_dims().iter().map(|&d| d as usize).collect();
    StoredTensor::from_parts(name, dims)
        .with("path", json!(path))
        .with("stat", json!(stat.map(lossy)))
        .with("batch", json!(shape.batch()))
        .with("order", json!("column-major"))
}

/// A tensor's contract name: `tensor` (a Tensor file), `value` (a
/// Parameter file's value), the joined key path (a model parameter's
/// value), and either with `/<stat>` for a stat.
pub(crate) fn name(data_type: prim::DataType, path: &[Vec<u8>], stat: Option<&[u8]>) -> String {
    let base = match data_type {
        prim::DataType::Tensor => return "tensor".into(),
        prim::DataType::Parameter => "value".into(),
        _ => prim::join_key(path),
    };
    match stat {
        Some(k) => format!("{base}/{}", lossy(k)),
        None => base,
    }
}

/// A Shape file's metadata.
pub(crate) fn shape_metadata(s: &prim::Shape, m: &mut Map<String, Value>) {
    m.insert(
        "shape".into(),
        json!({"dims": s.stored_dims(), "batch": s.batch()}),
    );
}

/// An Optimizer file's metadata: keys as stored; a repeated key keeps its
/// first value (as the library reads it).
pub(crate) fn optimizer_metadata(o: &prim::Optimizer, m: &mut Map<String, Value>) {
    let mut u = Map::new();
    for (k, v) in &o.uint_configs {
        u.entry(lossy(k)).or_insert(json!(v));
    }
    let mut f = Map::new();
    for (k, v) in &o.float_configs {
        f.entry(lossy(k)).or_insert(f32_json(*v));
    }
    m.insert("uint_configs".into(), Value::Object(u));
    m.insert("float_configs".into(), Value::Object(f));
}

/// The shortest decimal that reads back as this f32 (0.1, not 0.10000000149…).
fn f32_json(v: f32) -> Value {
    if v.is_finite() {
        format!("{v}")
            .parse::<f64>()
            .map_or_else(|_| json!(v as f64), |x| json!(x))
    } else {
        float_json(v as f64)
    }
}

impl Codec for Primitiv {
    fn refuses(&self, _: Format, dtype: tensor_core::DType, dims: &[usize]) -> Option<String> {
        if dtype != tensor_core::DType::F32 {
            return Some(format!("primitiv stores only f32, not {dtype}"));
        }
        prim::Shape::from_dims(dims).err().map(|e| e.to_string())
    }

    fn takes_column_major(&self, _format: Format) -> bool {
        true
    }

    fn write(&self, _: Format, w: &mut dyn WriteSeek, feed: &Feed<'_>) -> Result<()> {
        // Check every tensor before touching the output (cheap: dtype and
        // shape), then convert one at a time while writing, so peak memory
        // stays near the largest tensor.
        for t in feed.heads() {
            let ok = if t.dtype() == tensor_core::DType::F32 {
                prim::Shape::from_dims(t.dims()).map(drop)
            } else {
                // (never reached after `refuses`: the error names the dtype)
                let got = t.tensor().get()?;
                prim::Tensor::from_core(got.tensor()).map(drop)
            };
            ok.map_err(|e| {
                Error::Unsupported(format!("shape {:?}: {e}", t.dims())).in_tensor(t.name())
            })?;
        }
        // one single-component key per name, sorted as the library saves them
        let mut order: Vec<usize> = (0..feed.len()).collect();
        order.sort_by_key(|&i| feed.items.get(i).map(|it| it.name.as_bytes()));
        let count = u32::try_from(order.len())
            .map_err(|_| Error::Unsupported("too many tensors for a primitiv model".into()))?;
        let mw = ModelWriter::new(w, count, &WriteOptions::default())?;
        feed.drain_in(Some(&order), ModelSink(mw))
    }

    fn reencode(&self, src: &Source, w: &mut dyn WriteSeek) -> Result<()> {
        let file = File::parse(src.bytes())?;
        file.write(w, &WriteOptions::default())?;
        Ok(())
    }

    fn index(&self, _: Format, index: &mut FileIndex, r: &dyn ReadAt) -> Result<()> {
        index.read_primitiv(r)
    }
}

impl FileIndex {
    /// A primitiv file: every tensor located, Shape and Optimizer files'
    /// fields read.
    pub(crate) fn read_primitiv<R: ReadAt + ?Sized>(&mut self, r: &R) -> Result<()> {
        let opts = primitiv_format::ReadOptions::default().with_limits(self.limits);
        let index = primitiv_format::index(Stream { r, pos: 0 }, &opts)?;
        self.kind = Some(index.data_type.kind());
        if let Some(s) = &index.shape {
            shape_metadata(s, &mut self.metadata);
        }
        if let Some(o) = &index.optimizer {
            optimizer_metadata(o, &mut self.metadata);
        }
        let mut taken: HashSet<String> = HashSet::new();
        for t in index.tensors {
            let stat = t.stat.as_deref();
            // the stored name kept, the name made unique (`Contents::push`)
            let mut stored = entry(
                name(index.data_type, &t.path, stat),
                &t.path,
                stat,
                &t.shape,
            );
            stored.name = free_name(stored.name, |x| taken.contains(x));
            taken.insert(stored.name.clone());
            let dims = t.shape.core_dims();
            let numel = count(&dims).ok_or_else(|| overflow(&stored.name))?;
            self.tensors.push(IndexedTensor {
                tensor_dims: (dims != stored.shape).then_some(dims),
                stored,
                dtype: DType::F32,
                order: MemoryOrder::ColumnMajor,
                offset: t.offset,
                len: t.len,
                numel,
                layout: crate::random_access::Layout::Contiguous,
            });
        }
        Ok(())
    }
}
