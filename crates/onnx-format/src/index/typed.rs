//! ONNX initializers kept in `TensorProto`'s typed fields (`float_data`,
//! `double_data`, `int32_data`, `int64_data`, `uint64_data`), read by
//! slices: what [`crate::tensor_from_proto`] decodes, a slice at a time.
//!
//! At open ([`Model::index`](crate::Model::index)'s walk), each typed field of an initializer is
//! checked as prost decodes it where that is cheap: the wire type, a packed
//! run of fixed-width values whole (its length a multiple of the width),
//! each value written unpacked (one field per value: walked, counted). A
//! packed run of varints (`int32_data`, `int64_data`, `uint64_data`: what
//! exporters write) is only passed over by its length: its place and
//! length recorded, its values not counted. One packed run of a
//! fixed-width field (`float_data`, `double_data`) is a plain byte range,
//! read like `raw_data` ([`TensorData::Contiguous`]). Anything else is
//! [`TensorData::Typed`]: the values are decoded from the `TensorProto`'s
//! bytes when a slice is asked for, into the dtype's little-endian bytes,
//! narrowed as the whole-file path narrows them (`int32_data` to
//! `i8`/`u8`/`i16`/`u16`/`bool`/`f16`/`bf16`/8-bit float bits: the low
//! bytes; `uint64_data` to `u32`: the low 4 bytes).
//!
//! Counting. The whole-file path (prost, then
//! [`crate::tensor_from_proto`]) refuses a model at open when a
//! varint is broken (over 10 bytes, cut by its run's end) or when the
//! tensor's field holds another count of values than its dims need. At
//! open, this path counts (and so checks) packed varint runs:
//! - of a field the tensor's values are not read from (`raw_data` is
//!   there, or another typed field is the dtype's): rare and small, as
//!   prost checks them;
//! - of the tensor's own field, when the count cannot be right (a run of
//!   `n` bytes holds from `n / 10` to `n` values): the whole path's message
//!   at open;
//! - of the tensor's own field, while the file's runs counted so stay
//!   within [`OPEN_COUNT`] bytes (4 MiB: a small model opens exactly as the
//!   whole path opens it).
//!
//! Past that budget, a tensor's runs are counted at its **first read** (of
//! any slice but an empty one): the read decodes its slice, then counts
//! the values after it to the end of the `TensorProto` (checking each
//! varint as prost does, recording checkpoints on the way) and fails, if
//! the count is not the dims', with the message the whole-file path gives
//! at open (`tensor "w": int64_data holds 3 values but shape [2] of i64
//! needs 2`), or with the broken varint's place. The verdict is kept: every
//! later read of that tensor fails the same way (a reader of every
//! tensor fails as the whole path does). So a file the whole path refuses for a count or a varint of
//! a big initializer opens here (its table, summary and graph show) and
//! fails at the first read of that tensor; when the whole path would name
//! another broken thing first (a later tensor's varint), the message may be
//! that other one.
//!
//! A forward cursor (values decoded, byte position) is kept between reads:
//! reading a tensor front to back in slices is one pass over its bytes
//! (plus the first read's count to the end, for a tensor counted then). A
//! read behind the cursor, or far ahead of it, starts from the last
//! checkpoint before it. Checkpoints are recorded as reads and counts go
//! forward (never at open): one every [`CHECK`] values (65,536), or every
//! `values / MAX_MARKS` values for a tensor of more than
//! `MAX_MARKS * CHECK` values, so at most [`MAX_MARKS`] (4,096) of 24
//! bytes per tensor (96 KiB), at most 24 bytes per 65,536 values. Memory:
//! those, and at most [`WINDOW`] bytes of the file held while decoding or
//! counting, besides the slice asked for.

use std::sync::Mutex;

use tensor_core::wire::{Cursor, LEN, ReadAt};

use super::TensorData;
use super::walk::Walk;
use crate::{Error, Result};

mod window;
use window::{Window, skip_varints, varints};

/// `TensorProto.float_data`, `int32_data`, `int64_data`, `double_data`,
/// `uint64_data`.
pub(super) const FLOAT_DATA: u64 = 4;
pub(super) const INT32_DATA: u64 = 5;
pub(super) const INT64_DATA: u64 = 7;
pub(super) const DOUBLE_DATA: u64 = 10;
pub(super) const UINT64_DATA: u64 = 11;

/// The typed fields of numbers, in [`Fields`]' order.
const NUMBERS: [u64; 5] = [FLOAT_DATA, INT32_DATA, INT64_DATA, DOUBLE_DATA, UINT64_DATA];

/// How many bytes of the file decoding (and counting) reads at a time: the
/// bound on what it holds.
pub(super) const WINDOW: u64 = 256 << 10;

/// A checkpoint (where decoding is, 24 bytes) is recorded every `CHECK`
/// values of a field (more apart in a tensor of more than
/// `MAX_MARKS * CHECK` values): a read far ahead of the cursor, or behind
/// it, starts from the last one before it.
const CHECK: u64 = 1 << 16;

/// The most checkpoints a tensor keeps.
const MAX_MARKS: u64 = 4096;

/// How many bytes of packed varint runs of the tensors' own fields are
/// counted at open, over the whole file (see the [module](self)).
pub(super) const OPEN_COUNT: u64 = 4 << 20;

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

/// The whole-file path's message for a typed field holding `n` values
/// where the tensor `name` of `dims` and `dtype` needs `want`
/// (`onnx_format::read::tensor_from_proto`'s words).
pub(super) fn mismatch(
    name: &str,
    field: &str,
    n: u64,
    dims: &[usize],
    dtype: tensor_core::DType,
    want: u64,
) -> String {
    format!("tensor {name:?}: {field} holds {n} values but shape {dims:?} of {dtype} needs {want}")
}

/// What the walk found of one typed field of a `TensorProto`.
#[derive(Debug, Clone, Default)]
struct Field {
    /// Its values counted at the walk: fixed-width runs, values written
    /// unpacked.
    values: u64,
    /// Its packed varint runs (not counted at the walk): their bytes (the
    /// most values they can hold) and the fewest values they can hold (a
    /// varint takes at most 10 bytes).
    varint_bytes: u64,
    varint_min: u64,
    /// Its packed runs.
    runs: u64,
    /// Whether a value was written unpacked.
    unpacked: bool,
    /// Where its first occurrence's key is.
    first_key: Option<u64>,
    /// The first packed run's payload: offset, length.
    first_run: (u64, u64),
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

/// What a tensor's layout needs to know of it: its name, dtype, dims,
/// elements, and where its `TensorProto` is (start, end).
pub(super) struct Meta<'a> {
    pub name: &'a str,
    pub dtype: tensor_core::DType,
    pub dims: &'a [usize],
    pub numel: u64,
    pub at: u64,
    pub end: u64,
}

impl Fields {
    /// Whether field `num` of a `TensorProto` is a typed field of numbers.
    pub(super) fn is_typed(num: u64) -> bool {
        NUMBERS.contains(&num)
    }

    /// Takes one occurrence of the typed field `num` (its key, at `key_at`,
    /// read; wire type `wt`): checked as prost decodes it where that is
    /// cheap (a packed varint run is passed over by its length).
    pub(super) fn take<R: ReadAt + ?Sized>(
        &mut self,
        c: &mut Cursor<'_, R>,
        key_at: u64,
        num: u64,
        wt: u64,
    ) -> Walk<()> {
        let i = NUMBERS.iter().position(|&n| n == num).unwrap_or(0);
        let enc = Enc::of(num);
        let f = &mut self.0[i];
        if wt == LEN {
            let (p, len) = c.len_delimited()?;
            match enc.width() {
                Some(w) if len % w != 0 => {
                    return Err(bad(
                        p,
                        format!("packed field {num}: {len} bytes, not values of {w}"),
                    )
                    .into());
                }
                Some(w) => f.values = f.values.saturating_add(len / w),
                None => {
                    f.varint_bytes = f.varint_bytes.saturating_add(len);
                    f.varint_min = f.varint_min.saturating_add(len.div_ceil(10));
                }
            }
            if f.runs == 0 && !f.unpacked {
                f.first_run = (p, len);
            }
            f.runs += 1;
        } else if wt == enc.wire() {
            match enc.width() {
                Some(w) => c.advance(w).map(|_| ())?,
                None => c.varint().map(|_| ())?,
            }
            f.unpacked = true;
            f.values = f.values.saturating_add(1);
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

    /// Checks, as prost does, the packed varint runs of every typed field
    /// but `source` (the field the tensor's values are read from; `None`:
    /// its `raw_data`, or a dtype the whole path refuses) of the
    /// `TensorProto` ending at `end`: every value counted.
    pub(super) fn check_others<R: ReadAt + ?Sized>(
        &self,
        r: &R,
        source: Option<tensor_core::DType>,
        end: u64,
    ) -> Result<()> {
        let source = source.map(|d| field_for(d).0);
        for (f, &num) in self.0.iter().zip(&NUMBERS) {
            if f.varint_bytes > 0
                && Some(num) != source
                && let Some(start) = f.first_key
            {
                let bare = TypedField::new(start, end, num, 8, 1, 0, String::new(), String::new());
                bare.count_all(r, &mut Marks::none())?;
            }
        }
        Ok(())
    }

    /// The layout of the tensor `m` (no `raw_data`) read from the typed
    /// field of its dtype: its offset and [`TensorData`]; the whole path's
    /// error where that field's count is not the dims' (found at open
    /// when the field is counted then, see the [module](self); `budget`:
    /// the bytes of varint runs still to be counted at open).
    pub(super) fn layout<R: ReadAt + ?Sized>(
        self,
        r: &R,
        m: &Meta<'_>,
        budget: &mut u64,
    ) -> Result<(u64, TensorData)> {
        let (num, field, per_elem) = field_for(m.dtype);
        let i = NUMBERS.iter().position(|&n| n == num).unwrap_or(0);
        let Fields(mut all) = self;
        let f = std::mem::take(&mut all[i]);
        let want = m.numel.saturating_mul(per_elem);
        let refuse = |n: u64| Error::Invalid(mismatch(m.name, field, n, m.dims, m.dtype, want));
        let enc = Enc::of(num);
        let out = match enc {
            Enc::Fixed32 => 4,
            Enc::Fixed64 => 8,
            Enc::Varint => m.dtype.size(),
        };
        let start = f.first_key.unwrap_or(m.at);
        let typed = TypedField::new(
            start,
            m.end,
            num,
            out,
            per_elem,
            want,
            format!("tensor {:?}: {field}", m.name),
            format!("shape {:?} of {} needs {want}", m.dims, m.dtype),
        );
        let least = f.values.saturating_add(f.varint_min);
        let most = f.values.saturating_add(f.varint_bytes);
        if f.varint_bytes == 0 {
            if f.values != want {
                return Err(refuse(f.values));
            }
        } else if want < least || want > most || f.varint_bytes <= *budget {
            // counted now: it cannot be right (the count for the message),
            // or it is cheap
            *budget = budget.saturating_sub(f.varint_bytes);
            let mut st = typed.lock();
            let n = typed.count_all(r, &mut st.marks)?;
            if n != want {
                return Err(refuse(n));
            }
            st.check = Check::Done;
        }
        if want == 0 {
            return Ok((m.at, TensorData::Contiguous));
        }
        if enc.width().is_some() && f.runs == 1 && !f.unpacked {
            return Ok((f.first_run.0, TensorData::Contiguous));
        }
        Ok((start, TensorData::Typed(Box::new(typed))))
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

/// The checkpoints of a field: after every `every`-th value, in order,
/// recorded as decoding goes forward (a pass starts from the field's start
/// or a checkpoint, so it passes the next one to record first).
#[derive(Debug, Clone)]
struct Marks {
    /// 0: none recorded.
    every: u64,
    list: Vec<Pos>,
}

impl Marks {
    /// Checkpoints for a field of `want` values: at most [`MAX_MARKS`].
    fn new(want: u64) -> Marks {
        Marks {
            every: CHECK.max(want.div_ceil(MAX_MARKS)),
            list: Vec::new(),
        }
    }

    fn none() -> Marks {
        Marks {
            every: 0,
            list: Vec::new(),
        }
    }

    /// The value after which the next checkpoint is due.
    fn next(&self) -> Option<u64> {
        let n = self.list.len() as u64;
        (self.every > 0 && n < MAX_MARKS).then(|| (n + 1).saturating_mul(self.every))
    }
}

/// Whether a tensor's count was checked against its dims.
#[derive(Debug, Clone)]
enum Check {
    /// Not yet: the first read counts.
    No,
    Done,
    /// It failed: the field holds this many values.
    Count(u64),
    /// It failed: a broken value (the message).
    Broken(String),
}

/// What a [`TypedField`] keeps between reads.
#[derive(Debug, Clone)]
struct State {
    /// The forward cursor.
    cursor: Pos,
    marks: Marks,
    check: Check,
}

/// A read's failure: the field ends (its count is this, fewer than the
/// dims need), or another error.
enum Fail {
    Short(u64),
    Err(Error),
}

impl From<Error> for Fail {
    fn from(e: Error) -> Self {
        Fail::Err(e)
    }
}

/// The values of a `TensorProto`'s typed field, decoded a slice at a time
/// (see the [module](self)).
#[derive(Debug)]
pub struct TypedField {
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
    /// Values the dims need.
    want: u64,
    /// The whole path's message on a count, in two parts: `tensor "w":
    /// int64_data` and `shape [2] of i64 needs 2`.
    what: String,
    needs: String,
    state: Mutex<State>,
}

impl Clone for TypedField {
    fn clone(&self) -> Self {
        let st = self.lock().clone();
        TypedField {
            start: self.start,
            end: self.end,
            field: self.field,
            enc: self.enc,
            out: self.out,
            per_elem: self.per_elem,
            want: self.want,
            what: self.what.clone(),
            needs: self.needs.clone(),
            state: Mutex::new(st),
        }
    }
}

impl TypedField {
    #[allow(clippy::too_many_arguments)]
    fn new(
        start: u64,
        end: u64,
        field: u64,
        out: usize,
        per_elem: u64,
        want: u64,
        what: String,
        needs: String,
    ) -> TypedField {
        TypedField {
            start,
            end,
            field,
            enc: Enc::of(field),
            out,
            per_elem,
            want,
            what,
            needs,
            state: Mutex::new(State {
                cursor: Pos::at(start),
                marks: Marks::new(want),
                check: Check::No,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The whole path's message: the field holds `n` values.
    fn refuse(&self, n: u64) -> Error {
        Error::ValueCount(format!("{} holds {n} values but {}", self.what, self.needs))
    }

    /// Decodes elements `[start, start + count)` of the tensor into `buf`
    /// (exactly `count` elements' bytes long) from `r`, the file the index
    /// was read from; the first read that is not empty counts the field to
    /// its end (see the [module](self)). A count that is not the dims'
    /// fails with [`Error::ValueCount`] ([`crate::tensor_from_proto`]'s
    /// message, which names the tensor), anything else with an error that
    /// does not name it.
    pub fn read<R: ReadAt + ?Sized>(
        &self,
        r: &R,
        start: u64,
        count: u64,
        buf: &mut [u8],
    ) -> Result<()> {
        let overflow = || Error::Invalid("the tensor's size overflows".into());
        let first = start.checked_mul(self.per_elem).ok_or_else(overflow)?;
        let n = count.checked_mul(self.per_elem).ok_or_else(overflow)?;
        if n == 0 {
            return Ok(());
        }
        let mut guard = self.lock();
        let st = &mut *guard;
        match &st.check {
            Check::Count(k) => return Err(self.refuse(*k)),
            Check::Broken(e) => return Err(Error::Invalid(e.clone())),
            Check::No | Check::Done => {}
        }
        let mut pos = st.cursor;
        // the last checkpoint at or before `first`, when the cursor is
        // behind it or past `first`
        let i = st.marks.list.partition_point(|m| m.value <= first);
        let mark = i
            .checked_sub(1)
            .map_or(Pos::at(self.start), |i| st.marks.list[i]);
        if first < pos.value || mark.value > pos.value {
            pos = mark;
        }
        let mut w = Window::new(r, self.end);
        let mut result = self.decode(&mut w, &mut pos, first, n, buf, &mut st.marks);
        if result.is_ok() && matches!(st.check, Check::No) {
            // the first read: the values after the slice counted
            let mut rest = pos;
            w.hint = u64::MAX;
            result = match self.count_rest(&mut w, &mut rest, &mut st.marks) {
                Ok(k) if k == self.want => {
                    st.check = Check::Done;
                    Ok(())
                }
                Ok(k) => Err(Fail::Short(k)),
                Err(e) => Err(Fail::Err(e)),
            };
        }
        // a failed read leaves the cursor where a later read starts over
        st.cursor = if result.is_ok() {
            pos
        } else {
            Pos::at(self.start)
        };
        match result {
            Ok(()) => Ok(()),
            Err(Fail::Short(k)) => {
                st.check = Check::Count(k);
                Err(self.refuse(k))
            }
            Err(Fail::Err(e)) => {
                // the file's bytes say so (not an I/O error): kept
                if let Error::Invalid(m) = &e {
                    st.check = Check::Broken(m.clone());
                }
                Err(e)
            }
        }
    }

    /// Counts every value of the field (checking each as prost does),
    /// recording checkpoints.
    fn count_all<R: ReadAt + ?Sized>(&self, r: &R, marks: &mut Marks) -> Result<u64> {
        let mut w = Window::new(r, self.end);
        w.hint = u64::MAX;
        self.count_rest(&mut w, &mut Pos::at(self.start), marks)
    }

    /// Counts the values from `p` to the end of the `TensorProto`: the
    /// field's count.
    fn count_rest<R: ReadAt + ?Sized>(
        &self,
        w: &mut Window<'_, R>,
        p: &mut Pos,
        marks: &mut Marks,
    ) -> Result<u64> {
        while !self.at_end(p) {
            self.step(w, p, u64::MAX, None, marks)?;
        }
        Ok(p.value)
    }

    /// Whether `p` is past the `TensorProto`'s last field.
    fn at_end(&self, p: &Pos) -> bool {
        p.run_end <= p.pos && p.pos >= self.end
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
        marks: &mut Marks,
    ) -> std::result::Result<(), Fail> {
        // a value and its share of keys take at most 16 bytes, mostly
        let hint = |left: u64| left.saturating_mul(16);
        while pos.value < first {
            if self.at_end(pos) {
                return Err(Fail::Short(pos.value));
            }
            let want = first - pos.value;
            w.hint = hint(want.saturating_add(n));
            self.step(w, pos, want, None, marks)?;
        }
        let mut done = 0u64;
        while done < n {
            if self.at_end(pos) {
                return Err(Fail::Short(pos.value));
            }
            w.hint = hint(n - done);
            let from = usize::try_from(done)
                .ok()
                .and_then(|d| d.checked_mul(self.out))
                .ok_or_else(|| Error::Invalid("the tensor's size overflows".into()))?;
            done += self.step(w, pos, n - done, Some(&mut buf[from..]), marks)?;
        }
        Ok(())
    }

    /// Moves past up to `want` values (writing them to `out` when given):
    /// those of the packed run `pos` is in, or the next field (a value
    /// written unpacked, the start of a run, or another field skipped),
    /// recording the checkpoint it reaches. Returns how many values it
    /// moved past.
    fn step<R: ReadAt + ?Sized>(
        &self,
        w: &mut Window<'_, R>,
        p: &mut Pos,
        want: u64,
        out: Option<&mut [u8]>,
        marks: &mut Marks,
    ) -> Result<u64> {
        let next = marks.next().filter(|&m| m > p.value);
        let want = next.map_or(want, |m| want.min(m - p.value));
        let k = self.step_by(w, p, want, out)?;
        if next == Some(p.value) {
            marks.list.push(*p);
        }
        Ok(k)
    }

    fn step_by<R: ReadAt + ?Sized>(
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
                None => match out {
                    Some(out) => varints(w, p, want, out, self.out)?,
                    None => skip_varints(w, p, want)?,
                },
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
