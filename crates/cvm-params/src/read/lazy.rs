//! The lazy reader over any `Read + Seek`.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

use tensor_core::{Limits, Tensor};

use crate::error::{Error, Location, Result};

use super::parser::{index_stream, lookup, name_index, parse_names_offsets, reserve};
use super::{ReadOptions, TensorInfo};

/// A reader over any `Read + Seek` that indexes the file on open (reading
/// only the name table and the tensor headers, seeking over payloads) and
/// then reads one tensor at a time, for files too large to map or load.
///
/// The dictionary may start at the stream's current position; offsets are
/// relative to it. Every payload read is checked against
/// [`Limits::max_alloc`] before its buffer is allocated.
///
/// ```
/// # fn main() -> Result<(), cvm_params::Error> {
/// use std::io::Cursor;
/// use cvm_params::{LazyParams, ReadOptions, WriteOptions};
/// use tensor_core::Tensor;
///
/// let a = Tensor::from_values([3], &[1.0f32, 2.0, 3.0])?;
/// let b = Tensor::from_values([], &[7i64])?;
/// let mut file = Vec::new();
/// cvm_params::write(&mut file, [("a", &a), ("b", &b)], &Default::default())?;
///
/// let mut lazy = LazyParams::from_reader(Cursor::new(file), &ReadOptions::default())?;
/// assert_eq!(lazy.len(), 2);
/// assert_eq!(lazy.info(1).unwrap().dims, Vec::<usize>::new());
/// let b2 = lazy.read_by_name("b")?.unwrap();
/// assert_eq!(b2.view::<i64>()?[0], 7);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct LazyParams<R> {
    reader: R,
    start: u64,
    names: Vec<Vec<u8>>,
    infos: Vec<TensorInfo>,
    by_name: Vec<usize>,
    trailing: u64,
    limits: Limits,
}

impl<R: Read + Seek> LazyParams<R> {
    /// Indexes the dictionary starting at the stream's position, with `opts`
    /// ([`ReadOptions::default`] is strict).
    pub fn from_reader(mut reader: R, opts: &ReadOptions) -> Result<Self> {
        let (start, _, parsed) = index_stream(&mut reader, opts)?;
        let offsets = parse_names_offsets(&parsed.entries);
        let by_name = name_index(&parsed.entries, &offsets, opts.allow_duplicates)?;
        let (names, infos) = parsed.entries.into_iter().map(|r| (r.name, r.info)).unzip();
        Ok(LazyParams {
            reader,
            start,
            names,
            infos,
            by_name,
            trailing: parsed.trailing,
            limits: opts.limits,
        })
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.infos.len()
    }

    /// True for an empty dictionary.
    pub fn is_empty(&self) -> bool {
        self.infos.is_empty()
    }

    /// The stored name of entry `index`.
    pub fn name_bytes(&self, index: usize) -> Option<&[u8]> {
        self.names.get(index).map(Vec::as_slice)
    }

    /// The name of entry `index`, invalid UTF-8 replaced with U+FFFD.
    pub fn name(&self, index: usize) -> Option<Cow<'_, str>> {
        self.names.get(index).map(|n| String::from_utf8_lossy(n))
    }

    /// The record of entry `index` (dtype, dims, offsets).
    pub fn info(&self, index: usize) -> Option<&TensorInfo> {
        self.infos.get(index)
    }

    /// All records in file order.
    pub fn infos(&self) -> &[TensorInfo] {
        &self.infos
    }

    /// The index of the entry named `name` (the last one, if duplicates were allowed).
    pub fn position(&self, name: &[u8]) -> Option<usize> {
        lookup(&self.by_name, |i| &self.names[i], name)
    }

    /// Bytes after the last tensor (0 unless read with `lenient_trailing`).
    pub fn trailing_bytes(&self) -> u64 {
        self.trailing
    }

    /// Where entry `index`'s payload is (for errors) and its length, once
    /// the limits allow allocating it.
    fn payload_len(&self, index: usize) -> Result<(Location, usize)> {
        let info = &self.infos[index];
        let at = Location::tensor(info.data_offset, index, &self.names[index]);
        self.limits
            .check_alloc("tensor payload", info.nbytes)
            .map_err(|error| Error::Limit {
                at: at.clone(),
                error,
            })?;
        let n = usize::try_from(info.nbytes).map_err(|_| Error::Limit {
            at: at.clone(),
            error: tensor_core::Error::LimitExceeded {
                what: "tensor payload",
                value: info.nbytes,
                limit: usize::MAX as u64,
            },
        })?;
        Ok((at, n))
    }

    /// Reads the tensor of entry `index` into a new owned buffer.
    pub fn read(&mut self, index: usize) -> Result<Tensor<'static>> {
        let mut buf = Vec::new();
        self.read_into(index, &mut buf)?;
        let info = &self.infos[index];
        Ok(Tensor::new(info.dtype, info.dims.clone(), buf)?)
    }

    /// Reads the payload of entry `index` into `buf` (replacing its
    /// contents; reuse one buffer to avoid reallocating).
    pub fn read_into(&mut self, index: usize, buf: &mut Vec<u8>) -> Result<()> {
        let Some(info) = self.infos.get(index) else {
            return Err(Error::NoSuchEntry {
                index,
                len: self.infos.len(),
            });
        };
        let (at, n) = self.payload_len(index)?;
        let io_err = |error| Error::Io {
            at: at.clone(),
            error,
        };
        self.reader
            .seek(SeekFrom::Start(self.start + info.data_offset))
            .map_err(io_err)?;
        buf.clear();
        tensor_core::try_reserve(buf, "tensor payload", n).map_err(|error| Error::Limit {
            at: at.clone(),
            error,
        })?;
        (&mut self.reader)
            .take(info.nbytes)
            .read_to_end(buf)
            .map_err(io_err)?;
        if buf.len() != n {
            return Err(Error::Truncated {
                at,
                what: "the payload (the stream shrank after it was indexed)",
                needed: info.nbytes,
                available: buf.len() as u64,
            });
        }
        Ok(())
    }

    /// Reads the tensor named `name` (the last one, if duplicates were allowed).
    pub fn read_by_name(&mut self, name: &str) -> Result<Option<Tensor<'static>>> {
        match self.position(name.as_bytes()) {
            Some(i) => self.read(i).map(Some),
            None => Ok(None),
        }
    }

    /// Gives the stream back.
    pub fn into_inner(self) -> R {
        self.reader
    }
}

/// Files at least this large are read by several threads in
/// [`LazyParams::read_all`].
const PARALLEL_FROM: u64 = 16 << 20;

/// The most threads [`LazyParams::read_all`] uses.
const MAX_THREADS: usize = 4;

impl LazyParams<File> {
    /// Reads every tensor into new owned buffers, in file order: what
    /// loading a whole `.params` into memory means (TVM's
    /// `load_param_dict_from_file`).
    ///
    /// Each payload is checked against [`Limits::max_alloc`] before its
    /// buffer is allocated. On Unix, files of 16 MiB and more are read by
    /// up to four threads at once (positional reads of disjoint tensors,
    /// in groups of about equal bytes): the cost of loading is mostly the
    /// kernel filling fresh pages, which then happens on every core.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use cvm_params::{LazyParams, ReadOptions};
    /// use tensor_core::Tensor;
    ///
    /// let a = Tensor::from_values([3], &[1.0f32, 2.0, 3.0])?;
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("x.params");
    /// cvm_params::save(&path, [("a", &a)], &Default::default())?;
    /// let mut lazy = LazyParams::from_reader(std::fs::File::open(&path)?, &ReadOptions::default())?;
    /// let all = lazy.read_all()?;
    /// assert_eq!(&*all[0].view::<f32>()?, &[1.0, 2.0, 3.0]);
    /// assert!(!all[0].storage().is_zero_copy());
    /// # Ok(()) }
    /// ```
    pub fn read_all(&mut self) -> Result<Vec<Tensor<'static>>> {
        let total: u64 = self.infos.iter().map(|i| i.nbytes).sum();
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(MAX_THREADS)
            .min(self.infos.len());
        if !cfg!(unix) || threads < 2 || total < PARALLEL_FROM {
            return (0..self.len()).map(|i| self.read(i)).collect();
        }
        // contiguous groups of entries of about total / threads bytes each
        let per = total.div_ceil(threads as u64);
        let mut groups: Vec<std::ops::Range<usize>> = Vec::with_capacity(threads);
        let (mut first, mut acc) = (0usize, 0u64);
        for (i, info) in self.infos.iter().enumerate() {
            acc += info.nbytes;
            if acc >= per && groups.len() + 1 < threads {
                groups.push(first..i + 1);
                first = i + 1;
                acc = 0;
            }
        }
        groups.push(first..self.infos.len());
        let this = &*self;
        let parts: Vec<Result<Vec<Tensor<'static>>>> = std::thread::scope(|scope| {
            let handles: Vec<_> = groups
                .into_iter()
                .map(|range| {
                    scope.spawn(move || range.map(|i| this.read_at(i)).collect::<Result<Vec<_>>>())
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(Error::Io {
                            at: Location::tensor(0, 0, b""),
                            error: io::Error::other("a reading thread panicked"),
                        })
                    })
                })
                .collect()
        });
        let mut out = reserve("the tensors read", self.infos.len(), || Location::at(0))?;
        for p in parts {
            out.extend(p?);
        }
        Ok(out)
    }

    /// Reads entry `index` with a positional read (no shared file offset).
    #[cfg(unix)]
    fn read_at(&self, index: usize) -> Result<Tensor<'static>> {
        use std::os::unix::fs::FileExt;
        let info = &self.infos[index];
        let (at, n) = self.payload_len(index)?;
        // Zeroed memory comes fresh from the system untouched, so the read
        // below is the first write to each page. The size is the indexed
        // payload's, which the file holds and the limits allow.
        let mut buf =
            tensor_core::try_zeroed("tensor payload", n).map_err(|error| Error::Limit {
                at: at.clone(),
                error,
            })?;
        match self
            .reader
            .read_exact_at(&mut buf, self.start + info.data_offset)
        {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                return Err(Error::Truncated {
                    at,
                    what: "the payload (the file shrank after it was indexed)",
                    needed: info.nbytes,
                    available: 0,
                });
            }
            Err(error) => return Err(Error::Io { at, error }),
        }
        Ok(Tensor::new(info.dtype, info.dims.clone(), buf)?)
    }

    #[cfg(not(unix))]
    fn read_at(&self, index: usize) -> Result<Tensor<'static>> {
        // read_all reads sequentially where positional reads are not available
        let info = &self.infos[index];
        Err(Error::Io {
            at: Location::tensor(info.data_offset, index, &self.names[index]),
            error: io::Error::other("positional reads are not available here"),
        })
    }
}
