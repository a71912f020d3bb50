//! The `inspect` report: the JSON contract (`inspect --json`, schema 1) and the readable table.

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use tensor_core::{DType, SumKind, Tensor};

/// What `inspect` says about one file.
#[derive(Debug, Clone)]
pub struct Report {
    /// The contract's format name.
    pub format: &'static str,
    /// primitiv's data type, `None` elsewhere.
    pub kind: Option<&'static str>,
    /// Bytes of the input file.
    pub file_size: u64,
    /// Every tensor, in file order.
    pub tensors: Vec<TensorEntry>,
    /// The network, for formats that carry one.
    pub graph: Option<Value>,
    /// Format-specific top-level extras (primitiv `shape`, optimizer configs).
    pub extras: Map<String, Value>,
}

/// One tensor of a [`Report`].
#[derive(Debug, Clone)]
pub struct TensorEntry {
    /// The contract's name for it.
    pub name: String,
    /// Element type.
    pub dtype: DType,
    /// Dimensions as the file states them.
    pub shape: Vec<usize>,
    /// Bytes of data.
    pub nbytes: usize,
    /// Lowercase hex SHA-256 of the stored element bytes.
    pub sha256: String,
    /// The contract's `sum`.
    pub sum: Value,
    /// Format-specific extras (primitiv `path`/`stat`/`batch`/`order`, nnabla `need_grad`).
    pub extras: Map<String, Value>,
}

impl TensorEntry {
    /// The entry for `tensor` stored under `name`: hashes and sums the bytes in stored order.
    pub fn new(name: impl Into<String>, tensor: &Tensor<'_>) -> Self {
        TensorEntry {
            name: name.into(),
            dtype: tensor.dtype(),
            shape: tensor.dims().to_vec(),
            nbytes: tensor.bytes().len(),
            sha256: sha256_hex(tensor.bytes()),
            sum: contract_sum(tensor),
            extras: Map::new(),
        }
    }

    /// Adds a format-specific field.
    pub fn with(mut self, key: &str, value: Value) -> Self {
        self.extras.insert(key.to_string(), value);
        self
    }

    fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("name".into(), json!(self.name));
        m.insert("dtype".into(), json!(self.dtype.name()));
        m.insert("shape".into(), json!(self.shape));
        m.insert("sha256".into(), json!(self.sha256));
        m.insert("sum".into(), self.sum.clone());
        for (k, v) in &self.extras {
            m.insert(k.clone(), v.clone());
        }
        Value::Object(m)
    }
}

impl Report {
    /// A report with no tensors, graph or extras yet.
    pub fn new(format: &'static str, file_size: u64) -> Self {
        Report {
            format,
            kind: None,
            file_size,
            tensors: Vec::new(),
            graph: None,
            extras: Map::new(),
        }
    }

    /// The contract's JSON document.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("schema".into(), json!(1));
        m.insert("format".into(), json!(self.format));
        m.insert("kind".into(), json!(self.kind));
        m.insert("file_size".into(), json!(self.file_size));
        m.insert(
            "tensors".into(),
            Value::Array(self.tensors.iter().map(TensorEntry::to_json).collect()),
        );
        m.insert("graph".into(), self.graph.clone().unwrap_or(Value::Null));
        for (k, v) in &self.extras {
            m.insert(k.clone(), v.clone());
        }
        Value::Object(m)
    }

    /// The readable table `inspect` prints without `--json`.
    pub fn to_table(&self, path: &str) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let kind = self.kind.map(|k| format!(" ({k})")).unwrap_or_default();
        let total: usize = self.tensors.iter().map(|t| t.nbytes).sum();
        let _ = writeln!(
            s,
            "{path}: {}{kind}, {} bytes, {} tensor{}, {} of data",
            self.format,
            self.file_size,
            self.tensors.len(),
            if self.tensors.len() == 1 { "" } else { "s" },
            human_bytes(total as u64)
        );
        let rows: Vec<[String; 4]> = self
            .tensors
            .iter()
            .map(|t| {
                [
                    t.name.clone(),
                    t.dtype.name().to_string(),
                    format!("{:?}", t.shape),
                    human_bytes(t.nbytes as u64),
                ]
            })
            .collect();
        if !rows.is_empty() {
            let head = ["name", "dtype", "shape", "size"];
            let mut w = head.map(str::len);
            for r in &rows {
                for (i, c) in r.iter().enumerate() {
                    w[i] = w[i].max(c.chars().count());
                }
            }
            let line = |c: [&str; 4]| {
                format!(
                    "  {:<w0$}  {:<w1$}  {:<w2$}  {:>w3$}\n",
                    c[0],
                    c[1],
                    c[2],
                    c[3],
                    w0 = w[0],
                    w1 = w[1],
                    w2 = w[2],
                    w3 = w[3]
                )
            };
            s.push_str(&line(head));
            for r in &rows {
                s.push_str(&line([&r[0], &r[1], &r[2], &r[3]]));
            }
        }
        for (k, v) in &self.extras {
            let _ = writeln!(s, "{k}: {v}");
        }
        if let Some(g) = &self.graph {
            s.push_str(&graph_summary(g));
        }
        s
    }
}

fn graph_summary(g: &Value) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    if let Some(nets) = g.get("networks").and_then(Value::as_array) {
        for n in nets {
            let count = |k: &str| n.get(k).and_then(Value::as_array).map_or(0, Vec::len);
            let _ = writeln!(
                s,
                "network {}: batch_size {}, {} variables, {} functions",
                n.get("name").and_then(Value::as_str).unwrap_or("?"),
                n.get("batch_size").unwrap_or(&Value::Null),
                count("variables"),
                count("functions")
            );
        }
        for k in ["executors", "optimizers", "datasets", "monitors"] {
            if let Some(a) = g.get(k).and_then(Value::as_array).filter(|a| !a.is_empty()) {
                let names: Vec<String> = a
                    .iter()
                    .map(|v| {
                        v.as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| v.to_string())
                    })
                    .collect();
                let _ = writeln!(s, "{k}: {}", names.join(", "));
            }
        }
    } else if let Some(nodes) = g.get("nodes").and_then(Value::as_array) {
        let _ = writeln!(
            s,
            "graph: {} nodes, inputs {}, outputs {}",
            nodes.len(),
            g.get("inputs").unwrap_or(&Value::Null),
            g.get("outputs").unwrap_or(&Value::Null)
        );
    }
    s
}

/// `1.5 KiB`, `3.0 MiB`, `12 B`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

/// Lowercase hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let d = Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in d {
        use std::fmt::Write;
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The contract's `sum`: exact for integers and bool, f64 in stored order
/// for floats (`"NaN"`, `"inf"`, `"-inf"` as strings), `null` otherwise.
pub fn contract_sum(t: &Tensor<'_>) -> Value {
    match t.dtype().sum_kind() {
        SumKind::Integer => {
            let b = t.bytes();
            let s: i128 = match t.dtype() {
                DType::Bool | DType::U8 => b.iter().map(|&x| x as i128).sum(),
                DType::I8 => b.iter().map(|&x| x as i8 as i128).sum(),
                DType::I16 => b
                    .chunks_exact(2)
                    .map(|c| i16::from_le_bytes([c[0], c[1]]) as i128)
                    .sum(),
                DType::U16 => b
                    .chunks_exact(2)
                    .map(|c| u16::from_le_bytes([c[0], c[1]]) as i128)
                    .sum(),
                DType::I32 => b
                    .chunks_exact(4)
                    .map(|c| i32::from_le_bytes(c.try_into().unwrap_or([0; 4])) as i128)
                    .sum(),
                DType::U32 => b
                    .chunks_exact(4)
                    .map(|c| u32::from_le_bytes(c.try_into().unwrap_or([0; 4])) as i128)
                    .sum(),
                DType::I64 => b
                    .chunks_exact(8)
                    .map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8])) as i128)
                    .sum(),
                DType::U64 => b
                    .chunks_exact(8)
                    .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])) as i128)
                    .sum(),
                _ => return Value::Null,
            };
            if let Ok(v) = i64::try_from(s) {
                json!(v)
            } else if let Ok(v) = u64::try_from(s) {
                json!(v)
            } else {
                json!(s as f64)
            }
        }
        SumKind::Float => {
            let Some(vals) = t.to_f64_vec() else {
                return Value::Null;
            };
            let mut acc = 0f64;
            for v in vals {
                acc += v;
            }
            float_json(acc)
        }
        _ => Value::Null,
    }
}

/// A float as the contract writes it: a number, or `"NaN"`, `"inf"`, `"-inf"`.
pub fn float_json(v: f64) -> Value {
    if v.is_nan() {
        json!("NaN")
    } else if v == f64::INFINITY {
        json!("inf")
    } else if v == f64::NEG_INFINITY {
        json!("-inf")
    } else {
        json!(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_follow_the_contract() {
        let t = Tensor::from_values([3], &[1i32, -5, 7]).unwrap();
        assert_eq!(contract_sum(&t), json!(3));
        let t = Tensor::from_values([2], &[u64::MAX, 1]).unwrap();
        assert_eq!(contract_sum(&t), json!(18446744073709551616f64));
        let t = Tensor::from_values([2], &[1.5f32, f32::NAN]).unwrap();
        assert_eq!(contract_sum(&t), json!("NaN"));
        let t = Tensor::from_values([2], &[1.0f64, f64::NEG_INFINITY]).unwrap();
        assert_eq!(contract_sum(&t), json!("-inf"));
        let t = Tensor::new(DType::Bool, [3], vec![1u8, 1, 0]).unwrap();
        assert_eq!(contract_sum(&t), json!(2));
        let t = Tensor::new(DType::Char8, [2], b"hi".to_vec()).unwrap();
        assert_eq!(contract_sum(&t), Value::Null);
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn human_sizes() {
        assert_eq!(human_bytes(12), "12 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(3 << 20), "3.0 MiB");
    }
}
