//! The reader: bytes (or a memory map) to a [`Module`] that borrows tensor data.

use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

use tensor_core::{DType, Limits, MappedFile, Tensor, checked_byte_len};

use crate::dtype::dtype_from_code;
use crate::error::{Error, Result};
use crate::module::{Header, MODULE_CODE, Module, Node, NodeKind, Packed, Param};

/// How strictly to read.
///
/// The default is strict: structure, ranges and cycles are always checked;
/// `check_loadable` also applies the two graph checks of the C++
/// `Module::Load` (no operator without inputs reachable from the outputs,
/// every reachable `<param>` listed in the module inputs), so that a module
/// the reader accepts is one the real library loads. Bytes after the graph
/// are ignored, as both real readers do, unless `reject_trailing` is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadOptions {
    /// Bounds on counts, ranks and name lengths.
    pub limits: Limits,
    /// Apply the C++ library's load checks (default `true`).
    pub check_loadable: bool,
    /// Refuse bytes after the graph (default `false`).
    pub reject_trailing: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            limits: Limits::default(),
            check_loadable: true,
            reject_trailing: false,
        }
    }
}

impl ReadOptions {
    /// Structure only: what the format allows, not what the C++ library
    /// loads (the Python reader's view).
    pub fn structural() -> Self {
        ReadOptions {
            check_loadable: false,
            ..Self::default()
        }
    }

    /// Sets [`ReadOptions::limits`].
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Sets [`ReadOptions::check_loadable`].
    pub fn with_check_loadable(mut self, on: bool) -> Self {
        self.check_loadable = on;
        self
    }

    /// Sets [`ReadOptions::reject_trailing`].
    pub fn with_reject_trailing(mut self, on: bool) -> Self {
        self.reject_trailing = on;
        self
    }
}

impl<'a> Module<'a> {
    /// Reads a module from `bytes` with the default (strict) options; tensor
    /// data is borrowed from `bytes`.
    pub fn parse(bytes: &'a [u8]) -> Result<Module<'a>> {
        Self::parse_with(bytes, &ReadOptions::default())
    }

    /// Reads a module from `bytes` with `opts`; tensor data is borrowed from `bytes`.
    pub fn parse_with(bytes: &'a [u8], opts: &ReadOptions) -> Result<Module<'a>> {
        let mut parser = Parser::new(Slice(bytes), opts.limits, false);
        let module = parser.module()?;
        module.checked(bytes.len(), opts)
    }

    /// The checks after the walk, the same for both inputs: trailing
    /// bytes (when refused), cycles, and the C++ library's load checks.
    pub(crate) fn checked(self, len: usize, opts: &ReadOptions) -> Result<Self> {
        if opts.reject_trailing && self.end != len {
            return Err(Error::BadNode {
                at: "end of graph".into(),
                offset: self.end,
                what: format!("{} trailing bytes after the graph", len - self.end),
            });
        }
        self.check_acyclic()?;
        if opts.check_loadable {
            self.check_loadable()?;
        }
        Ok(self)
    }
}

impl Module<'static> {
    /// Reads a module from a memory map; tensor data stays in the map
    /// (shared, zero-copy), keys and names are copied.
    pub fn from_map(map: &Arc<MappedFile>, opts: &ReadOptions) -> Result<Module<'static>> {
        let m = Module::parse_with(map.as_bytes(), opts)?;
        Ok(m.rebase(map))
    }

    /// Memory-maps the file at `path` and reads it with the default options.
    pub fn open(path: impl AsRef<Path>) -> Result<Module<'static>> {
        Self::open_with(path, &ReadOptions::default())
    }

    /// Memory-maps the file at `path` and reads it with `opts` (see
    /// [`Module::from_map`]).
    pub fn open_with(path: impl AsRef<Path>, opts: &ReadOptions) -> Result<Module<'static>> {
        let map = MappedFile::open(path)?;
        Self::from_map(&map, opts)
    }
}

impl Module<'_> {
    /// Fails with [`Error::Cycle`] when a node depends on itself.
    pub fn check_acyclic(&self) -> Result<()> {
        self.dfs_order().map(|_| ())
    }

    /// The checks the C++ `Module::Load` makes after linking: walking back
    /// from the outputs, every reached node that is not `<param>` or
    /// `<const>` must have inputs, and every reached `<param>` must be in
    /// the module inputs.
    pub fn check_loadable(&self) -> Result<()> {
        let reached = self.reachable_mask();
        for (i, node) in self.nodes.iter().enumerate() {
            if !reached[i] {
                continue;
            }
            let kind = node.kind();
            if !matches!(kind, NodeKind::Param | NodeKind::Const) && node.inputs.is_empty() {
                return Err(Error::NotComputable {
                    node: i,
                    at: node.locate(i),
                    op: node.op().to_string(),
                });
            }
        }
        for (i, node) in self.nodes.iter().enumerate() {
            if reached[i] && node.kind() == NodeKind::Param && !self.inputs.contains(&i) {
                return Err(Error::MissingInput {
                    node: i,
                    at: node.locate(i),
                });
            }
        }
        Ok(())
    }

    /// `mask[i]` is true when node `i` is reachable from the outputs
    /// (walking inputs backwards). Indices are in range by construction.
    pub(crate) fn reachable_mask(&self) -> Vec<bool> {
        let n = self.nodes.len();
        let mut seen = vec![false; n];
        let mut stack: Vec<usize> = Vec::new();
        for &o in &self.outputs {
            if o < n && !seen[o] {
                seen[o] = true;
                stack.push(o);
            }
        }
        while let Some(v) = stack.pop() {
            for &u in self
                .nodes
                .get(v)
                .map(|n| n.inputs.as_slice())
                .unwrap_or(&[])
            {
                if u < n && !seen[u] {
                    seen[u] = true;
                    stack.push(u);
                }
            }
        }
        seen
    }

    /// Depth-first post-order over all nodes, roots in index order and
    /// inputs in order: every producer comes before its consumers, and an
    /// order that already has that property is kept as it is.
    pub(crate) fn dfs_order(&self) -> Result<Vec<usize>> {
        let n = self.nodes.len();
        // 0 = unvisited, 1 = on the stack, 2 = done
        let mut state = vec![0u8; n];
        let mut order = Vec::with_capacity(n);
        let mut stack: Vec<(usize, usize)> = Vec::new();
        for root in 0..n {
            if state[root] != 0 {
                continue;
            }
            state[root] = 1;
            stack.push((root, 0));
            while let Some(top) = stack.last_mut() {
                let (v, k) = *top;
                let inputs = self
                    .nodes
                    .get(v)
                    .map(|n| n.inputs.as_slice())
                    .unwrap_or(&[]);
                if let Some(&u) = inputs.get(k) {
                    top.1 += 1;
                    match state.get(u) {
                        Some(0) => {
                            state[u] = 1;
                            stack.push((u, 0));
                        }
                        Some(1) => {
                            return Err(Error::Cycle {
                                node: u,
                                at: self.locate(u),
                            });
                        }
                        _ => {}
                    }
                } else {
                    state[v] = 2;
                    order.push(v);
                    stack.pop();
                }
            }
        }
        Ok(order)
    }
}

/// Where in the file a value is, for messages.
#[derive(Clone, Copy)]
enum At<'k> {
    Top,
    Node(usize),
    Param(usize, &'k [u8]),
}

impl std::fmt::Display for At<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            At::Top => Ok(()),
            At::Node(i) => write!(f, " of node {i}"),
            At::Param(i, k) => write!(f, " of node {i}, param {:?}", String::from_utf8_lossy(k)),
        }
    }
}

impl At<'_> {
    fn place(&self) -> String {
        match self {
            At::Top => "module".into(),
            At::Node(i) => format!("node {i}"),
            At::Param(i, k) => format!("node {i}, param {:?}", String::from_utf8_lossy(k)),
        }
    }
}

/// What the walk reads from: the whole file in memory ([`Slice`], tensor
/// data borrowed) or a stream read a window at a time
/// ([`crate::index::Reader`], tensor data located and skipped). The parser
/// checks every range against [`Input::len`] before asking for it.
pub(crate) trait Input<'a> {
    /// The input's length in bytes.
    fn len(&self) -> usize;

    /// The bytes `[pos, pos + N)`.
    fn array<const N: usize>(&mut self, pos: usize) -> Result<[u8; N]>;

    /// The bytes `[pos, pos + n)` (structure: keys, the header).
    fn bytes(&mut self, pos: usize, n: usize) -> Result<Cow<'a, [u8]>>;

    /// A field's data `[pos, pos + n)`: its bytes, or `None` when `keep`
    /// is false and this input skips data.
    fn data(&mut self, pos: usize, n: usize, keep: bool) -> Result<Option<Cow<'a, [u8]>>>;
}

/// The whole file in memory.
pub(crate) struct Slice<'a>(pub(crate) &'a [u8]);

impl<'a> Input<'a> for Slice<'a> {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn array<const N: usize>(&mut self, pos: usize) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(&self.0[pos..pos + N]);
        Ok(a)
    }

    fn bytes(&mut self, pos: usize, n: usize) -> Result<Cow<'a, [u8]>> {
        Ok(Cow::Borrowed(&self.0[pos..pos + n]))
    }

    fn data(&mut self, pos: usize, n: usize, _keep: bool) -> Result<Option<Cow<'a, [u8]>>> {
        Ok(Some(Cow::Borrowed(&self.0[pos..pos + n])))
    }
}

/// Where one field's data is, recorded when the parser locates data.
#[derive(Debug, Clone)]
pub(crate) struct FieldAt {
    /// The field belongs to a reserved (`#`) parameter.
    pub reserved: bool,
    pub dtype: DType,
    pub dims: Vec<usize>,
    pub offset: usize,
    pub len: usize,
}

pub(crate) struct Parser<'a, I> {
    input: I,
    pos: usize,
    limits: Limits,
    /// Every field's place, in file order, when `Some`; the fields whose
    /// data the graph does not need are then not read.
    pub(crate) located: Option<Vec<FieldAt>>,
    _bytes: std::marker::PhantomData<&'a [u8]>,
}

impl<'a, I: Input<'a>> Parser<'a, I> {
    pub(crate) fn new(input: I, limits: Limits, locate: bool) -> Self {
        Parser {
            input,
            pos: 0,
            limits,
            located: locate.then(Vec::new),
            _bytes: std::marker::PhantomData,
        }
    }

    fn left(&self) -> usize {
        self.input.len().saturating_sub(self.pos)
    }

    /// Checks that `n` bytes remain; returns where they start and moves past them.
    fn claim(&mut self, n: usize, what: &str, at: At<'_>) -> Result<usize> {
        let start = self.pos;
        match start.checked_add(n).filter(|&e| e <= self.input.len()) {
            Some(e) => {
                self.pos = e;
                Ok(start)
            }
            None => Err(Error::Truncated {
                what: format!("{what}{at}"),
                offset: self.pos,
                need: n as u64,
                left: self.left(),
            }),
        }
    }

    fn take(&mut self, n: usize, what: &str, at: At<'_>) -> Result<Cow<'a, [u8]>> {
        let start = self.claim(n, what, at)?;
        self.input.bytes(start, n)
    }

    fn u32(&mut self, what: &str, at: At<'_>) -> Result<u32> {
        let start = self.claim(4, what, at)?;
        Ok(u32::from_le_bytes(self.input.array(start)?))
    }

    /// A count or index: a u32 below 2^31.
    fn small(&mut self, what: &str, at: At<'_>) -> Result<usize> {
        let offset = self.pos;
        let v = self.u32(what, at)?;
        if v >= 1 << 31 {
            return Err(Error::ValueTooLarge {
                what: format!("{what}{at}"),
                offset,
                value: v,
            });
        }
        Ok(v as usize)
    }

    /// A count of entries of at least `min_size` bytes each, checked
    /// against the remaining bytes and the record limit before any allocation.
    fn count(&mut self, what: &str, at: At<'_>, min_size: usize) -> Result<usize> {
        self.count_within(what, at, min_size, Limits::check_tensors)
    }

    /// [`Self::count`], checked against the limit `check` applies.
    fn count_within(
        &mut self,
        what: &str,
        at: At<'_>,
        min_size: usize,
        check: fn(&Limits, u64) -> tensor_core::Result<()>,
    ) -> Result<usize> {
        let offset = self.pos;
        let n = self.small(what, at)?;
        if (n as u64).saturating_mul(min_size as u64) > self.left() as u64 {
            return Err(Error::CountTooLarge {
                what: format!("{what}{at}"),
                offset,
                count: n as u64,
                min_size,
                left: self.left(),
            });
        }
        check(&self.limits, n as u64).map_err(|source| Error::Limit {
            at: format!("{what}{at} at offset {offset}"),
            source,
        })?;
        Ok(n)
    }

    /// An empty vector with room for `n` items counted at `offset`, or
    /// [`Error::Limit`] carrying [`tensor_core::Error::OutOfMemory`] when the
    /// allocator refuses it (never the allocator's abort).
    fn reserve<T>(what: &str, at: At<'_>, offset: usize, n: usize) -> Result<Vec<T>> {
        tensor_core::try_with_capacity(what, n).map_err(|source| Error::Limit {
            at: format!("{what}{at} at offset {offset}"),
            source,
        })
    }

    fn index_list(&mut self, what: &str, at: At<'_>) -> Result<Vec<(usize, usize)>> {
        let offset = self.pos;
        let n = self.count(&format!("{what} count"), at, 4)?;
        let mut v = Self::reserve(what, at, offset, n)?;
        for _ in 0..n {
            let off = self.pos;
            v.push((self.small(what, at)?, off));
        }
        Ok(v)
    }

    pub(crate) fn module(&mut self) -> Result<Module<'a>> {
        let fake = self.u32("header.fake", At::Top)?;
        let code = self.u32("header.code", At::Top)?;
        let data_bytes = self.take(120, "header.data", At::Top)?;
        if code != MODULE_CODE {
            return Err(Error::BadCode { found: code });
        }
        let mut data = [0u8; 120];
        data.copy_from_slice(&data_bytes);
        let header = Header { fake, code, data };
        let inputs = self.index_list("module input index", At::Top)?;
        let outputs = self.index_list("module output index", At::Top)?;
        // A node is at least a param count and an input count.
        let n = self.count_within("node count", At::Top, 8, |l, n| {
            l.check_tensors(n)?;
            l.check_nodes(n)
        })?;
        let check = |what: &str, list: Vec<(usize, usize)>| -> Result<Vec<usize>> {
            list.into_iter()
                .map(|(i, off)| {
                    if i < n {
                        Ok(i)
                    } else {
                        Err(Error::IndexOutOfRange {
                            what: what.into(),
                            index: i as u64,
                            offset: off,
                            count: n,
                        })
                    }
                })
                .collect()
        };
        let inputs = check("module input index", inputs)?;
        let outputs = check("module output index", outputs)?;
        let mut nodes = Vec::with_capacity(n.min(4096));
        for i in 0..n {
            nodes.push(self.node(i, n)?);
        }
        Ok(Module {
            header,
            inputs,
            outputs,
            nodes,
            end: self.pos,
        })
    }

    fn node(&mut self, i: usize, n: usize) -> Result<Node<'a>> {
        let offset = self.pos;
        // A param is at least a key length and a field count.
        let np = self.count("param count", At::Node(i), 8)?;
        let mut params = Self::reserve("params", At::Node(i), offset, np)?;
        for _ in 0..np {
            params.push(self.param(i)?);
        }
        let ni_at = self.pos;
        let ni = self.count("input count", At::Node(i), 4)?;
        let mut inputs = Self::reserve("inputs", At::Node(i), ni_at, ni)?;
        for _ in 0..ni {
            let off = self.pos;
            let idx = self.small("input index", At::Node(i))?;
            if idx >= n {
                return Err(Error::IndexOutOfRange {
                    what: format!("input index of node {i}"),
                    index: idx as u64,
                    offset: off,
                    count: n,
                });
            }
            inputs.push(idx);
        }
        let op = reserved_string(&params, "#op", i, offset)?;
        let name = reserved_string(&params, "#name", i, offset)?;
        let node = Node {
            op,
            name,
            params,
            inputs,
            offset: Some(offset),
        };
        if let Some(p) = node.param("#output_count")
            && !is_one(p.value())
        {
            return Err(Error::BadNode {
                at: node.describe(i),
                offset,
                what: "#output_count is not 1 (all operators must have one output)".into(),
            });
        }
        Ok(node)
    }

    fn param(&mut self, i: usize) -> Result<Param<'a>> {
        let offset = self.pos;
        let klen = self.small("key length", At::Node(i))?;
        self.limits
            .check_name_len(klen as u64)
            .map_err(|source| Error::Limit {
                at: format!("key length of node {i} at offset {offset}"),
                source,
            })?;
        let key = self.take(klen, "key", At::Node(i))?;
        let at = At::Param(i, &key[..]);
        // A field is at least a dtype byte and a rank.
        let nf_at = self.pos;
        let nf = self.count("field count", at, 5)?;
        let mut fields = Self::reserve("fields", at, nf_at, nf)?;
        for _ in 0..nf {
            fields.push(self.field(at)?);
        }
        Ok(Param {
            key,
            value: Packed::new(fields),
            offset: Some(offset),
        })
    }

    fn field(&mut self, at: At<'_>) -> Result<Tensor<'a>> {
        let offset = self.pos;
        let start = self.claim(1, "field dtype", at)?;
        let [code] = self.input.array(start)?;
        let dtype: DType = dtype_from_code(code).ok_or_else(|| Error::UnknownDType {
            code,
            offset,
            at: at.place(),
        })?;
        let rank_off = self.pos;
        let rank = self.small("field rank", at)?;
        self.limits
            .check_rank(rank as u64)
            .map_err(|source| Error::Limit {
                at: format!("field rank{at} at offset {rank_off}"),
                source,
            })?;
        if (rank as u64) * 4 > self.left() as u64 {
            return Err(Error::Truncated {
                what: format!("shape{at}"),
                offset: self.pos,
                need: rank as u64 * 4,
                left: self.left(),
            });
        }
        let mut dims = Self::reserve("shape", at, rank_off, rank)?;
        for _ in 0..rank {
            dims.push(self.small("dimension", at)?);
        }
        let nbytes = checked_byte_len(&dims, dtype).ok_or_else(|| Error::ShapeOverflow {
            dims: dims.clone(),
            offset,
            at: at.place(),
        })?;
        let start = self.claim(nbytes, "field data", at)?;
        let mut keep = true;
        if let Some(located) = self.located.as_mut() {
            let reserved = matches!(at, At::Param(_, k) if k.first() == Some(&b'#'));
            keep = crate::typed::graph_reads(reserved, dtype, &dims);
            located.push(FieldAt {
                reserved,
                dtype,
                dims: dims.clone(),
                offset: start,
                len: nbytes,
            });
        }
        match self.input.data(start, nbytes, keep)? {
            Some(data) => Ok(Tensor::new(dtype, dims, cow_bytes(data))?),
            // the graph names this field, never reads it: an empty stand-in
            // of rank 2 (see `typed::graph_reads`)
            None => Ok(Tensor::new(dtype, [0usize, 0], Vec::new())?),
        }
    }
}

fn cow_bytes(c: Cow<'_, [u8]>) -> tensor_core::Bytes<'_> {
    match c {
        Cow::Borrowed(b) => tensor_core::Bytes::Borrowed(b),
        Cow::Owned(v) => tensor_core::Bytes::Owned(v),
    }
}

/// `#op` / `#name`: present, one field, 1-D CHAR8.
fn reserved_string<'a>(
    params: &[Param<'a>],
    key: &str,
    i: usize,
    offset: usize,
) -> Result<Cow<'a, str>> {
    let p = params.iter().find(|p| &*p.key == key.as_bytes());
    let text: Option<Cow<'a, str>> = p.and_then(|p| match p.value.fields() {
        [t] if t.dtype() == DType::Char8 && t.shape().rank() == 1 => match t.storage() {
            tensor_core::Bytes::Borrowed(b) => Some(String::from_utf8_lossy(b)),
            // read from a stream: the field owns its bytes
            b => Some(Cow::Owned(
                String::from_utf8_lossy(b.as_slice()).into_owned(),
            )),
        },
        _ => None,
    });
    match text {
        Some(t) => Ok(t),
        None => Err(Error::BadNode {
            at: format!("node {i}"),
            offset,
            what: format!("{key} missing or not a 1-D char8 string"),
        }),
    }
}

/// A value holding exactly one numeric element equal to 1.
fn is_one(v: &Packed<'_>) -> bool {
    match v.fields() {
        [t] if t.numel() == 1 => t.to_f64_vec().is_some_and(|x| x == [1.0]),
        _ => false,
    }
}
