//! A module's structure read through `Read + Seek`, its tensor data
//! located and not read: for files too big to hold in memory (a viewer
//! reading a browser `File` a slice at a time).
//!
//! The walk is the reader's own ([`Module::parse_with`]), with the same
//! checks in the same order, so a file reads this way exactly when it
//! parses whole, with the same error otherwise. Only the data the graph
//! shows is read: reserved values (`#op`, `#name`, ...), strings, and
//! values of rank 0 or 1 of at most 64 elements; every other field is
//! skipped, its place recorded.

use std::borrow::Cow;
use std::io::{BufReader, Read, Seek, SeekFrom};

use tensor_core::DType;
use tensor_core::graph::Graph;

use crate::error::{Error, Result};
use crate::module::Module;
use crate::read::{Input, Parser, ReadOptions};

/// A stream read a window at a time, skipping what it is not asked for.
struct Reader<R> {
    r: BufReader<R>,
    /// The stream's position.
    at: u64,
    len: usize,
}

impl<R: Read + Seek> Reader<R> {
    fn seek_to(&mut self, pos: usize) -> Result<()> {
        let pos = pos as u64;
        if pos != self.at {
            let d = i64::try_from(pos)
                .ok()
                .zip(i64::try_from(self.at).ok())
                .map(|(p, a)| p - a)
                .ok_or_else(|| std::io::Error::other("offset out of range"))?;
            self.r.seek_relative(d)?;
            self.at = pos;
        }
        Ok(())
    }

    fn fill(&mut self, pos: usize, buf: &mut [u8]) -> Result<()> {
        self.seek_to(pos)?;
        self.r.read_exact(buf)?;
        self.at += buf.len() as u64;
        Ok(())
    }
}

impl<R: Read + Seek> Input<'static> for Reader<R> {
    fn len(&self) -> usize {
        self.len
    }

    fn array<const N: usize>(&mut self, pos: usize) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        self.fill(pos, &mut a)?;
        Ok(a)
    }

    fn bytes(&mut self, pos: usize, n: usize) -> Result<Cow<'static, [u8]>> {
        // the parser checked `n` against the bytes left; a stream that
        // claims more than it holds still gets an error, not an abort
        let mut v = tensor_core::try_zeroed("module bytes", n).map_err(|source| Error::Limit {
            at: format!("{n} bytes at offset {pos}"),
            source,
        })?;
        self.fill(pos, &mut v)?;
        Ok(Cow::Owned(v))
    }

    fn data(&mut self, pos: usize, n: usize, keep: bool) -> Result<Option<Cow<'static, [u8]>>> {
        if keep {
            self.bytes(pos, n).map(Some)
        } else {
            Ok(None)
        }
    }
}

/// One tensor of a [`ModuleIndex`]: the names [`Module::unique_named_tensors`]
/// and [`Module::named_tensors`] give it, its type and shape, and where its
/// bytes (row-major) are in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LocatedTensor {
    /// Its name in [`Module::unique_named_tensors`].
    pub name: String,
    /// Its name in [`Module::named_tensors`] (as the file stores it).
    pub stored_name: String,
    /// Its element type.
    pub dtype: DType,
    /// Its dimensions.
    pub dims: Vec<usize>,
    /// Where its bytes start in the file.
    pub offset: u64,
    /// How many bytes it has.
    pub len: u64,
}

/// A module's structure without its tensor data: every tensor of
/// [`Module::unique_named_tensors`], located, and the graph
/// [`Module::to_graph`] gives (see the [module](self)).
#[derive(Debug, Clone)]
pub struct ModuleIndex {
    tensors: Vec<LocatedTensor>,
    graph: Graph,
    end: u64,
}

impl ModuleIndex {
    /// Every tensor of the non-reserved parameters, in the order and with
    /// the names of [`Module::unique_named_tensors`].
    pub fn tensors(&self) -> &[LocatedTensor] {
        &self.tensors
    }

    /// The graph, equal to [`Module::to_graph`] of the same bytes.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// Where the graph ends in the file (see [`Module::end_offset`]).
    pub fn end_offset(&self) -> u64 {
        self.end
    }
}

impl Module<'static> {
    /// Reads the structure of the module in `r` (from its start to the
    /// graph's end, seeking past tensor data) with `opts`: what
    /// [`Module::parse_with`] reads and checks, every tensor located
    /// instead of read (see [`ModuleIndex`]).
    pub fn index<R: Read + Seek>(mut r: R, opts: &ReadOptions) -> Result<ModuleIndex> {
        let len = r.seek(SeekFrom::End(0))?;
        r.seek(SeekFrom::Start(0))?;
        let len = usize::try_from(len)
            .map_err(|_| Error::Io(std::io::Error::other("the file is too big to address")))?;
        let input = Reader {
            // small: a walk jumps over each tensor's data, and a file read
            // over a network pays for every byte read past a header
            r: BufReader::with_capacity(2 << 10, r),
            at: 0,
            len,
        };
        let mut parser = Parser::new(input, opts.limits, true);
        let module = parser.module()?;
        let located = parser.located.take().unwrap_or_default();
        let module = module.checked(len, opts)?;
        let mut fields = located.into_iter().filter(|f| !f.reserved);
        let stored = module.named_tensors();
        let unique = module.unique_named_tensors();
        let mut tensors = Vec::with_capacity(stored.len());
        for ((stored_name, _), (name, _)) in stored.into_iter().zip(unique) {
            // one located field per tensor, in the same order
            let f = fields
                .next()
                .ok_or_else(|| Error::Build("a tensor was not located".into()))?;
            tensors.push(LocatedTensor {
                name,
                stored_name,
                dtype: f.dtype,
                dims: f.dims,
                offset: f.offset as u64,
                len: f.len as u64,
            });
        }
        Ok(ModuleIndex {
            tensors,
            graph: module.to_graph(),
            end: module.end_offset() as u64,
        })
    }
}
