//! The bytes of a `TensorProto` read a window at a time, and the loops
//! over a packed run of varints (decoding them, or passing over them
//! counted).

use super::{Pos, ReadAt, Result, WINDOW, bad};

/// A window of up to [`WINDOW`] bytes of `[.., end)` of a file.
pub(super) struct Window<'r, R: ?Sized> {
    r: &'r R,
    end: u64,
    pub(super) buf: Vec<u8>,
    pub(super) at: u64,
    /// About how many bytes the values still wanted take (a small read
    /// reads little).
    pub(super) hint: u64,
}

impl<'r, R: ReadAt + ?Sized> Window<'r, R> {
    pub(super) fn new(r: &'r R, end: u64) -> Self {
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
    pub(super) fn fill(&mut self, pos: u64, n: u64) -> Result<usize> {
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
    pub(super) fn byte(&mut self, pos: u64, limit: u64) -> Result<u8> {
        if pos >= limit {
            return Err(bad(pos, "truncated varint"));
        }
        let i = self.fill(pos, 1)?;
        Ok(self.buf[i])
    }

    /// A varint at `*pos`, before `limit` (prost's rules: at most 10 bytes,
    /// the 10th 0 or 1).
    pub(super) fn varint(&mut self, pos: &mut u64, limit: u64) -> Result<u64> {
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
    pub(super) fn copy(&mut self, pos: u64, dst: &mut [u8]) -> Result<()> {
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

/// Decodes up to `want` varints of the packed run `p` is in (writing
/// their low bytes to `out`): from the window's bytes while a varint
/// ends inside it, else a byte at a time (refilling it).
pub(super) fn varints<R: ReadAt + ?Sized>(
    w: &mut Window<'_, R>,
    p: &mut Pos,
    want: u64,
    out: &mut [u8],
    size: usize,
) -> Result<u64> {
    let mut k = 0u64;
    let mut put = |k: u64, v: u64| {
        let i = k as usize * size;
        out[i..i + size].copy_from_slice(&v.to_le_bytes()[..size]);
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
            put(k, v);
            j += len;
            k += 1;
        }
        p.pos += j as u64;
        if j == 0 && k < want {
            let v = w.varint(&mut p.pos, p.run_end)?;
            put(k, v);
            k += 1;
        }
    }
    Ok(k)
}

/// Moves past up to `want` varints of the packed run `p` is in without
/// decoding them: their last bytes counted (each checked as prost
/// checks it: at most 10 bytes, the 10th 0 or 1, none cut by the
/// run's end).
pub(super) fn skip_varints<R: ReadAt + ?Sized>(
    w: &mut Window<'_, R>,
    p: &mut Pos,
    want: u64,
) -> Result<u64> {
    let mut k = 0u64;
    // bytes of the varint being passed, and where it starts
    let mut inside = 0u32;
    let mut at = p.pos;
    let mut value_end = p.pos;
    while k < want && at < p.run_end {
        let i = w.fill(at, 1)?;
        let stop = (w.at + w.buf.len() as u64).min(p.run_end) - w.at;
        let bytes = &w.buf[i..stop as usize];
        let mut j = 0usize;
        while j < bytes.len() {
            // 8 bytes at a time while no varint ends on its 10th byte
            // there and `want` is not reached: their last bytes counted
            if let Some(word) = bytes.get(j..j + 8) {
                let word = u64::from_le_bytes(word.try_into().unwrap_or_default());
                let ends = !word & 0x8080_8080_8080_8080;
                let first = ends.trailing_zeros() / 8;
                let n = u64::from(ends.count_ones());
                if ends == 0 && inside <= 1 {
                    inside += 8;
                    j += 8;
                    continue;
                }
                if ends != 0 && inside + first <= 8 && k + n < want {
                    k += n;
                    inside = ends.leading_zeros() / 8;
                    j += 8;
                    continue;
                }
            }
            let b = bytes[j];
            j += 1;
            if inside == 9 && b > 1 {
                return Err(bad(at + j as u64 - 10, "invalid varint"));
            }
            if b < 0x80 {
                inside = 0;
                k += 1;
                if k == want {
                    break;
                }
            } else {
                inside += 1;
            }
        }
        at += j as u64;
        if inside == 0 {
            value_end = at;
        }
    }
    if inside > 0 {
        return Err(bad(
            value_end,
            "a packed field's last varint runs past its end",
        ));
    }
    p.pos = value_end;
    Ok(k)
}
