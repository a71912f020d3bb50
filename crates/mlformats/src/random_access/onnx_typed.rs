//! ONNX initializers kept in `TensorProto`'s typed fields (`float_data`,
//! `double_data`, `int32_data`, `int64_data`, `uint64_data`), read by
//! slices: what [`onnx_format::read::tensor_from_proto`] decodes, a slice
//! at a time.
//!
//! At open (`onnx.rs`'s walk), each typed field of an initializer is
//! checked as prost decodes it (the wire type, packed runs whole, every
//! varint at most 10 bytes) and its values counted in one streaming pass
//! ([`WINDOW`] bytes at a time, nothing of the tensor allocated). One
//! packed run of a fixed-width field (`float_data`, `double_data`: what
//! exporters write) is a plain byte range, read like `raw_data`
//! ([`Layout::Contiguous`]). Anything else (varints, values written
//! unpacked, several runs) is [`Layout::OnnxTyped`]: the values are decoded
//! from the `TensorProto`'s bytes when a slice is asked for, into the
//! dtype's little-endian bytes, narrowed as the whole-file path narrows
//! them (`int32_data` to `i8`/`u8`/`i16`/`u16`/`bool`/`f16`/`bf16`/8-bit
//! float bits: the low bytes; `uint64_data` to `u32`: the low 4 bytes).
//!
//! A forward cursor (values decoded, byte position) is kept between reads:
//! reading a tensor front to back in slices is one pass over its bytes. A
//! read behind the cursor, or far ahead of it, starts from the last
//! checkpoint before it (one every [`CHECK`] values, recorded at open).
//! Memory: at most [`WINDOW`] bytes of the file are held while decoding,
//! besides the slice asked for; the checkpoints take 24 bytes per [`CHECK`]
//! values.
#![cfg_attr(not(feature = "onnx"), allow(dead_code))]

use std::sync::Mutex;

use crate::{Error, Result};

use super::ReadAt;
use super::layout::Layout;

/// `TensorProto.float_data`, `int32_data`, `int64_data`, `double_data`,
/// `uint64_data`.
pub(super) const FLOAT_DATA: u64 = 4;
pub(super) const INT32_DATA: u64 = 5;
pub(super) const INT64_DATA: u64 = 7;
pub(super) const DOUBLE_DATA: u64 = 10;
pub(super) const UINT64_DATA: u64 = 11;

/// The typed fields of numbers, in [`Fields`]' order.
const NUMBERS: [u64; 5] = [FLOAT_DATA, INT32_DATA, INT64_DATA, DOUBLE_DATA, UINT64_DATA];

/// How many bytes of the file decoding (and counting at open) reads at a
/// time: the bound on what it holds.
pub(super) const WINDOW: u64 = 256 << 10;

/// A checkpoint (where decoding is, 24 bytes) is kept every `CHECK` values
/// of a field: a read far ahead of the cursor, or behind it, starts from
/// the last one before it (at most `CHECK` values decoded in vain). They
/// take at most 24 / `CHECK` of the field's bytes (a value is one byte or
/// more).
const CHECK: u64 = 1 << 16;

/// How a field's values are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Enc {
    Fixed32,
    Fixed64,
    Varint,
}

impl Enc {
    fn of(field: u64) -> Enc {
        match field {
            FLOAT_DATA => Enc::Fixed32,
            DOUBLE_DATA => Enc::Fixed64,
            _ => Enc::Varint,
        }
    }

    /// The wire type of one unpacked value.
    fn wire(self) -> u64 {
        match self {
            Enc::Fixed32 => 5,
            Enc::Fixed64 => 1,
            Enc::Varint => 0,
        }
    }

    /// The width of a fixed-width value.
    fn width(self) -> Option<u64> {
        match self {
            Enc::Fixed32 => Some(4),
            Enc::Fixed64 => Some(8),
            Enc::Varint => None,
        }
    }
}

fn bad(at: u64, what: impl std::fmt::Display) -> Error {
    Error::Invalid(format!(
        "not an ONNX model: {what} (at byte {at} of the model)"
    ))
}

/// A window of up to [`WINDOW`] bytes of `[.., end)` of a file.
struct Window<'r, R: ?Sized> {
    r: &'r R,
    end: u64,
    buf: Vec<u8>,
    at: u64,
    /// About how many bytes the values still wanted take (a small read
    /// reads little).
    hint: u64,
}

impl<'r, R: ReadAt + ?Sized> Window<'r, R> {
    fn new(r: &'r R, end: u64) -> Self {
        Window {
            r,
            end,
            buf: Vec::new(),
            at: 0,
            hint: WINDOW,
        }
    }

    /// Makes `[pos, pos + n)` (n at most [`WINDOW`], before `end`) part of
    /// the window; returns where it starts in `buf`.
    fn fill(&mut self, pos: u64, n: u64) -> Result<usize> {
        let inside = pos
            .checked_sub(self.at)
            .filter(|&i| i.checked_add(n).is_some_and(|e| e <= self.buf.len() as u64));
        if let Some(i) = inside {
            return Ok(i as usize);
        }
        let len = self
            .end
            .saturating_sub(pos)
            .min(WINDOW.min(self.hint.max(4096)).max(n));
        if len < n {
            return Err(bad(
                pos,
                format!("{n} bytes claimed past the message's end"),
            ));
        }
        self.buf.resize(len as usize, 0);
        self.r.read_at(pos, &mut self.buf)?;
        self.at = pos;
        Ok(0)
    }

    /// The byte at `pos`, which is before `limit`.
    fn byte(&mut self, pos: u64, limit: u64) -> Result<u8> {
        if pos >= limit {
            return Err(bad(pos, "truncated varint"));
        }
        let i = self.fill(pos, 1)?;
        Ok(self.buf[i])
    }

    /// A varint at `*pos`, before `limit` (prost's rules: at most 10 bytes,
    /// the 10th 0 or 1).
    fn varint(&mut self, pos: &mut u64, limit: u64) -> Result<u64> {
        let start = *pos;
        let mut value = 0u64;
        for i in 0..10 {
            let b = self.byte(*pos, limit)?;
            *pos += 1;
            if i == 9 && b > 1 {
                return Err(bad(start, "invalid varint"));
            }
            value |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return Ok(value);
            }
        }
        Err(bad(start, "invalid varint"))
    }

    /// Copies the bytes at `pos` (before `end`) into `dst`.
    fn copy(&mut self, pos: u64, dst: &mut [u8]) -> Result<()> {
        let n = dst.len() as u64;
        if n > WINDOW / 2 {
            if pos.checked_add(n).is_none_or(|e| e > self.end) {
                return Err(bad(
                    pos,
                    format!("{n} bytes claimed past the message's end"),
                ));
            }
            self.r.read_at(pos, dst)?;
            return Ok(());
        }
        let i = self.fill(pos, n)?;
        dst.copy_from_slice(&self.buf[i..i + dst.len()]);
        Ok(())
    }
}

/// Counts the varints of the packed run `[at, at + len)`, [`WINDOW`] bytes
/// at a time, failing where prost fails (a varint over 10 bytes or running
/// past the run); the field held `base` values before it: a checkpoint is
/// added to `marks` after every [`CHECK`]-th value.
fn count_varints<R: ReadAt + ?Sized>(
    r: &R,
    at: u64,
    len: u64,
    base: u64,
    marks: &mut Vec<Pos>,
) -> Result<u64> {
    let end = at
        .checked_add(len)
        .ok_or_else(|| bad(at, "a length past the file"))?;
    let mut n = 0u64;
    let mut in_varint = 0u32;
    let mut pos = at;
    let mut buf = Vec::new();
    while pos < end {
        let k = (end - pos).min(WINDOW);
        buf.resize(k as usize, 0);
        r.read_at(pos, &mut buf)?;
        for (j, &b) in buf.iter().enumerate() {
            if in_varint == 9 && b > 1 {
                return Err(bad(pos + j as u64, "invalid varint"));
            }
            if b < 0x80 {
                n += 1;
                in_varint = 0;
                if (base + n).is_multiple_of(CHECK) {
                    marks.push(Pos {
                        value: base + n,
                        pos: pos + j as u64 + 1,
                        run_end: end,
                    });
                }
            } else {
                in_varint += 1;
            }
        }
        pos += k;
    }
    if in_varint > 0 {
        return Err(bad(end, "a packed field's last varint runs past its end"));
    }
    Ok(n)
}

/// What the walk found of one typed field of a `TensorProto`.
#[derive(Debug, Clone, Default)]
struct Field {
    /// Its values, over every occurrence.
    values: u64,
    /// Its packed runs.
    runs: u64,
    /// Whether a value was written unpacked.
    unpacked: bool,
    /// Where its first occurrence's key is.
    first_key: Option<u64>,
    /// The first packed run's payload: offset, length.
    first_run: (u64, u64),
    /// A checkpoint after every [`CHECK`]-th value.
    marks: Vec<Pos>,
}

/// The typed fields of numbers of one `TensorProto`, as the walk over it
/// found them.
#[derive(Debug, Clone, Default)]
pub(super) struct Fields([Field; 5]);

/// The typed field the whole-file path reads a tensor of `dtype` from:
/// its number, its name, and its values per element (2 for complex
/// numbers).
fn field_for(dtype: tensor_core::DType) -> (u64, &'static str, u64) {
    use tensor_core::DType::*;
    match dtype {
        F32 => (FLOAT_DATA, "float_data", 1),
        C64 => (FLOAT_DATA, "float_data", 2),
        F64 => (DOUBLE_DATA, "double_data", 1),
        C128 => (DOUBLE_DATA, "double_data", 2),
        I64 => (INT64_DATA, "int64_data", 1),
        U32 | U64 => (UINT64_DATA, "uint64_data", 1),
        _ => (INT32_DATA, "int32_data", 1),
    }
}

#[cfg(feature = "onnx")]
impl Fields {
    /// Whether field `num` of a `TensorProto` is a typed field of numbers.
    pub(super) fn is_typed(num: u64) -> bool {
        NUMBERS.contains(&num)
    }

    /// Takes one occurrence of the typed field `num` (its key, at `key_at`,
    /// read; wire type `wt`): checked as prost decodes it, its values
    /// counted.
    pub(super) fn take<R: ReadAt + ?Sized>(
        &mut self,
        c: &mut super::wire::Cursor<'_, R>,
        key_at: u64,
        num: u64,
        wt: u64,
    ) -> super::wire::Walk<()> {
        let i = NUMBERS.iter().position(|&n| n == num).unwrap_or(0);
        let enc = Enc::of(num);
        let f = &mut self.0[i];
        if wt == super::wire::LEN {
            let (p, len) = c.len_delimited()?;
            let base = f.values;
            let n = match enc.width() {
                Some(w) if len % w != 0 => {
                    return Err(bad(
                        p,
                        format!("packed field {num}: {len} bytes, not values of {w}"),
                    )
                    .into());
                }
                Some(w) => {
                    let n = len / w;
                    let mut m = (base / CHECK + 1) * CHECK;
                    while m <= base + n {
                        f.marks.push(Pos {
                            value: m,
                            pos: p + (m - base) * w,
                            run_end: p + len,
                        });
                        m += CHECK;
                    }
                    n
                }
                None => count_varints(c.r, p, len, base, &mut f.marks)?,
            };
            if f.runs == 0 && !f.unpacked {
                f.first_run = (p, len);
            }
            f.runs += 1;
            f.values += n;
        } else if wt == enc.wire() {
            match enc.width() {
                Some(w) => c.advance(w).map(|_| ())?,
                None => c.varint().map(|_| ())?,
            }
            f.unpacked = true;
            f.values += 1;
            if f.values.is_multiple_of(CHECK) {
                f.marks.push(Pos {
                    value: f.values,
                    pos: c.pos,
                    run_end: 0,
                });
            }
        } else {
            return Err(bad(
                key_at,
                format!("field {num} of a tensor has wire type {wt}"),
            )
            .into());
        }
        f.first_key.get_or_insert(key_at);
        Ok(())
    }

    /// The field the whole-file path reads a tensor of `dtype` from: its
    /// name, how many values it holds, and how many it must hold for
    /// `numel` elements.
    pub(super) fn chosen(&self, dtype: tensor_core::DType, numel: u64) -> (&'static str, u64, u64) {
        let (num, name, per_elem) = field_for(dtype);
        (name, self.field(num).values, numel.saturating_mul(per_elem))
    }

    fn field(&self, num: u64) -> &Field {
        let i = NUMBERS.iter().position(|&n| n == num).unwrap_or(0);
        &self.0[i]
    }

    /// The layout of a tensor of `dtype` whose values (as many as
    /// [`Fields::chosen`] wants) are in the `TensorProto` at `[at, end)`:
    /// its offset and [`Layout`].
    pub(super) fn layout(self, dtype: tensor_core::DType, at: u64, end: u64) -> (u64, Layout) {
        let (num, _, per_elem) = field_for(dtype);
        let i = NUMBERS.iter().position(|&n| n == num).unwrap_or(0);
        let Fields(mut all) = self;
        let f = std::mem::take(&mut all[i]);
        let enc = Enc::of(num);
        if f.values == 0 {
            return (at, Layout::Contiguous);
        }
        if enc.width().is_some() && f.runs == 1 && !f.unpacked {
            return (f.first_run.0, Layout::Contiguous);
        }
        let out = match enc {
            Enc::Fixed32 => 4,
            Enc::Fixed64 => 8,
            Enc::Varint => dtype.size(),
        };
        let start = f.first_key.unwrap_or(at);
        let typed = Typed {
            start,
            end,
            field: num,
            enc,
            out,
            per_elem,
            marks: f.marks,
            cursor: Mutex::new(Pos::at(start)),
        };
        (start, Layout::OnnxTyped(Box::new(typed)))
    }
}

/// Where decoding is: values decoded before `pos`, the byte `pos`, and the
/// end of the packed run `pos` is in (`run_end <= pos`: between fields).
#[derive(Debug, Clone, Copy)]
struct Pos {
    value: u64,
    pos: u64,
    run_end: u64,
}

impl Pos {
    fn at(pos: u64) -> Pos {
        Pos {
            value: 0,
            pos,
            run_end: 0,
        }
    }
}

/// The values of a `TensorProto`'s typed field, decoded a slice at a time
/// (see the [module](self)).
#[derive(Debug)]
pub(super) struct Typed {
    /// The key of the field's first occurrence.
    start: u64,
    /// The end of the `TensorProto`.
    end: u64,
    /// The field's number.
    field: u64,
    enc: Enc,
    /// Bytes per value written out (the low bytes of a varint's value).
    out: usize,
    /// Values per element (2 for complex numbers).
    per_elem: u64,
    /// A checkpoint after every [`CHECK`]-th value.
    marks: Vec<Pos>,
    /// The forward cursor.
    cursor: Mutex<Pos>,
}

impl Clone for Typed {
    fn clone(&self) -> Self {
        Typed {
            start: self.start,
            end: self.end,
            field: self.field,
            enc: self.enc,
            out: self.out,
            per_elem: self.per_elem,
            marks: self.marks.clone(),
            cursor: Mutex::new(self.pos()),
        }
    }
}

impl Typed {
    fn pos(&self) -> Pos {
        match self.cursor.lock() {
            Ok(p) => *p,
            Err(p) => *p.into_inner(),
        }
    }

    fn set_pos(&self, pos: Pos) {
        match self.cursor.lock() {
            Ok(mut p) => *p = pos,
            Err(p) => *p.into_inner() = pos,
        }
    }

    /// Decodes elements `[start, start + count)` into `buf` (exactly
    /// `count` elements' bytes long).
    pub(super) fn read<R: ReadAt + ?Sized>(
        &self,
        r: &R,
        start: u64,
        count: u64,
        buf: &mut [u8],
    ) -> Result<()> {
        let overflow = || Error::Invalid("the tensor's size overflows".into());
        let first = start.checked_mul(self.per_elem).ok_or_else(overflow)?;
        let n = count.checked_mul(self.per_elem).ok_or_else(overflow)?;
        let mut pos = self.pos();
        // the last checkpoint at or before `first`, when the cursor is
        // behind it or past `first`
        let i = self.marks.partition_point(|m| m.value <= first);
        let mark = i
            .checked_sub(1)
            .map_or(Pos::at(self.start), |i| self.marks[i]);
        if first < pos.value || mark.value > pos.value {
            pos = mark;
        }
        let mut w = Window::new(r, self.end);
        let result = self.decode(&mut w, &mut pos, first, n, buf);
        // a failed read leaves the cursor where a later read starts over
        self.set_pos(if result.is_ok() {
            pos
        } else {
            Pos::at(self.start)
        });
        result
    }

    /// Decodes values `[first, first + n)` into `buf`, from `pos`
    /// (at or before `first`).
    fn decode<R: ReadAt + ?Sized>(
        &self,
        w: &mut Window<'_, R>,
        pos: &mut Pos,
        first: u64,
        n: u64,
        buf: &mut [u8],
    ) -> Result<()> {
        // a value and its share of keys take at most 16 bytes, mostly
        let hint = |left: u64| left.saturating_mul(16);
        while pos.value < first {
            let want = first - pos.value;
            w.hint = hint(want.saturating_add(n));
            self.step(w, pos, want, None)?;
        }
        let mut done = 0u64;
        while done < n {
            w.hint = hint(n - done);
            let from = usize::try_from(done)
                .ok()
                .and_then(|d| d.checked_mul(self.out))
                .ok_or_else(|| Error::Invalid("the tensor's size overflows".into()))?;
            done += self.step(w, pos, n - done, Some(&mut buf[from..]))?;
        }
        Ok(())
    }

    /// Decodes up to `want` varints of the packed run `p` is in (writing
    /// their low bytes to `out` when given): from the window's bytes while
    /// a varint ends inside it, else a byte at a time (refilling it).
    fn varints<R: ReadAt + ?Sized>(
        &self,
        w: &mut Window<'_, R>,
        p: &mut Pos,
        want: u64,
        mut out: Option<&mut [u8]>,
    ) -> Result<u64> {
        let mut k = 0u64;
        let size = self.out;
        let put = |k: u64, v: u64, out: &mut Option<&mut [u8]>| {
            if let Some(out) = out.as_deref_mut() {
                let i = k as usize * size;
                out[i..i + size].copy_from_slice(&v.to_le_bytes()[..size]);
            }
        };
        while k < want && p.pos < p.run_end {
            let i = w.fill(p.pos, 1)?;
            let stop = (w.at + w.buf.len() as u64).min(p.run_end) - w.at;
            let bytes = &w.buf[i..stop as usize];
            let mut j = 0usize;
            while k < want {
                let mut v = 0u64;
                let mut len = 0usize;
                for (t, &b) in bytes[j..].iter().take(10).enumerate() {
                    if t == 9 && b > 1 {
                        return Err(bad(p.pos + j as u64, "invalid varint"));
                    }
                    v |= u64::from(b & 0x7f) << (7 * t);
                    if b < 0x80 {
                        len = t + 1;
                        break;
                    }
                }
                if len == 0 {
                    break; // past the window or the run: a byte at a time
                }
                put(k, v, &mut out);
                j += len;
                k += 1;
            }
            p.pos += j as u64;
            if j == 0 && k < want {
                let v = w.varint(&mut p.pos, p.run_end)?;
                put(k, v, &mut out);
                k += 1;
            }
        }
        Ok(k)
    }

    /// Moves past up to `want` values (writing them to `out` when given):
    /// those of the packed run `pos` is in, or the next field (a value
    /// written unpacked, the start of a run, or another field skipped).
    /// Returns how many values it moved past.
    fn step<R: ReadAt + ?Sized>(
        &self,
        w: &mut Window<'_, R>,
        p: &mut Pos,
        want: u64,
        out: Option<&mut [u8]>,
    ) -> Result<u64> {
        if p.run_end > p.pos {
            let k = match self.enc.width() {
                Some(width) => {
                    let k = ((p.run_end - p.pos) / width).min(want);
                    if k == 0 {
                        return Err(bad(p.pos, "a packed field's values are cut"));
                    }
                    if let Some(out) = out {
                        // fixed-width values are written as they are stored
                        let n = (k * width) as usize;
                        w.copy(p.pos, &mut out[..n])?;
                    }
                    p.pos += k * width;
                    k
                }
                None => self.varints(w, p, want, out)?,
            };
            p.value += k;
            return Ok(k);
        }
        if p.pos >= self.end {
            return Err(bad(p.pos, "a tensor's typed field ends before its values"));
        }
        let key_at = p.pos;
        let key = w.varint(&mut p.pos, self.end)?;
        let (num, wt) = (key >> 3, key & 7);
        if num == self.field && wt == 2 {
            let len = w.varint(&mut p.pos, self.end)?;
            p.run_end = p
                .pos
                .checked_add(len)
                .filter(|&e| e <= self.end)
                .ok_or_else(|| bad(p.pos, format!("{len} bytes claimed past the message's end")))?;
            return Ok(0);
        }
        if num == self.field && wt == self.enc.wire() {
            match self.enc.width() {
                Some(width) => {
                    if let Some(out) = out {
                        w.copy(p.pos, &mut out[..width as usize])?;
                    }
                    p.pos = p
                        .pos
                        .checked_add(width)
                        .filter(|&e| e <= self.end)
                        .ok_or_else(|| bad(p.pos, "a value past the message's end"))?;
                }
                None => {
                    let v = w.varint(&mut p.pos, self.end)?;
                    if let Some(out) = out {
                        out[..self.out].copy_from_slice(&v.to_le_bytes()[..self.out]);
                    }
                }
            }
            p.value += 1;
            return Ok(1);
        }
        // another field: skipped
        let skip = match wt {
            0 => {
                w.varint(&mut p.pos, self.end)?;
                0
            }
            1 => 8,
            2 => w.varint(&mut p.pos, self.end)?,
            5 => 4,
            _ => return Err(bad(key_at, format!("field {num}: wire type {wt}"))),
        };
        p.pos = p
            .pos
            .checked_add(skip)
            .filter(|&e| e <= self.end)
            .ok_or_else(|| {
                bad(
                    p.pos,
                    format!("{skip} bytes claimed past the message's end"),
                )
            })?;
        Ok(0)
    }
}
