//! A toy tensor format, added to `mlformats` from outside its crate: the
//! example of `docs/ADDING_A_FORMAT.md`.
//!
//! A `.toyt` file is the magic `TOYT`, a little-endian `u32` count, then
//! one record per tensor:
//!
//! | field | bytes |
//! |---|---|
//! | name length `n` | `u16` |
//! | name | `n` bytes of UTF-8 |
//! | dtype | `u8`: index into [`DTYPES`] |
//! | rank `r` | `u8` |
//! | dims | `r` × `u64` |
//! | data | the tensor's row-major bytes (length from dtype and dims) |
//!
//! All integers are little-endian. [`register`] adds it to `mlformats`:
//! then `mlformats::open`, `convert`, `save`, `detect` and the format
//! lists know it.

use mlformats::tensor_core::Limits;
use mlformats::{DType, Error, Format, FormatPlugin, PluginRead, Result, Tensor, TensorsToWrite};

/// The format's magic bytes.
pub const MAGIC: &[u8; 4] = b"TOYT";

/// The dtypes a toy file holds, by their code (the record's dtype byte).
pub const DTYPES: &[DType] = &[DType::F32, DType::F64, DType::I32, DType::I64, DType::U8];

/// The toy format's plugin.
pub struct Toy;

/// Registers the toy format (again: the same [`Format`]).
pub fn register() -> Result<Format> {
    mlformats::register_format(&Toy)
}

/// The plugin's error.
fn bad(why: impl Into<String>) -> Error {
    Error::plugin("toy", why.into())
}

/// A cursor over the file that never reads past its end.
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| bad(format!("truncated {what} at byte {}", self.pos)))?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N, what)?);
        Ok(a)
    }
}

/// Reads one record.
fn record<'a>(c: &mut Cursor<'a>, limits: &Limits) -> Result<(String, Tensor<'a>)> {
    let n = u16::from_le_bytes(c.array("name length")?);
    limits.check_name_len(u64::from(n))?;
    let name = std::str::from_utf8(c.take(usize::from(n), "name")?)
        .map_err(|_| bad("a name is not UTF-8"))?
        .to_string();
    let [code] = c.array("dtype")?;
    let dtype = *DTYPES
        .get(usize::from(code))
        .ok_or_else(|| bad(format!("{name}: unknown dtype code {code}")))?;
    let [rank] = c.array("rank")?;
    limits.check_rank(u64::from(rank))?;
    let mut dims = Vec::with_capacity(usize::from(rank));
    let mut len = dtype.size();
    for _ in 0..rank {
        let d = usize::try_from(u64::from_le_bytes(c.array("dims")?))
            .map_err(|_| bad(format!("{name}: a dimension does not fit in memory")))?;
        len = len
            .checked_mul(d)
            .ok_or_else(|| bad(format!("{name}: its size overflows")))?;
        dims.push(d);
    }
    let data = c.take(len, "data")?;
    Ok((name, Tensor::new(dtype, dims, data)?))
}

impl FormatPlugin for Toy {
    fn name(&self) -> &'static str {
        "toy"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["toy-tensors"]
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["toyt"]
    }

    fn detect(&self, head: &[u8]) -> bool {
        head.starts_with(MAGIC)
    }

    fn dtypes(&self) -> &'static [DType] {
        DTYPES
    }

    fn read<'a>(&self, bytes: &'a [u8], limits: &Limits) -> Result<PluginRead<'a>> {
        let mut c = Cursor { bytes, pos: 0 };
        if c.take(4, "magic")? != MAGIC {
            return Err(bad("no TOYT magic"));
        }
        let count = u32::from_le_bytes(c.array("count")?);
        limits.check_tensors(u64::from(count))?;
        let mut read = PluginRead::new().meta("toy_version", 1);
        for _ in 0..count {
            let (name, t) = record(&mut c, limits)?;
            read = read.tensor(name, t);
        }
        if c.pos != bytes.len() {
            return Err(bad(format!(
                "{} bytes after the last tensor",
                bytes.len() - c.pos
            )));
        }
        Ok(read)
    }

    fn write(
        &self,
        tensors: &mut TensorsToWrite<'_, '_>,
        out: &mut dyn std::io::Write,
    ) -> Result<()> {
        let count = u32::try_from(tensors.len()).map_err(|_| bad("too many tensors"))?;
        out.write_all(MAGIC)?;
        out.write_all(&count.to_le_bytes())?;
        tensors.for_each(|name, t| {
            let n = u16::try_from(name.len()).map_err(|_| bad("name too long"))?;
            let code = DTYPES
                .iter()
                .position(|&d| d == t.dtype())
                .ok_or_else(|| bad(format!("no {} type", t.dtype())))?;
            let rank = u8::try_from(t.dims().len()).map_err(|_| bad("rank over 255"))?;
            out.write_all(&n.to_le_bytes())?;
            out.write_all(name.as_bytes())?;
            out.write_all(&[code as u8, rank])?;
            for &d in t.dims() {
                out.write_all(&(d as u64).to_le_bytes())?;
            }
            out.write_all(t.bytes())?;
            Ok(())
        })
    }
}

/// The bytes of a toy file holding `tensors` (names, dtypes, dims and
/// values), written by hand, independently of the plugin's writer.
pub fn toy_bytes(tensors: &[(&str, DType, &[usize], &[u8])]) -> Vec<u8> {
    let mut v = MAGIC.to_vec();
    v.extend((tensors.len() as u32).to_le_bytes());
    for (name, dtype, dims, data) in tensors {
        v.extend((name.len() as u16).to_le_bytes());
        v.extend(name.as_bytes());
        v.push(DTYPES.iter().position(|d| d == dtype).unwrap_or(0) as u8);
        v.push(dims.len() as u8);
        for &d in *dims {
            v.extend((d as u64).to_le_bytes());
        }
        v.extend(*data);
    }
    v
}
