//! Reading protobuf wire format through [`ReadAt`], a window at a time:
//! the cursor the `.nnp`/`.protobuf` walk (`nnp.rs`) and the ONNX walk
//! (`onnx.rs`) share. Every length is checked against the bytes left
//! before anything is read or allocated.

use tensor_core::Limits;

use super::{ReadAt, read_vec};
use crate::Error;

pub(super) const VARINT: u64 = 0;
pub(super) const FIXED64: u64 = 1;
pub(super) const LEN: u64 = 2;
pub(super) const FIXED32: u64 = 5;

/// The walk stops: an error (the whole-file path has one too), or a layout
/// this path does not index (the whole-file path reads it).
pub(super) enum Stop {
    Err(Error),
    Whole,
}

impl<E: Into<Error>> From<E> for Stop {
    fn from(e: E) -> Self {
        Stop::Err(e.into())
    }
}

pub(super) type Walk<T> = std::result::Result<T, Stop>;

pub(super) fn bad(member: &str, at: u64, what: impl std::fmt::Display) -> Stop {
    Stop::Err(Error::Invalid(format!(
        "{member}: {what} (at byte {at} of the archive)"
    )))
}

/// A cursor over the bytes `[pos, end)` of a file, read a window at a time.
pub(super) struct Cursor<'r, R: ?Sized> {
    pub r: &'r R,
    pub member: &'r str,
    pub pos: u64,
    pub end: u64,
    pub window: Vec<u8>,
    pub window_at: u64,
}

pub(super) const WINDOW: u64 = 16 << 10;

impl<'r, R: ReadAt + ?Sized> Cursor<'r, R> {
    /// A cursor over `[pos, end)` of `r`; `member` names it in messages.
    pub(super) fn new(r: &'r R, member: &'r str, pos: u64, end: u64) -> Self {
        Cursor {
            r,
            member,
            pos,
            end,
            window: Vec::new(),
            window_at: 0,
        }
    }

    pub(super) fn byte(&mut self) -> Walk<u8> {
        if self.pos >= self.end {
            return Err(bad(self.member, self.pos, "truncated varint"));
        }
        let i = self.pos.checked_sub(self.window_at);
        if let Some(b) = i
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| self.window.get(i))
        {
            self.pos += 1;
            return Ok(*b);
        }
        let n = (self.end - self.pos).min(WINDOW);
        self.window = read_vec(self.r, self.pos, n)?;
        self.window_at = self.pos;
        self.byte()
    }

    pub(super) fn varint(&mut self) -> Walk<u64> {
        let start = self.pos;
        let mut value = 0u64;
        for i in 0..10 {
            let b = self.byte()?;
            if i == 9 && b > 1 {
                return Err(bad(self.member, start, "varint longer than 64 bits"));
            }
            value |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return Ok(value);
            }
        }
        Err(bad(self.member, start, "varint longer than 10 bytes"))
    }

    /// A field key: (number, wire type).
    pub(super) fn key(&mut self) -> Walk<(u64, u64)> {
        let start = self.pos;
        let k = self.varint()?;
        let num = k >> 3;
        if num == 0 || num > 0x1fff_ffff {
            return Err(bad(
                self.member,
                start,
                format!("invalid field number {num}"),
            ));
        }
        Ok((num, k & 7))
    }

    /// Moves past `n` bytes, which must be before the end; returns where
    /// they start.
    pub(super) fn advance(&mut self, n: u64) -> Walk<u64> {
        let at = self.pos;
        match at.checked_add(n).filter(|&e| e <= self.end) {
            Some(e) => {
                self.pos = e;
                Ok(at)
            }
            None => Err(bad(
                self.member,
                at,
                format!("{n} bytes claimed but only {} remain", self.end - at),
            )),
        }
    }

    /// A length-delimited payload: where it starts and its length.
    pub(super) fn len_delimited(&mut self) -> Walk<(u64, u64)> {
        let n = self.varint()?;
        Ok((self.advance(n)?, n))
    }

    /// Reads `n` bytes at `at` (a payload already passed), under `limits`.
    pub(super) fn read(&self, at: u64, n: u64, limits: &Limits) -> Walk<Vec<u8>> {
        limits.check_alloc("protobuf field", n)?;
        Ok(read_vec(self.r, at, n)?)
    }

    /// Skips one field value of wire type `wt`.
    pub(super) fn skip(&mut self, wt: u64, num: u64) -> Walk<()> {
        match wt {
            VARINT => self.varint().map(|_| ()),
            FIXED64 => self.advance(8).map(|_| ()),
            LEN => self.len_delimited().map(|_| ()),
            FIXED32 => self.advance(4).map(|_| ()),
            _ => Err(bad(
                self.member,
                self.pos,
                format!("field {num}: wire type {wt} is not readable"),
            )),
        }
    }
}
