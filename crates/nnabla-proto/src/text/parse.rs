//! The text-format parser: everything protobuf's text syntax allows, with
//! Python `text_format.Merge` semantics, errors naming line and column, and
//! a nesting limit instead of unbounded recursion.
//!
//! The parser turns text directly into protobuf wire bytes (one value per
//! key, repeated scalars unpacked), which prost then merges into the root
//! message. Binary merging has exactly the text-merge semantics: repeated
//! fields append, singular scalars are overwritten (the last value wins),
//! singular messages merge, and a later `oneof` member replaces an earlier one.

use prost::Message;
use prost_reflect::{Cardinality, FieldDescriptor, Kind, MessageDescriptor};

use crate::descriptor::root_descriptor;
use crate::wire::{self, FIXED32, VARINT};
use crate::{Error, NNablaProtoBuf, Result};

/// The deepest message nesting the text parser accepts (protobuf's C++
/// parser uses the same default). Deeper input is an error, not a stack overflow.
pub const MAX_DEPTH: usize = 100;

/// Parses one text-format file (`.nntxt`, `.prototxt`) into a new root message.
///
/// Unknown field names are an error naming the line and column, as in
/// Python (`4:3: Message type "Network" has no field named "future_field"`).
pub fn parse(text: &str) -> Result<NNablaProtoBuf> {
    let mut root = NNablaProtoBuf::default();
    merge(&mut root, text)?;
    Ok(root)
}

/// Merges one text-format file into `root` with `text_format.Merge`
/// semantics (`docs/formats/nnabla.md` §2). On error `root` is left unchanged.
pub fn merge(root: &mut NNablaProtoBuf, text: &str) -> Result<()> {
    let bytes = text_to_wire(text)?;
    root.merge(bytes.as_slice()).map_err(|e| Error::Text {
        line: 1,
        column: 1,
        message: format!("internal: the parsed message does not decode: {e}"),
    })
}

/// Parses several text files into ONE root message, in order: repeated
/// fields are appended (two files with one `network` each give two
/// networks), singular fields are overwritten by later files.
pub fn parse_all<'s>(texts: impl IntoIterator<Item = &'s str>) -> Result<NNablaProtoBuf> {
    let mut root = NNablaProtoBuf::default();
    for t in texts {
        merge(&mut root, t)?;
    }
    Ok(root)
}

/// Text → wire bytes of the root message.
pub(crate) fn text_to_wire(text: &str) -> Result<Vec<u8>> {
    let desc = root_descriptor()?;
    let mut p = Parser {
        lex: Lexer::new(text),
    };
    let mut out = Vec::new();
    p.fields(&desc, &mut out, None, 0)?;
    Ok(out)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind2 {
    Ident,
    Number,
    Str,
    Sym(u8),
    Eof,
}

#[derive(Debug, Clone, Copy)]
struct Token<'s> {
    kind: Kind2,
    text: &'s str,
    line: usize,
    col: usize,
}

struct Lexer<'s> {
    src: &'s str,
    i: usize,
    line: usize,
    line_start: usize,
    peeked: Option<Token<'s>>,
}

fn err(line: usize, column: usize, message: impl Into<String>) -> Error {
    Error::Text {
        line,
        column,
        message: message.into(),
    }
}

impl<'s> Lexer<'s> {
    fn new(src: &'s str) -> Self {
        Lexer {
            src,
            i: 0,
            line: 1,
            line_start: 0,
            peeked: None,
        }
    }

    fn peek(&mut self) -> Result<Token<'s>> {
        if let Some(t) = self.peeked {
            return Ok(t);
        }
        let t = self.scan()?;
        self.peeked = Some(t);
        Ok(t)
    }

    fn next(&mut self) -> Result<Token<'s>> {
        let t = self.peek()?;
        self.peeked = None;
        Ok(t)
    }

    fn scan(&mut self) -> Result<Token<'s>> {
        let b = self.src.as_bytes();
        // whitespace and comments
        loop {
            match b.get(self.i) {
                Some(b'\n') => {
                    self.i += 1;
                    self.line += 1;
                    self.line_start = self.i;
                }
                Some(b' ' | b'\t' | b'\r' | 0x0b | 0x0c) => self.i += 1,
                Some(b'#') => {
                    while let Some(&c) = b.get(self.i) {
                        if c == b'\n' {
                            break;
                        }
                        self.i += 1;
                    }
                }
                _ => break,
            }
        }
        let start = self.i;
        let (line, col) = (self.line, start - self.line_start + 1);
        let tok = |kind, end: usize| Token {
            kind,
            text: self.src.get(start..end).unwrap_or(""),
            line,
            col,
        };
        let Some(&c) = b.get(start) else {
            return Ok(tok(Kind2::Eof, start));
        };
        let cont_ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'+' || c == b'-';
        if c.is_ascii_alphabetic() || c == b'_' {
            let mut j = start + 1;
            while b.get(j).is_some_and(|&c| cont_ident(c)) {
                j += 1;
            }
            self.i = j;
            return Ok(tok(Kind2::Ident, j));
        }
        let starts_number = c.is_ascii_digit()
            || c == b'+'
            || c == b'-'
            || (c == b'.' && b.get(start + 1).is_some_and(u8::is_ascii_digit));
        if starts_number {
            let mut j = start + 1;
            while b.get(j).is_some_and(|&c| cont_ident(c) || c == b'.') {
                j += 1;
            }
            self.i = j;
            return Ok(tok(Kind2::Number, j));
        }
        if c == b'"' || c == b'\'' {
            let mut j = start + 1;
            loop {
                match b.get(j) {
                    None | Some(b'\n') => {
                        return Err(err(line, col, "string missing ending quote"));
                    }
                    Some(b'\\') => {
                        if b.get(j + 1).is_none_or(|&c| c == b'\n') {
                            return Err(err(line, col, "string missing ending quote"));
                        }
                        j += 2;
                    }
                    Some(&q) if q == c => {
                        j += 1;
                        break;
                    }
                    Some(_) => j += 1,
                }
            }
            self.i = j;
            return Ok(tok(Kind2::Str, j));
        }
        if matches!(
            c,
            b'{' | b'}' | b'<' | b'>' | b'[' | b']' | b':' | b',' | b';'
        ) {
            self.i = start + 1;
            return Ok(tok(Kind2::Sym(c), start + 1));
        }
        let ch = self
            .src
            .get(start..)
            .and_then(|s| s.chars().next())
            .unwrap_or('?');
        Err(err(line, col, format!("unexpected character {ch:?}")))
    }
}

struct Parser<'s> {
    lex: Lexer<'s>,
}

fn describe(t: &Token<'_>) -> String {
    match t.kind {
        Kind2::Eof => "end of input".into(),
        _ => format!("\"{}\"", t.text),
    }
}

impl<'s> Parser<'s> {
    fn try_sym(&mut self, c: u8) -> Result<bool> {
        if self.lex.peek()?.kind == Kind2::Sym(c) {
            self.lex.next()?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    fn expect_sym(&mut self, c: u8) -> Result<()> {
        let t = self.lex.next()?;
        if t.kind == Kind2::Sym(c) {
            Ok(())
        } else {
            Err(err(
                t.line,
                t.col,
                format!("expected \"{}\", found {}", c as char, describe(&t)),
            ))
        }
    }

    /// Fields of one message until `end` (or end of input for the root).
    fn fields(
        &mut self,
        desc: &MessageDescriptor,
        out: &mut Vec<u8>,
        end: Option<u8>,
        depth: usize,
    ) -> Result<()> {
        loop {
            let t = self.lex.peek()?;
            match (t.kind, end) {
                (Kind2::Eof, None) => return Ok(()),
                (Kind2::Eof, Some(c)) => {
                    return Err(err(
                        t.line,
                        t.col,
                        format!("expected \"{}\", found end of input", c as char),
                    ));
                }
                (Kind2::Sym(c), Some(e)) if c == e => {
                    self.lex.next()?;
                    return Ok(());
                }
                _ => self.field(desc, out, depth)?,
            }
        }
    }

    fn field(&mut self, desc: &MessageDescriptor, out: &mut Vec<u8>, depth: usize) -> Result<()> {
        let t = self.lex.next()?;
        if t.kind == Kind2::Sym(b'[') {
            return Err(err(
                t.line,
                t.col,
                "extension and Any fields ([...]) are not supported by the NNabla schema",
            ));
        }
        if t.kind != Kind2::Ident {
            return Err(err(
                t.line,
                t.col,
                format!("expected a field name, found {}", describe(&t)),
            ));
        }
        let Some(field) = desc.get_field_by_name(t.text) else {
            return Err(err(
                t.line,
                t.col,
                format!(
                    "Message type \"{}\" has no field named \"{}\"",
                    desc.full_name(),
                    t.text
                ),
            ));
        };
        let is_message = matches!(field.kind(), Kind::Message(_));
        if is_message {
            self.try_sym(b':')?;
        } else {
            self.expect_sym(b':')?;
        }
        let repeated = field.cardinality() == Cardinality::Repeated;
        if repeated && self.try_sym(b'[')? {
            if !self.try_sym(b']')? {
                loop {
                    self.value(&field, out, depth)?;
                    if self.try_sym(b']')? {
                        break;
                    }
                    self.expect_sym(b',')?;
                }
            }
        } else {
            self.value(&field, out, depth)?;
        }
        if !self.try_sym(b',')? {
            self.try_sym(b';')?;
        }
        Ok(())
    }

    fn value(&mut self, field: &FieldDescriptor, out: &mut Vec<u8>, depth: usize) -> Result<()> {
        let num = field.number();
        if let Kind::Message(sub) = field.kind() {
            let t = self.lex.next()?;
            let close = match t.kind {
                Kind2::Sym(b'{') => b'}',
                Kind2::Sym(b'<') => b'>',
                _ => {
                    return Err(err(
                        t.line,
                        t.col,
                        format!("expected \"{{\" or \"<\", found {}", describe(&t)),
                    ));
                }
            };
            if depth + 1 > MAX_DEPTH {
                return Err(err(
                    t.line,
                    t.col,
                    format!("messages nested deeper than {MAX_DEPTH} levels"),
                ));
            }
            let mut inner = Vec::new();
            self.fields(&sub, &mut inner, Some(close), depth + 1)?;
            wire::put_len_delimited(out, num, &inner);
            return Ok(());
        }
        let t = self.lex.next()?;
        let bad = |what: &str| err(t.line, t.col, format!("{what}, found {}", describe(&t)));
        let scalar_text = matches!(t.kind, Kind2::Ident | Kind2::Number);
        match field.kind() {
            Kind::String | Kind::Bytes => {
                if t.kind != Kind2::Str {
                    return Err(bad("expected a string"));
                }
                let mut bytes = unescape(&t)?;
                while self.lex.peek()?.kind == Kind2::Str {
                    let more = self.lex.next()?;
                    bytes.extend_from_slice(&unescape(&more)?);
                }
                if field.kind() == Kind::String && std::str::from_utf8(&bytes).is_err() {
                    return Err(err(t.line, t.col, "string is not valid UTF-8"));
                }
                wire::put_len_delimited(out, num, &bytes);
            }
            Kind::Float | Kind::Double => {
                let v = if scalar_text {
                    parse_float(t.text)
                } else {
                    None
                }
                .ok_or_else(|| bad("expected a number"))?;
                if field.kind() == Kind::Float {
                    wire::put_key(out, num, FIXED32);
                    out.extend_from_slice(&(v as f32).to_le_bytes());
                } else {
                    wire::put_key(out, num, wire::FIXED64);
                    out.extend_from_slice(&v.to_le_bytes());
                }
            }
            Kind::Bool => {
                let v = match t.text {
                    "true" | "True" | "t" | "1" if scalar_text => true,
                    "false" | "False" | "f" | "0" if scalar_text => false,
                    _ => return Err(bad("expected \"true\" or \"false\"")),
                };
                wire::put_key(out, num, VARINT);
                out.push(u8::from(v));
            }
            k @ (Kind::Int64 | Kind::Int32 | Kind::Uint32 | Kind::Uint64) => {
                let v = if scalar_text { parse_int(t.text) } else { None }
                    .ok_or_else(|| bad("expected an integer"))?;
                let (lo, hi): (i128, i128) = match k {
                    Kind::Int64 => (i64::MIN.into(), i64::MAX.into()),
                    Kind::Int32 => (i32::MIN.into(), i32::MAX.into()),
                    Kind::Uint32 => (0, u32::MAX.into()),
                    _ => (0, u64::MAX.into()),
                };
                if v < lo || v > hi {
                    return Err(err(
                        t.line,
                        t.col,
                        format!("integer {} is out of range for {k:?}", t.text),
                    ));
                }
                wire::put_key(out, num, VARINT);
                // Negative int32/int64 values are sign-extended to 64 bits.
                wire::put_varint(out, v as i64 as u64);
            }
            other => {
                return Err(err(
                    t.line,
                    t.col,
                    format!("field type {other:?} is not used by the NNabla schema"),
                ));
            }
        }
        Ok(())
    }
}

/// Python's `ParseFloat`: a float literal, `inf`/`infinity`/`nan` in any
/// case, an optional trailing `f`.
fn parse_float(text: &str) -> Option<f64> {
    let plain = text.strip_suffix(['f', 'F']).filter(|s| !s.is_empty());
    let lower = text.to_ascii_lowercase();
    let (neg, body) = match lower.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, lower.as_str()),
    };
    match body {
        "inf" | "inff" | "infinity" | "infinityf" => {
            return Some(if neg {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            });
        }
        "nan" | "nanf" => return Some(f64::NAN),
        _ => {}
    }
    if let Ok(v) = text.parse::<f64>()
        && !text.contains(['i', 'I', 'n', 'N'])
    {
        return Some(v);
    }
    plain
        .filter(|p| !p.contains(['i', 'I', 'n', 'N', 'x', 'X']))
        .and_then(|p| p.parse::<f64>().ok())
}

/// Python's integer parsing: decimal, `0x` hex, `0o`/leading-`0` octal, `0b` binary.
fn parse_int(text: &str) -> Option<i128> {
    let (neg, body) = match text.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (radix, digits) = if let Some(h) = body.strip_prefix("0x").or(body.strip_prefix("0X")) {
        (16, h)
    } else if let Some(o) = body.strip_prefix("0o").or(body.strip_prefix("0O")) {
        (8, o)
    } else if let Some(b) = body.strip_prefix("0b").or(body.strip_prefix("0B")) {
        (2, b)
    } else if body.len() > 1 && body.starts_with('0') {
        (8, &body[1..])
    } else {
        (10, body)
    };
    if digits.is_empty() || digits.len() > 130 || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let v = i128::from_str_radix(digits, radix).ok()?;
    Some(if neg { -v } else { v })
}

/// Unescapes one quoted string token: C escapes, 1–3 digit octal, 1–2
/// digit hex, `\u`/`\U` (as UTF-8); unknown escapes are kept as written,
/// as Python does.
fn unescape(t: &Token<'_>) -> Result<Vec<u8>> {
    let b = t.text.as_bytes();
    let inner = b.get(1..b.len().saturating_sub(1)).unwrap_or(&[]);
    let mut out = Vec::with_capacity(inner.len());
    let mut i = 0;
    let bad = |m: &str| err(t.line, t.col, m.to_string());
    while i < inner.len() {
        let c = inner[i];
        if c != b'\\' {
            out.push(c);
            i += 1;
            continue;
        }
        let Some(&e) = inner.get(i + 1) else {
            return Err(bad("string ends with a lone backslash"));
        };
        i += 2;
        match e {
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'a' => out.push(7),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'v' => out.push(11),
            b'\\' => out.push(b'\\'),
            b'\'' => out.push(b'\''),
            b'"' => out.push(b'"'),
            b'?' => out.push(b'?'),
            b'0'..=b'7' => {
                let mut v = u32::from(e - b'0');
                let mut n = 1;
                while n < 3 && inner.get(i).is_some_and(|c| (b'0'..=b'7').contains(c)) {
                    v = v * 8 + u32::from(inner[i] - b'0');
                    i += 1;
                    n += 1;
                }
                let byte = u8::try_from(v).map_err(|_| bad("octal escape above \\377"))?;
                out.push(byte);
            }
            b'x' | b'X' => {
                let mut v = 0u32;
                let mut n = 0;
                while n < 2 && inner.get(i).is_some_and(u8::is_ascii_hexdigit) {
                    v = v * 16 + (inner[i] as char).to_digit(16).unwrap_or(0);
                    i += 1;
                    n += 1;
                }
                if n == 0 {
                    return Err(bad("\\x escape without hex digits"));
                }
                out.push(v as u8);
            }
            b'u' | b'U' => {
                let want = if e == b'u' { 4 } else { 8 };
                let hex = inner
                    .get(i..i + want)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .filter(|h| h.chars().all(|c| c.is_ascii_hexdigit()))
                    .ok_or_else(|| bad("truncated \\u escape"))?;
                let cp = u32::from_str_radix(hex, 16).map_err(|_| bad("bad \\u escape"))?;
                let ch = char::from_u32(cp)
                    .ok_or_else(|| bad("\\u escape is not a Unicode scalar value"))?;
                i += want;
                let mut buf = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            }
            other => {
                out.push(b'\\');
                out.push(other);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_parse_like_python() {
        assert_eq!(parse_int("010"), Some(8));
        assert_eq!(parse_int("-0x10"), Some(-16));
        assert_eq!(parse_int("0"), Some(0));
        assert_eq!(parse_int("1.0"), None);
        assert_eq!(parse_float("1e-5"), Some(1e-5));
        assert_eq!(parse_float("1.5f"), Some(1.5));
        assert_eq!(parse_float("-Infinity"), Some(f64::NEG_INFINITY));
        assert!(parse_float("nan").is_some_and(f64::is_nan));
        assert_eq!(parse_float("inf"), Some(f64::INFINITY));
        assert_eq!(parse_float("-inff"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_float("3"), Some(3.0));
        assert_eq!(parse_float("0x10"), None);
        assert_eq!(parse_float("abc"), None);
    }
}
