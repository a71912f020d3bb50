//! `mlformats show FILE NAME[slice]`: a tensor's values, or part of them,
//! read by the library's [`mlformats::slice`] (only the selected elements
//! are decoded).

use anyhow::Result;
use mlformats::Document;
use mlformats::report::float_json;
use mlformats::slice::{self, Number};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::ExitCode;
use tensor_core::DType;

use crate::failure::{AtPath, Failure};
use crate::{FormatArg, Input, open_input, print, progress};

/// A number as text: integers exact, floats shortest (as `f32` for 32-bit
/// and narrower floats, so `0.1f32` prints `0.1`).
fn text(n: Number, dtype: DType) -> String {
    match n {
        Number::Int(i) => i.to_string(),
        Number::UInt(u) => u.to_string(),
        Number::Float(f) if f.is_nan() => "nan".into(),
        Number::Float(f) if f.is_infinite() => if f > 0.0 { "inf" } else { "-inf" }.into(),
        Number::Float(f) => {
            let s = if dtype.size() <= 4 {
                (f as f32).to_string()
            } else {
                f.to_string()
            };
            if s.contains(['.', 'e']) {
                s
            } else {
                format!("{s}.0")
            }
        }
        _ => "?".into(),
    }
}

fn value(n: Number) -> Value {
    match n {
        Number::Int(i) => json!(i),
        Number::UInt(u) => json!(u),
        Number::Float(f) => float_json(f),
        _ => Value::Null,
    }
}

/// Nested lists of `dims` over `items` (row-major).
fn nest<T: Clone>(dims: &[usize], items: &[T], leaf: &dyn Fn(&[T]) -> String) -> String {
    match dims {
        [] => leaf(items),
        [_] => format!("[{}]", leaf(items)),
        [n, rest @ ..] => {
            let step = rest.iter().product::<usize>();
            let parts: Vec<String> = (0..*n)
                .map(|i| nest(rest, &items[i * step..(i + 1) * step], leaf))
                .collect();
            format!("[{}]", parts.join(",\n"))
        }
    }
}

fn nest_json(dims: &[usize], items: &[Value]) -> Value {
    match dims {
        [] => items.first().cloned().unwrap_or(Value::Null),
        [_] => Value::Array(items.to_vec()),
        [n, rest @ ..] => {
            let step = rest.iter().product::<usize>();
            Value::Array(
                (0..*n)
                    .map(|i| nest_json(rest, &items[i * step..(i + 1) * step]))
                    .collect(),
            )
        }
    }
}

/// The values `spec` (`NAME` or `NAME[slice]`) selects, as text or JSON.
pub fn run(doc: &Document, spec: &str, json_out: bool) -> Result<String> {
    let (name, s) = slice::parse_spec(doc, spec)?;
    let t = doc
        .tensor(name)
        .ok_or_else(|| anyhow::anyhow!("no tensor named {name:?}"))?;
    render(name, t, spec, &s, json_out)
}

/// The values `s` selects of tensor `t` (named `name`; `spec` as given),
/// as text or JSON.
fn render(
    name: &str,
    t: &tensor_core::Tensor<'_>,
    spec: &str,
    s: &slice::SliceSpec,
    json_out: bool,
) -> Result<String> {
    let v = slice::read(t, s)?;
    if json_out {
        let values: Vec<Value> = v.values.iter().map(|&n| value(n)).collect();
        let doc = json!({
            "name": name,
            "dtype": t.dtype().name(),
            "tensor_shape": t.dims(),
            "shape": v.dims,
            "values": nest_json(&v.dims, &values),
        });
        return Ok(format!("{}\n", serde_json::to_string_pretty(&doc)?));
    }
    let dtype = t.dtype();
    let leaf = |xs: &[Number]| {
        xs.iter()
            .map(|&n| text(n, dtype))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let body = nest(&v.dims, &v.values, &leaf);
    // indent continuation lines so nested rows line up under their bracket
    let body = indent(&body);
    Ok(format!(
        "{spec}: {} {:?} (of {:?})\n{body}\n",
        dtype.name(),
        v.dims,
        t.dims()
    ))
}

/// Continuation lines of nested brackets indented by their depth.
fn indent(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut depth = 0usize;
    for c in s.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        out.push(c);
        if c == '\n' {
            out.push_str(&" ".repeat(depth));
        }
    }
    out
}

/// Runs `show`: the values of a tensor or a slice of it.
pub fn command(
    file: PathBuf,
    tensor: String,
    json: bool,
    format: Option<FormatArg>,
) -> Result<ExitCode, Failure> {
    let text = match open_input(&file, format.map(|f| f.0), json)? {
        Input::Whole(doc) => run(&doc, &tensor, json).at(&file)?,
        Input::Streamed { doc, remote } => {
            // the one tensor fetched, with a progress bar when it is long
            let (at, _) = doc.spec(&tensor).map_err(anyhow::Error::new).at(&file)?;
            let bytes = doc.entries().get(at).map_or(0, |t| t.byte_len());
            let pb = progress::Remote::new(bytes, json, "fetching");
            let bar = pb.clone();
            remote.set_progress(move |f| {
                bar.inc(f.bytes);
            });
            let got = doc.tensor_of_spec(&tensor);
            pb.finish();
            let (name, t, slice) = got.map_err(anyhow::Error::new).at(&file)?;
            render(name, &t, &tensor, &slice, json).at(&file)?
        }
    };
    print(text.as_bytes());
    Ok(ExitCode::SUCCESS)
}
