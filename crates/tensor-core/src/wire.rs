//! Reading a file by offset ([`ReadAt`]) and protobuf wire format through
//! it a window at a time ([`Cursor`]): what the format crates that walk a
//! protobuf message without holding the file (ONNX models, NNabla
//! parameters) share. Every length is checked against the bytes left
//! before anything is read or allocated.

use std::io;

use crate::Limits;

/// A file read by offset: its length and any range of its bytes.
pub trait ReadAt {
    /// The file's length in bytes.
    fn len(&self) -> u64;

    /// True for an empty file.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Fills `buf` with the bytes from `offset` (an error if the file ends
    /// first).
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()>;
}

impl ReadAt for [u8] {
    fn len(&self) -> u64 {
        <[u8]>::len(self) as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let start = usize::try_from(offset).map_err(|_| io::ErrorKind::UnexpectedEof)?;
        let end = start
            .checked_add(buf.len())
            .ok_or(io::ErrorKind::UnexpectedEof)?;
        let src = self.get(start..end).ok_or(io::ErrorKind::UnexpectedEof)?;
        buf.copy_from_slice(src);
        Ok(())
    }
}

impl ReadAt for Vec<u8> {
    fn len(&self) -> u64 {
        self.as_slice().len() as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.as_slice().read_at(offset, buf)
    }
}

#[cfg(unix)]
impl ReadAt for std::fs::File {
    fn len(&self) -> u64 {
        self.metadata().map_or(0, |m| m.len())
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(self, buf, offset)
    }
}

/// Wire type of a varint field.
pub const VARINT: u64 = 0;
/// Wire type of an 8-byte field.
pub const FIXED64: u64 = 1;
/// Wire type of a length-delimited field.
pub const LEN: u64 = 2;
/// Wire type of a 4-byte field.
pub const FIXED32: u64 = 5;

/// What reading wire format can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The bytes are not valid wire format (the whole message, naming the
    /// member and the byte).
    #[error("{0}")]
    Malformed(String),
    /// The bytes are not valid wire format at a known place: what
    /// [`bad`] makes (the cursor's errors), for a reader that words it
    /// in its own error type.
    #[error("{member}: {what} (at byte {at} of the archive)")]
    At {
        /// What the bytes are (the cursor's `member`).
        member: String,
        /// The byte at which the problem was found.
        at: u64,
        /// What is wrong.
        what: String,
    },
    /// Reading the file failed.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// A limit or an allocation failed.
    #[error(transparent)]
    Core(#[from] crate::Error),
}

/// The error for `what` at byte `at` of `member`.
pub fn bad(member: &str, at: u64, what: impl std::fmt::Display) -> Error {
    Error::At {
        member: member.to_string(),
        at,
        what: what.to_string(),
    }
}

/// The `n` bytes of `r` at `offset`, in a buffer allocated fallibly.
pub fn read_vec<R: ReadAt + ?Sized>(r: &R, offset: u64, n: u64) -> Result<Vec<u8>, Error> {
    let len = usize::try_from(n).map_err(|_| Error::Malformed(format!("{n} bytes")))?;
    let mut v = crate::try_zeroed("bytes read from the file", len)?;
    r.read_at(offset, &mut v)?;
    Ok(v)
}

/// The most bytes a [`Cursor`] reads at a time.
pub const WINDOW: u64 = 16 << 10;

/// The bytes a [`Cursor`] reads after a jump (a field skipped, a new
/// walk): 1 KiB, twice as much for each refill that goes on where the last
/// window ended, up to [`WINDOW`]. A walk that skips large fields (an
/// initializer's data) so reads little past each header, which is what a
/// file read over a network pays for.
pub const FIRST_WINDOW: u64 = 1 << 10;

/// A cursor over the bytes `[pos, end)` of a file, read a window at a time.
pub struct Cursor<'r, R: ?Sized> {
    /// The file.
    pub r: &'r R,
    /// What the bytes are, for messages.
    pub member: &'r str,
    /// The next byte.
    pub pos: u64,
    /// The end of the bytes walked.
    pub end: u64,
    /// The bytes read last.
    pub window: Vec<u8>,
    /// Where they are.
    pub window_at: u64,
    /// How many bytes the next refill reads when it goes on where the
    /// window ends.
    step: u64,
}

impl<'r, R: ReadAt + ?Sized> Cursor<'r, R> {
    /// A cursor over `[pos, end)` of `r`; `member` names it in messages.
    pub fn new(r: &'r R, member: &'r str, pos: u64, end: u64) -> Self {
        Cursor {
            r,
            member,
            pos,
            end,
            window: Vec::new(),
            window_at: 0,
            step: FIRST_WINDOW,
        }
    }

    /// The next byte.
    pub fn byte(&mut self) -> Result<u8, Error> {
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
        // going on where the window ended: read further each time
        let follows = self.window_at.checked_add(self.window.len() as u64) == Some(self.pos);
        self.step = if follows && !self.window.is_empty() {
            (self.step * 2).min(WINDOW)
        } else {
            FIRST_WINDOW
        };
        let n = (self.end - self.pos).min(self.step);
        self.window = read_vec(self.r, self.pos, n)?;
        self.window_at = self.pos;
        self.byte()
    }

    /// The next varint (at most 10 bytes, the 10th 0 or 1).
    pub fn varint(&mut self) -> Result<u64, Error> {
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
    pub fn key(&mut self) -> Result<(u64, u64), Error> {
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
    pub fn advance(&mut self, n: u64) -> Result<u64, Error> {
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
    pub fn len_delimited(&mut self) -> Result<(u64, u64), Error> {
        let n = self.varint()?;
        Ok((self.advance(n)?, n))
    }

    /// Reads `n` bytes at `at` (a payload already passed), under `limits`.
    pub fn read(&self, at: u64, n: u64, limits: &Limits) -> Result<Vec<u8>, Error> {
        limits.check_alloc("protobuf field", n)?;
        read_vec(self.r, at, n)
    }

    /// Skips one field value of wire type `wt`.
    pub fn skip(&mut self, wt: u64, num: u64) -> Result<(), Error> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_and_refuses() {
        // field 1 varint 300, field 2 "ab", then a length past the end
        let b: &[u8] = &[0x08, 0xac, 0x02, 0x12, 2, b'a', b'b', 0x12, 9];
        let mut c = Cursor::new(b, "m", 0, b.len() as u64);
        assert_eq!(c.key().unwrap(), (1, VARINT));
        assert_eq!(c.varint().unwrap(), 300);
        assert_eq!(c.key().unwrap(), (2, LEN));
        let (at, n) = c.len_delimited().unwrap();
        assert_eq!(c.read(at, n, &Limits::default()).unwrap(), b"ab");
        assert_eq!(c.key().unwrap(), (2, LEN));
        let e = c.len_delimited().unwrap_err().to_string();
        assert_eq!(
            e,
            "m: 9 bytes claimed but only 0 remain (at byte 9 of the archive)"
        );
        let mut z = Cursor::new(&[0u8][..], "m", 0, 1);
        assert!(z.key().is_err());
    }
}
