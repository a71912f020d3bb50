//! The byte sources the parser reads from: a slice (zero-copy) and a
//! buffered `Read + Seek` stream.

use std::io::{self, Read, Seek, SeekFrom};

/// A source of bytes the parser reads from, front to back.
pub(super) trait Input {
    /// Bytes of a name or shape: borrowed from a slice, owned from a stream.
    type Bytes: AsRef<[u8]>;
    /// A payload: borrowed from a slice, skipped in a stream.
    type Payload;
    fn pos(&self) -> u64;
    fn remaining(&self) -> u64;
    /// Reads `N` bytes; the caller has checked that they remain.
    fn array<const N: usize>(&mut self) -> io::Result<[u8; N]>;
    /// Reads `len` bytes; the caller has checked that they remain.
    fn take(&mut self, len: usize) -> io::Result<Self::Bytes>;
    /// Passes over a payload of `len` bytes; the caller has checked that they remain.
    fn payload(&mut self, len: u64) -> io::Result<Self::Payload>;
}

pub(super) struct SliceInput<'a> {
    pub(super) data: &'a [u8],
    pub(super) pos: usize,
}

impl<'a> SliceInput<'a> {
    fn split(&mut self, len: usize) -> io::Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(len)
            .filter(|&e| e <= self.data.len())
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        let s = self.data.get(self.pos..end).unwrap_or_default();
        self.pos = end;
        Ok(s)
    }
}

impl<'a> Input for SliceInput<'a> {
    type Bytes = &'a [u8];
    type Payload = &'a [u8];
    fn pos(&self) -> u64 {
        self.pos as u64
    }
    fn remaining(&self) -> u64 {
        self.data.len().saturating_sub(self.pos) as u64
    }
    fn array<const N: usize>(&mut self) -> io::Result<[u8; N]> {
        let s = self.split(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }
    fn take(&mut self, len: usize) -> io::Result<&'a [u8]> {
        self.split(len)
    }
    fn payload(&mut self, len: u64) -> io::Result<&'a [u8]> {
        let len =
            usize::try_from(len).map_err(|_| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        self.split(len)
    }
}

/// A stream read through a small internal buffer: headers and names come
/// from the buffer, payloads are skipped inside it when small and seeked
/// over when large, so indexing costs about one read and one seek per tensor
/// whatever the payload sizes.
pub(super) struct StreamInput<'r, R> {
    r: &'r mut R,
    /// Logical position (relative to the start of the dictionary).
    pos: u64,
    len: u64,
    buf: Box<[u8]>,
    head: usize,
    tail: usize,
}

impl<'r, R: Read + Seek> StreamInput<'r, R> {
    /// Small: the walk jumps over each tensor's data, and a file read over
    /// a network pays for every byte read past a header.
    const BUF: usize = 1 << 10;

    pub(super) fn new(r: &'r mut R, len: u64) -> Self {
        StreamInput {
            r,
            pos: 0,
            len,
            buf: vec![0u8; Self::BUF].into_boxed_slice(),
            head: 0,
            tail: 0,
        }
    }

    fn buffered(&self) -> usize {
        self.tail - self.head
    }

    /// Copies `out.len()` bytes out, refilling the buffer as needed.
    fn read_exact(&mut self, out: &mut [u8]) -> io::Result<()> {
        let mut done = 0;
        while done < out.len() {
            if self.head == self.tail {
                let want = out.len() - done;
                if want >= self.buf.len() {
                    // large: straight into the destination
                    self.r.read_exact(&mut out[done..])?;
                    break;
                }
                self.head = 0;
                self.tail = 0;
                let n = loop {
                    match self.r.read(&mut self.buf) {
                        Ok(n) => break n,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        Err(e) => return Err(e),
                    }
                };
                if n == 0 {
                    return Err(io::ErrorKind::UnexpectedEof.into());
                }
                self.tail = n;
            }
            let k = (out.len() - done).min(self.buffered());
            out[done..done + k].copy_from_slice(&self.buf[self.head..self.head + k]);
            self.head += k;
            done += k;
        }
        self.pos += out.len() as u64;
        Ok(())
    }
}

impl<R: Read + Seek> Input for StreamInput<'_, R> {
    type Bytes = Vec<u8>;
    type Payload = ();
    fn pos(&self) -> u64 {
        self.pos
    }
    fn remaining(&self) -> u64 {
        self.len.saturating_sub(self.pos)
    }
    fn array<const N: usize>(&mut self) -> io::Result<[u8; N]> {
        let mut a = [0u8; N];
        self.read_exact(&mut a)?;
        Ok(a)
    }
    fn take(&mut self, len: usize) -> io::Result<Vec<u8>> {
        // `len` is checked against the bytes that remain and the name limit;
        // a refused allocation is an error, not the allocator's abort.
        let mut v = tensor_core::try_zeroed("a name", len)
            .map_err(|e| io::Error::new(io::ErrorKind::OutOfMemory, e.to_string()))?;
        self.read_exact(&mut v)?;
        Ok(v)
    }
    fn payload(&mut self, len: u64) -> io::Result<()> {
        let buffered = self.buffered() as u64;
        if len <= buffered {
            self.head += len as usize;
        } else {
            let step = i64::try_from(len - buffered)
                .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
            self.head = 0;
            self.tail = 0;
            self.r.seek(SeekFrom::Current(step))?;
        }
        self.pos += len;
        Ok(())
    }
}
