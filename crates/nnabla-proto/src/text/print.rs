//! The text printer: byte-identical to Python protobuf's `text_format`
//! (`MessageToString` / `PrintMessage` with default options).

use std::fmt::Write as _;
use std::io::Write;

use prost::Message;
use prost_reflect::{DynamicMessage, FieldDescriptor, Kind, MapKey, ReflectMessage, Value};
use tensor_core::Tensor;

use crate::params::f32_bytes;
use crate::{NNablaProtoBuf, Result, descriptor::root_descriptor};

/// Prints `model` in the protobuf text format exactly as Python's
/// `text_format` does (`docs/formats/nnabla.md` §2): fields in field-number
/// order, one repeated scalar per line, Python `repr`-style floats, octal
/// escapes for non-ASCII bytes, map entries sorted by key.
pub fn print(model: &NNablaProtoBuf) -> Result<String> {
    let desc = root_descriptor()?;
    let dynamic = DynamicMessage::decode(desc, model.encode_to_vec().as_slice())
        .map_err(|e| crate::Error::Descriptor(e.to_string()))?;
    let mut out = String::new();
    print_message(&mut out, &dynamic, 0);
    Ok(out)
}

/// Writes [`print()`] of `model` to `out`.
pub fn write(mut out: impl Write, model: &NNablaProtoBuf) -> Result<()> {
    out.write_all(print(model)?.as_bytes())?;
    Ok(())
}

/// Streams a parameters-only text file to `out`, byte-identical to
/// [`print()`] of the same parameters (Python `text_format` style).
pub fn write_parameters<'t, W: Write>(
    mut out: W,
    params: impl IntoIterator<Item = (&'t str, &'t Tensor<'t>, bool)>,
) -> Result<()> {
    let mut line = String::new();
    for (name, tensor, need_grad) in params {
        let data = f32_bytes(name, tensor)?;
        out.write_all(b"parameter {\n")?;
        if !name.is_empty() {
            line.clear();
            line.push_str("  variable_name: ");
            write_string(&mut line, name.as_bytes());
            line.push('\n');
            out.write_all(line.as_bytes())?;
        }
        if !tensor.dims().is_empty() {
            out.write_all(b"  shape {\n")?;
            for d in tensor.dims() {
                writeln!(out, "    dim: {d}")?;
            }
            out.write_all(b"  }\n")?;
        }
        for c in data.chunks_exact(4) {
            line.clear();
            line.push_str("  data: ");
            write_float(&mut line, f32::from_le_bytes([c[0], c[1], c[2], c[3]]));
            line.push('\n');
            out.write_all(line.as_bytes())?;
        }
        if need_grad {
            out.write_all(b"  need_grad: true\n")?;
        }
        out.write_all(b"}\n")?;
    }
    out.flush()?;
    Ok(())
}

fn indent(out: &mut String, n: usize) {
    for _ in 0..n {
        out.push_str("  ");
    }
}

fn print_message(out: &mut String, msg: &DynamicMessage, depth: usize) {
    let mut fields: Vec<FieldDescriptor> = msg.descriptor().fields().collect();
    fields.sort_by_key(FieldDescriptor::number);
    for f in fields {
        if !msg.has_field(&f) {
            continue;
        }
        let value = msg.get_field(&f);
        match &*value {
            Value::List(items) => {
                for v in items {
                    print_field(out, &f, v, depth);
                }
            }
            Value::Map(map) => {
                let mut entries: Vec<(&MapKey, &Value)> = map.iter().collect();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                let entry_desc = f.kind();
                let (key_field, value_field) = match entry_desc.as_message() {
                    Some(m) => (m.map_entry_key_field(), m.map_entry_value_field()),
                    None => continue,
                };
                for (k, v) in entries {
                    indent(out, depth);
                    out.push_str(f.name());
                    out.push_str(" {\n");
                    let kv = map_key_value(k);
                    if !is_default_scalar(&kv) {
                        print_field(out, &key_field, &kv, depth + 1);
                    }
                    if matches!(v, Value::Message(_)) || !is_default_scalar(v) {
                        print_field(out, &value_field, v, depth + 1);
                    }
                    indent(out, depth);
                    out.push_str("}\n");
                }
            }
            v => print_field(out, &f, v, depth),
        }
    }
}

fn map_key_value(k: &MapKey) -> Value {
    match k {
        MapKey::Bool(b) => Value::Bool(*b),
        MapKey::I32(v) => Value::I32(*v),
        MapKey::I64(v) => Value::I64(*v),
        MapKey::U32(v) => Value::U32(*v),
        MapKey::U64(v) => Value::U64(*v),
        MapKey::String(s) => Value::String(s.clone()),
    }
}

fn is_default_scalar(v: &Value) -> bool {
    match v {
        Value::Bool(b) => !*b,
        Value::I32(x) => *x == 0,
        Value::I64(x) => *x == 0,
        Value::U32(x) => *x == 0,
        Value::U64(x) => *x == 0,
        Value::F32(x) => x.to_bits() == 0,
        Value::F64(x) => x.to_bits() == 0,
        Value::String(s) => s.is_empty(),
        Value::Bytes(b) => b.is_empty(),
        Value::EnumNumber(n) => *n == 0,
        _ => false,
    }
}

fn print_field(out: &mut String, f: &FieldDescriptor, v: &Value, depth: usize) {
    indent(out, depth);
    out.push_str(f.name());
    match v {
        Value::Message(m) => {
            out.push_str(" {\n");
            print_message(out, m, depth + 1);
            indent(out, depth);
            out.push_str("}\n");
            return;
        }
        _ => out.push_str(": "),
    }
    match v {
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::I32(x) => {
            let _ = write!(out, "{x}");
        }
        Value::I64(x) => {
            let _ = write!(out, "{x}");
        }
        Value::U32(x) => {
            let _ = write!(out, "{x}");
        }
        Value::U64(x) => {
            let _ = write!(out, "{x}");
        }
        Value::F32(x) => write_float(out, *x),
        Value::F64(x) => write_double(out, *x),
        Value::String(s) => write_string(out, s.as_bytes()),
        Value::Bytes(b) => write_string(out, b),
        Value::EnumNumber(n) => {
            // No enums in nnabla.proto; print the number as protobuf does for unknown values.
            let name = match f.kind() {
                Kind::Enum(e) => e.get_value(*n).map(|v| v.name().to_string()),
                _ => None,
            };
            match name {
                Some(n) => out.push_str(&n),
                None => {
                    let _ = write!(out, "{n}");
                }
            }
        }
        Value::Message(_) | Value::List(_) | Value::Map(_) => {}
    }
    out.push('\n');
}

/// A string or bytes value as Python's `text_encoding.CEscape(as_utf8=False)`
/// writes it, with the surrounding double quotes.
pub(crate) fn write_string(out: &mut String, bytes: &[u8]) {
    out.push('"');
    for &b in bytes {
        match b {
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            b'"' => out.push_str("\\\""),
            b'\'' => out.push_str("\\'"),
            b'\\' => out.push_str("\\\\"),
            32..=126 => out.push(b as char),
            _ => {
                let _ = write!(out, "\\{b:03o}");
            }
        }
    }
    out.push('"');
}

/// A float field as Python protobuf prints it: the shortest `%.{p}g`
/// (p from 6 up) that round-trips through float32, then Python `repr`.
pub(crate) fn write_float(out: &mut String, v: f32) {
    let wide = f64::from(v);
    if !v.is_finite() {
        return write_double(out, wide);
    }
    for p in 6..=17usize {
        let s = format!("{:.*e}", p - 1, wide);
        if let Ok(back) = s.parse::<f64>()
            && back as f32 == v
        {
            // `back` is the double Python holds; its repr is these digits
            // without trailing zeros.
            write_repr_from_sci(out, &s);
            return;
        }
    }
    write_double(out, wide);
}

/// A double as Python's `repr` writes it.
pub(crate) fn write_double(out: &mut String, v: f64) {
    if v.is_nan() {
        out.push_str("nan");
        return;
    }
    if v.is_infinite() {
        out.push_str(if v > 0.0 { "inf" } else { "-inf" });
        return;
    }
    let s = format!("{v:e}");
    write_repr_from_sci(out, &s);
}

/// Formats Rust scientific notation (`-1.2300e-5`) in Python `repr` style.
fn write_repr_from_sci(out: &mut String, s: &str) {
    let (mant, exp) = s.split_once('e').unwrap_or((s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (neg, mant) = match mant.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mant),
    };
    let mut digits: String = mant.chars().filter(char::is_ascii_digit).collect();
    while digits.len() > 1 && digits.ends_with('0') {
        digits.pop();
    }
    if digits == "0" {
        out.push_str(if neg { "-0.0" } else { "0.0" });
        return;
    }
    if neg {
        out.push('-');
    }
    let n = digits.len() as i32;
    if (-4..16).contains(&exp) {
        if exp >= 0 {
            let int_len = (exp + 1) as usize;
            if digits.len() <= int_len {
                out.push_str(&digits);
                for _ in 0..(int_len - digits.len()) {
                    out.push('0');
                }
                out.push_str(".0");
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        } else {
            out.push_str("0.");
            for _ in 0..(-exp - 1) {
                out.push('0');
            }
            out.push_str(&digits);
        }
    } else {
        out.push_str(&digits[..1]);
        if n > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(v: f32) -> String {
        let mut s = String::new();
        write_float(&mut s, v);
        s
    }
    fn d(v: f64) -> String {
        let mut s = String::new();
        write_double(&mut s, v);
        s
    }

    #[test]
    fn floats_print_like_python() {
        let cases: [(f32, &str); 17] = [
            (0.1, "0.1"),
            (1.0, "1.0"),
            (1e-5, "1e-05"),
            (1e-8, "1e-08"),
            (0.0001, "0.0001"),
            (123456790.0, "123456790.0"),
            (3.4e38, "3.4e+38"),
            (1e16, "1e+16"),
            (2.8026e-45, "2.8026e-45"),
            (-0.0, "-0.0"),
            (f32::INFINITY, "inf"),
            (f32::NEG_INFINITY, "-inf"),
            (f32::NAN, "nan"),
            (0.0, "0.0"),
            (-2.5, "-2.5"),
            (f32::MAX, "3.4028235e+38"),
            (1e15, "1000000000000000.0"),
        ];
        for (v, want) in cases {
            assert_eq!(f(v), want, "{v:e}");
        }
        assert_eq!(d(0.1), "0.1");
        assert_eq!(d(1.0507009873554805), "1.0507009873554805");
        assert_eq!(d(1e22), "1e+22");
        assert_eq!(d(1.5e-7), "1.5e-07");
        assert_eq!(d(0.00012), "0.00012");
    }

    #[test]
    fn strings_escape_like_cescape() {
        let mut s = String::new();
        write_string(&mut s, "r\u{e9}seau \"q\" 'a'\\\n\t\x01".as_bytes());
        assert_eq!(s, r#""r\303\251seau \"q\" \'a\'\\\n\t\001""#);
    }
}
