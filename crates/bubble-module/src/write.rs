//! The writer (streaming a module to `impl Write`) and a builder for
//! modules made from scratch.

use std::borrow::Cow;
use std::io::Write;
use std::path::Path;

use tensor_core::{DType, MemoryOrder, Tensor};

use crate::dtype::code_of_dtype;
use crate::error::{Error, Result};
use crate::module::{Header, Module, Node, Packed, Param, string_tensor};

/// The order nodes are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum NodeOrder {
    /// The module's order (a parsed module: the file's order).
    #[default]
    AsGiven,
    /// Producers before consumers ([`Module::topological_order`]); an
    /// order that already is so is kept. Indices are renumbered.
    ProducersFirst,
}

/// The order parameters are written in inside each bubble.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ParamOrder {
    /// Sorted by key bytes, as the Python writer does (reserved `#` keys first).
    #[default]
    Sorted,
    /// The module's order (a parsed module: the file's order).
    AsGiven,
}

/// How to write a module. The default (nodes as given, params sorted)
/// reproduces a Python-written file byte for byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct WriteOptions {
    /// Node order.
    pub nodes: NodeOrder,
    /// Parameter order.
    pub params: ParamOrder,
}

impl WriteOptions {
    /// Sets the node order.
    pub fn with_nodes(mut self, order: NodeOrder) -> Self {
        self.nodes = order;
        self
    }

    /// Sets the parameter order.
    pub fn with_params(mut self, order: ParamOrder) -> Self {
        self.params = order;
        self
    }
}

/// Bytes of metadata gathered before a write to the inner writer; field
/// data at least this large goes straight to the writer.
const SCRATCH: usize = 64 << 10;

struct Out<W: Write> {
    w: W,
    buf: Vec<u8>,
    total: u64,
}

impl<W: Write> Out<W> {
    fn bytes(&mut self, b: &[u8]) -> Result<()> {
        if b.len() >= SCRATCH {
            self.flush_buf()?;
            self.w.write_all(b)?;
        } else {
            self.buf.extend_from_slice(b);
            if self.buf.len() >= SCRATCH {
                self.flush_buf()?;
            }
        }
        self.total += b.len() as u64;
        Ok(())
    }

    fn u32(&mut self, v: usize) -> Result<()> {
        // every value was checked below 2^31 before writing began
        self.bytes(&(v as u32).to_le_bytes())
    }

    fn flush_buf(&mut self) -> Result<()> {
        if !self.buf.is_empty() {
            self.w.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }
}

fn small(v: usize, what: &dyn Fn() -> String) -> Result<()> {
    if v < (1 << 31) {
        Ok(())
    } else {
        Err(Error::Unwritable {
            at: what(),
            what: format!("{v} is not below 2^31"),
        })
    }
}

/// Checks that a field can be written: a TenniS dtype, row-major, 31-bit dims.
fn check_field(t: &Tensor<'_>, at: &dyn Fn() -> String) -> Result<u8> {
    let code = code_of_dtype(t.dtype()).ok_or_else(|| Error::Unwritable {
        at: at(),
        what: format!("TenniS has no dtype code for {}", t.dtype()),
    })?;
    if t.order() != MemoryOrder::RowMajor && t.dims().iter().filter(|&&d| d > 1).count() > 1 {
        return Err(Error::Unwritable {
            at: at(),
            what: "the tensor is column-major; convert it to row-major first".into(),
        });
    }
    small(t.dims().len(), at)?;
    for &d in t.dims() {
        small(d, at)?;
    }
    Ok(code)
}

fn write_header<W: Write>(out: &mut Out<W>, header: &Header) -> Result<()> {
    let Header { fake, code, data } = header;
    out.bytes(&fake.to_le_bytes())?;
    out.bytes(&code.to_le_bytes())?;
    out.bytes(data)
}

/// One node: its parameters (sorted by key unless `order` keeps them as
/// given), each field's dtype code, dims and bytes, then its inputs
/// through `map` (old index to written index).
fn write_node<W: Write>(
    out: &mut Out<W>,
    node: &Node<'_>,
    order: ParamOrder,
    map: &dyn Fn(usize) -> usize,
) -> Result<()> {
    let mut keyed: Vec<&Param<'_>> = node.params.iter().collect();
    if order == ParamOrder::Sorted {
        keyed.sort_by(|a, b| a.key.cmp(&b.key));
    }
    out.u32(keyed.len())?;
    for p in &keyed {
        out.u32(p.key.len())?;
        out.bytes(&p.key)?;
        out.u32(p.fields().len())?;
        for t in p.fields() {
            let code = code_of_dtype(t.dtype()).unwrap_or(0);
            out.bytes(&[code])?;
            out.u32(t.dims().len())?;
            for &d in t.dims() {
                out.u32(d)?;
            }
            out.bytes(t.bytes())?;
        }
    }
    out.u32(node.inputs.len())?;
    for &i in &node.inputs {
        out.u32(map(i))?;
    }
    Ok(())
}

impl Module<'_> {
    /// Checks that every count, dtype and order can be written.
    pub fn check_writable(&self) -> Result<()> {
        small(self.nodes.len(), &|| "node count".into())?;
        small(self.inputs.len(), &|| "module input count".into())?;
        small(self.outputs.len(), &|| "module output count".into())?;
        for (i, n) in self.nodes.iter().enumerate() {
            small(n.params.len(), &|| n.describe(i))?;
            small(n.inputs.len(), &|| n.describe(i))?;
            for p in &n.params {
                let at = || format!("{}, param {:?}", n.describe(i), p.key());
                small(p.key.len(), &at)?;
                small(p.fields().len(), &at)?;
                for t in p.fields() {
                    check_field(t, &at)?;
                }
            }
        }
        Ok(())
    }

    /// Streams the module to `w`; returns the bytes written. Everything is
    /// checked before the first byte is written. Metadata is gathered in a
    /// small buffer; large tensor data goes straight to `w`.
    pub fn write<W: Write>(&self, w: W, opts: &WriteOptions) -> Result<u64> {
        self.check_writable()?;
        let order: Vec<usize> = match opts.nodes {
            NodeOrder::AsGiven => (0..self.nodes.len()).collect(),
            NodeOrder::ProducersFirst => self.topological_order()?,
        };
        let mut pos = vec![0usize; self.nodes.len()];
        for (new, &old) in order.iter().enumerate() {
            pos[old] = new;
        }
        let map = |i: usize| pos.get(i).copied().unwrap_or(i);
        let mut out = Out {
            w,
            buf: Vec::with_capacity(SCRATCH * 2),
            total: 0,
        };
        write_header(&mut out, &self.header)?;
        for list in [&self.inputs, &self.outputs] {
            out.u32(list.len())?;
            for &i in list.iter() {
                out.u32(map(i))?;
            }
        }
        out.u32(self.nodes.len())?;
        for &old in &order {
            let Some(node) = self.nodes.get(old) else {
                continue;
            };
            write_node(&mut out, node, opts.params, &map)?;
        }
        out.flush_buf()?;
        out.w.flush()?;
        Ok(out.total)
    }

    /// The module as bytes (for small modules and tests; prefer
    /// [`Module::write`] or [`Module::save`] for large ones).
    pub fn to_bytes(&self, opts: &WriteOptions) -> Result<Vec<u8>> {
        let mut v = Vec::new();
        self.write(&mut v, opts)?;
        Ok(v)
    }

    /// Writes the module to `path` atomically (a temporary file beside it,
    /// renamed over `path` only when everything was written).
    pub fn save(&self, path: impl AsRef<Path>, opts: &WriteOptions) -> Result<()> {
        self.check_writable()?;
        tensor_core::io::write_atomic(path, |w| self.write(w, opts).map(|_| ()))
    }
}

/// A node of a [`ModuleBuilder`], to use as an input or output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NodeId(usize);

impl NodeId {
    /// The node's index in the module.
    pub fn index(self) -> usize {
        self.0
    }
}

/// Builds a module from scratch: inputs (`<param>` nodes, listed in the
/// module inputs), constants (`<const>` nodes), operators and outputs.
///
/// Nodes get indices in the order they are added; since an operator can
/// only use nodes that already exist, producers always come first.
/// [`ModuleBuilder::build`] checks what the C++ library checks on load.
#[derive(Debug, Clone, Default)]
pub struct ModuleBuilder<'a> {
    nodes: Vec<Node<'a>>,
    inputs: Vec<usize>,
    outputs: Vec<usize>,
}

fn reserved(op: &str, name: &str) -> Vec<Param<'static>> {
    vec![
        Param::new("#op", string_tensor(op)),
        Param::new("#name", string_tensor(name)),
    ]
}

impl<'a> ModuleBuilder<'a> {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    fn push(&mut self, op: &str, name: &str, params: Vec<Param<'a>>, inputs: Vec<usize>) -> NodeId {
        let id = self.nodes.len();
        self.nodes.push(Node {
            op: Cow::Owned(op.to_string()),
            name: Cow::Owned(name.to_string()),
            params,
            inputs,
            offset: None,
        });
        NodeId(id)
    }

    /// A module input: a `<param>` node, appended to the module inputs.
    pub fn input(&mut self, name: &str) -> NodeId {
        let id = self.push("<param>", name, reserved("<param>", name), Vec::new());
        self.inputs.push(id.0);
        id
    }

    /// A module input with the `#dtype` and `#shape` hints the converters
    /// write (`#dtype` as a 0-d INT32 DTYPE code and `#shape` as INT32 1-D,
    /// as the Python writer does).
    pub fn input_with(&mut self, name: &str, dtype: DType, shape: &[i32]) -> Result<NodeId> {
        let code = code_of_dtype(dtype).ok_or_else(|| {
            Error::Build(format!("input {name:?}: TenniS has no code for {dtype}"))
        })?;
        let mut params = reserved("<param>", name);
        params.push(Param::new(
            "#dtype",
            Tensor::from_values::<i32>([], &[code as i32])?,
        ));
        params.push(Param::new(
            "#shape",
            Tensor::from_values::<i32>([shape.len()], shape)?,
        ));
        let id = self.push("<param>", name, params, Vec::new());
        self.inputs.push(id.0);
        Ok(id)
    }

    /// A constant: a `<const>` node whose `value` is `tensor` (a TenniS
    /// dtype, row-major).
    pub fn constant(&mut self, name: &str, tensor: Tensor<'a>) -> Result<NodeId> {
        check_field(&tensor, &|| format!("constant {name:?}"))?;
        let mut params: Vec<Param<'a>> = reserved("<const>", name);
        params.push(Param::new("value", tensor));
        Ok(self.push("<const>", name, params, Vec::new()))
    }

    /// An operator node without parameters besides `#op` and `#name`.
    pub fn op(&mut self, op: &str, name: &str, inputs: &[NodeId]) -> Result<NodeId> {
        self.op_with(op, name, inputs, Vec::<(String, Packed<'a>)>::new())
    }

    /// An operator node with parameters (key, value), kept in the given
    /// order (written sorted by default). Keys must be unique and must not
    /// be `#op` or `#name`.
    pub fn op_with<K, V>(
        &mut self,
        op: &str,
        name: &str,
        inputs: &[NodeId],
        params: impl IntoIterator<Item = (K, V)>,
    ) -> Result<NodeId>
    where
        K: Into<String>,
        V: Into<Packed<'a>>,
    {
        for id in inputs {
            if id.0 >= self.nodes.len() {
                return Err(Error::Build(format!(
                    "node {name:?}: input {} is not a node of this builder",
                    id.0
                )));
            }
        }
        let mut all: Vec<Param<'a>> = reserved(op, name);
        for (k, v) in params {
            let p = Param::new(k, v);
            if all.iter().any(|q| q.key == p.key) {
                return Err(Error::Build(format!(
                    "node {name:?}: parameter {:?} given twice (or reserved)",
                    p.key()
                )));
            }
            for t in p.fields() {
                check_field(t, &|| format!("node {name:?}, param {:?}", p.key()))?;
            }
            all.push(p);
        }
        Ok(self.push(op, name, all, inputs.iter().map(|i| i.0).collect()))
    }

    /// Lists `id` as a module output (in the order of the calls).
    pub fn output(&mut self, id: NodeId) -> Result<()> {
        if id.0 >= self.nodes.len() {
            return Err(Error::Build(format!(
                "output {} is not a node of this builder",
                id.0
            )));
        }
        self.outputs.push(id.0);
        Ok(())
    }

    /// The module, checked as the C++ library checks on load: every
    /// operator reachable from the outputs has inputs, every reachable
    /// `<param>` is a module input, and everything can be written.
    pub fn build(self) -> Result<Module<'a>> {
        let m = Module {
            header: Header::default(),
            inputs: self.inputs,
            outputs: self.outputs,
            nodes: self.nodes,
            end: 0,
        };
        m.check_acyclic()?;
        m.check_loadable()?;
        m.check_writable()?;
        Ok(m)
    }
}

/// Streams a module of constants to `w`, one tensor at a time: the bytes
/// [`ModuleBuilder`] gives for the same tensors added with
/// [`ModuleBuilder::constant`] and each listed with
/// [`ModuleBuilder::output`] (in that order), written with the default
/// [`WriteOptions`] — without holding more than the tensor being written.
///
/// The number of constants is given first (the module's output list and
/// node count come before the nodes); [`ConstantsWriter::finish`] checks
/// that exactly that many were written.
///
/// ```
/// use bubble_module::{ConstantsWriter, Module, ModuleBuilder, WriteOptions};
/// use tensor_core::Tensor;
///
/// let w = Tensor::from_values([2], &[1f32, 2.])?;
/// let b = Tensor::from_values([], &[0.5f32])?;
/// let mut streamed = ConstantsWriter::new(Vec::new(), 2)?;
/// streamed.constant("w", &w)?;
/// streamed.constant("b", &b)?;
/// let bytes = streamed.finish()?;
///
/// let mut built = ModuleBuilder::new();
/// for (name, t) in [("w", &w), ("b", &b)] {
///     let id = built.constant(name, t.clone())?;
///     built.output(id)?;
/// }
/// assert_eq!(bytes, built.build()?.to_bytes(&WriteOptions::default())?);
/// assert_eq!(Module::parse(&bytes)?.named_tensors().len(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ConstantsWriter<W: Write> {
    out: Out<W>,
    count: usize,
    written: usize,
}

impl<W: Write> std::fmt::Debug for ConstantsWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConstantsWriter")
            .field("count", &self.count)
            .field("written", &self.written)
            .finish_non_exhaustive()
    }
}

impl<W: Write> ConstantsWriter<W> {
    /// Starts a module of `count` constants (all of them module outputs):
    /// writes the header, the output list and the node count.
    pub fn new(w: W, count: usize) -> Result<Self> {
        small(count, &|| "node count".into())?;
        let mut out = Out {
            w,
            buf: Vec::with_capacity(SCRATCH * 2),
            total: 0,
        };
        write_header(&mut out, &Header::default())?;
        out.u32(0)?;
        out.u32(count)?;
        for i in 0..count {
            out.u32(i)?;
        }
        out.u32(count)?;
        Ok(ConstantsWriter {
            out,
            count,
            written: 0,
        })
    }

    /// Writes the next constant: a `<const>` node named `name` whose
    /// `value` is `tensor` (a TenniS dtype, row-major).
    pub fn constant(&mut self, name: &str, tensor: &Tensor<'_>) -> Result<()> {
        if self.written == self.count {
            return Err(Error::Build(format!(
                "constant {name:?}: the module was started with {} constants",
                self.count
            )));
        }
        check_field(tensor, &|| format!("constant {name:?}"))?;
        let value = Tensor::with_order(
            tensor.dtype(),
            tensor.shape().clone(),
            tensor.order(),
            tensor.bytes(),
        )?;
        let mut params = reserved("<const>", name);
        params.push(Param::new("value", value));
        let node = Node {
            op: Cow::Borrowed("<const>"),
            name: Cow::Borrowed(name),
            params,
            inputs: Vec::new(),
            offset: None,
        };
        write_node(&mut self.out, &node, ParamOrder::Sorted, &|i| i)?;
        self.written += 1;
        Ok(())
    }

    /// Checks that every announced constant was written, flushes, and
    /// returns the inner writer.
    pub fn finish(mut self) -> Result<W> {
        if self.written != self.count {
            return Err(Error::Build(format!(
                "{} of the {} announced constants were written",
                self.written, self.count
            )));
        }
        self.out.flush_buf()?;
        self.out.w.flush()?;
        Ok(self.out.w)
    }
}
