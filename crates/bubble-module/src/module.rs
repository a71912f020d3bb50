//! The in-memory module: header, input/output indices, nodes with their bubbles.

use std::borrow::Cow;
use std::sync::Arc;

use tensor_core::{DType, MappedFile, Tensor};

/// The header code every module file carries at offset 4.
pub const MODULE_CODE: u32 = 0x1991_0929;

/// The 128-byte file header.
///
/// Both readers ignore `fake` and `data`; both writers write zeros there.
/// They are kept so that a file can be written back byte for byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The first word, written as 0 and ignored.
    pub fake: u32,
    /// The module code, [`MODULE_CODE`].
    pub code: u32,
    /// 120 bytes, written as zeros and ignored.
    pub data: [u8; 120],
}

impl Default for Header {
    fn default() -> Self {
        Header {
            fake: 0,
            code: MODULE_CODE,
            data: [0; 120],
        }
    }
}

/// A packed tensor: the value of one parameter, with zero or more fields.
///
/// Field 0 is the main tensor; a plain value has exactly one field. Every
/// field is a row-major [`Tensor`] whose bytes are borrowed from the input
/// when read from a file.
#[derive(Debug, Clone, Default)]
pub struct Packed<'a> {
    fields: Vec<Tensor<'a>>,
}

impl<'a> Packed<'a> {
    /// A packed tensor of the given fields (zero or more).
    pub fn new(fields: Vec<Tensor<'a>>) -> Self {
        Packed { fields }
    }

    /// A string: one 1-D CHAR8 field holding the UTF-8 bytes of `s`.
    pub fn string(s: &str) -> Packed<'static> {
        Packed::from(string_tensor(s))
    }

    /// The fields.
    pub fn fields(&self) -> &[Tensor<'a>] {
        &self.fields
    }

    /// The main field (field 0), if there is one.
    pub fn main(&self) -> Option<&Tensor<'a>> {
        self.fields.first()
    }

    /// The number of fields.
    pub fn len(&self) -> usize {
        self.fields.len()
    }

    /// True when there are no fields (the C++ library reads that as an empty VOID tensor).
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// The string this value holds, when it is exactly one 1-D CHAR8 field
    /// (invalid UTF-8 is replaced by U+FFFD).
    pub fn as_str(&self) -> Option<Cow<'_, str>> {
        match self.fields.as_slice() {
            [t] => char8_str(t),
            _ => None,
        }
    }

    /// Consumes the value, giving its fields.
    pub fn into_fields(self) -> Vec<Tensor<'a>> {
        self.fields
    }

    pub(crate) fn map_fields(self, f: impl Fn(Tensor<'a>) -> Tensor<'static>) -> Packed<'static> {
        Packed {
            fields: self.fields.into_iter().map(f).collect(),
        }
    }
}

impl<'a> From<Tensor<'a>> for Packed<'a> {
    fn from(t: Tensor<'a>) -> Self {
        Packed { fields: vec![t] }
    }
}

impl<'a> From<Vec<Tensor<'a>>> for Packed<'a> {
    fn from(fields: Vec<Tensor<'a>>) -> Self {
        Packed { fields }
    }
}

impl From<&str> for Packed<'static> {
    fn from(s: &str) -> Self {
        Packed::string(s)
    }
}

/// A 1-D CHAR8 tensor holding the UTF-8 bytes of `s` (how TenniS stores strings).
pub fn string_tensor(s: &str) -> Tensor<'static> {
    let bytes = s.as_bytes().to_vec();
    let n = bytes.len();
    // Infallible (n one-byte elements in shape [n]); not reachable from file content.
    Tensor::new(DType::Char8, [n], bytes).expect("n char8 bytes fit shape [n]")
}

/// The string a CHAR8 tensor holds, if it is 1-D CHAR8 (invalid UTF-8 is
/// replaced by U+FFFD). Borrows when the bytes are valid UTF-8.
pub fn char8_str<'t>(t: &'t Tensor<'_>) -> Option<Cow<'t, str>> {
    (t.dtype() == DType::Char8 && t.shape().rank() == 1).then(|| String::from_utf8_lossy(t.bytes()))
}

/// One parameter of a node's bubble: a key and a packed value.
#[derive(Debug, Clone)]
pub struct Param<'a> {
    pub(crate) key: Cow<'a, [u8]>,
    pub(crate) value: Packed<'a>,
    pub(crate) offset: Option<usize>,
}

impl<'a> Param<'a> {
    /// A parameter with `key` and `value` (for building modules).
    pub fn new(key: impl Into<String>, value: impl Into<Packed<'a>>) -> Self {
        Param {
            key: Cow::Owned(key.into().into_bytes()),
            value: value.into(),
            offset: None,
        }
    }

    /// The key, as stored (TenniS keys are raw bytes; writers use UTF-8).
    pub fn key_bytes(&self) -> &[u8] {
        &self.key
    }

    /// The key as text (invalid UTF-8 replaced by U+FFFD).
    pub fn key(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.key)
    }

    /// True for the reserved keys, which start with `#`.
    pub fn is_reserved(&self) -> bool {
        self.key.first() == Some(&b'#')
    }

    /// The packed value.
    pub fn value(&self) -> &Packed<'a> {
        &self.value
    }

    /// The fields of the value (shorthand for `value().fields()`).
    pub fn fields(&self) -> &[Tensor<'a>] {
        self.value.fields()
    }

    /// The string value, when the value is one 1-D CHAR8 field.
    pub fn as_str(&self) -> Option<Cow<'_, str>> {
        self.value.as_str()
    }

    /// Byte offset of the parameter in the file it was read from.
    pub fn offset(&self) -> Option<usize> {
        self.offset
    }
}

/// What a node is, from its `#op`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeKind {
    /// `<param>`: a module input placeholder.
    Param,
    /// `<const>`: a constant whose tensor is parameter `value`.
    Const,
    /// `<var>`: declared, unused by the library.
    Var,
    /// Any other `#op`: an operator.
    Op,
}

/// One node of the graph: its bubble (`#op`, `#name` and other parameters in
/// file order) and the indices of its inputs.
#[derive(Debug, Clone)]
pub struct Node<'a> {
    pub(crate) op: Cow<'a, str>,
    pub(crate) name: Cow<'a, str>,
    pub(crate) params: Vec<Param<'a>>,
    pub(crate) inputs: Vec<usize>,
    pub(crate) offset: Option<usize>,
}

impl<'a> Node<'a> {
    /// The operator (`#op`): an operator name, or `<param>`, `<const>`, `<var>`.
    pub fn op(&self) -> &str {
        &self.op
    }

    /// The node name (`#name`); may be empty, and need not be unique.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What kind of node this is.
    pub fn kind(&self) -> NodeKind {
        match self.op() {
            "<param>" => NodeKind::Param,
            "<const>" => NodeKind::Const,
            "<var>" => NodeKind::Var,
            _ => NodeKind::Op,
        }
    }

    /// Every parameter, reserved ones included, in file order.
    pub fn params(&self) -> &[Param<'a>] {
        &self.params
    }

    /// The parameter `key` (the first one, as the C++ library keeps it, if a
    /// file repeats a key).
    pub fn param(&self, key: &str) -> Option<&Param<'a>> {
        self.params.iter().find(|p| &*p.key == key.as_bytes())
    }

    /// The indices of the input nodes, in order (an index may repeat).
    pub fn inputs(&self) -> &[usize] {
        &self.inputs
    }

    /// Byte offset of the node in the file it was read from.
    pub fn offset(&self) -> Option<usize> {
        self.offset
    }

    /// The main field of parameter `value` (the tensor of a `<const>`).
    pub fn value(&self) -> Option<&Tensor<'a>> {
        self.param("value").and_then(|p| p.value.main())
    }

    fn rebase(self, map: &Arc<MappedFile>) -> Node<'static> {
        self.map_tensors(|t| t.rebase(map))
    }

    fn into_static(self) -> Node<'static> {
        self.map_tensors(Tensor::into_static)
    }

    /// The node, its names owned, its parameters' tensors mapped by `f`.
    fn map_tensors(self, f: impl Fn(Tensor<'a>) -> Tensor<'static> + Copy) -> Node<'static> {
        Node {
            op: Cow::Owned(self.op.into_owned()),
            name: Cow::Owned(self.name.into_owned()),
            params: self
                .params
                .into_iter()
                .map(|p| Param {
                    key: Cow::Owned(p.key.into_owned()),
                    value: p.value.map_fields(f),
                    offset: p.offset,
                })
                .collect(),
            inputs: self.inputs,
            offset: self.offset,
        }
    }

    pub(crate) fn describe(&self, index: usize) -> String {
        format!("node {index} ({:?})", self.name())
    }

    /// Like `describe`, with the byte offset when the node came from a file.
    pub(crate) fn locate(&self, index: usize) -> String {
        match self.offset {
            Some(o) => format!("node {index} ({:?}) at offset {o}", self.name()),
            None => self.describe(index),
        }
    }
}

/// A TenniS module: header, module inputs and outputs (indices into the
/// node list) and the nodes.
///
/// Read one with [`Module::parse`] (borrowing tensor data from the bytes),
/// [`Module::from_map`] / [`Module::open`] (sharing a memory map), or build
/// one with [`crate::ModuleBuilder`].
#[derive(Debug, Clone)]
pub struct Module<'a> {
    pub(crate) header: Header,
    pub(crate) inputs: Vec<usize>,
    pub(crate) outputs: Vec<usize>,
    pub(crate) nodes: Vec<Node<'a>>,
    pub(crate) end: usize,
}

impl<'a> Module<'a> {
    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The module inputs (indices into [`Module::nodes`]), in the order given.
    pub fn inputs(&self) -> &[usize] {
        &self.inputs
    }

    /// The module outputs (indices into [`Module::nodes`]), in the order given.
    pub fn outputs(&self) -> &[usize] {
        &self.outputs
    }

    /// The nodes, in file order.
    pub fn nodes(&self) -> &[Node<'a>] {
        &self.nodes
    }

    /// The number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// True when the module has no nodes.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Where the graph ends in the input (bytes after it are ignored, as the
    /// real readers do); 0 for a module built in memory.
    pub fn end_offset(&self) -> usize {
        self.end
    }

    /// Every tensor of the non-reserved parameters, named as the
    /// `inspect --json` contract does: for each node in order, for each key
    /// not starting with `#` in order, for each field,
    /// `"<node #name>/<key>"`, with `"[i]"` appended when the value has
    /// more than one field.
    pub fn named_tensors(&self) -> Vec<(String, &Tensor<'a>)> {
        let mut out = Vec::new();
        for node in &self.nodes {
            for p in node.params.iter().filter(|p| !p.is_reserved()) {
                let fields = p.fields();
                for (i, t) in fields.iter().enumerate() {
                    let name = if fields.len() > 1 {
                        format!("{}/{}[{i}]", node.name(), p.key())
                    } else {
                        format!("{}/{}", node.name(), p.key())
                    };
                    out.push((name, t));
                }
            }
        }
        out
    }

    /// The same module with tensor data shared from `map` (the bytes this
    /// module was parsed from), keys and names copied: `'static`, zero-copy
    /// for tensor data.
    pub fn rebase(self, map: &Arc<MappedFile>) -> Module<'static> {
        Module {
            header: self.header,
            inputs: self.inputs,
            outputs: self.outputs,
            nodes: self.nodes.into_iter().map(|n| n.rebase(map)).collect(),
            end: self.end,
        }
    }

    /// A module that owns all its data (copies borrowed bytes).
    pub fn into_static(self) -> Module<'static> {
        Module {
            header: self.header,
            inputs: self.inputs,
            outputs: self.outputs,
            nodes: self.nodes.into_iter().map(Node::into_static).collect(),
            end: self.end,
        }
    }

    pub(crate) fn locate(&self, index: usize) -> String {
        match self.nodes.get(index) {
            Some(n) => n.locate(index),
            None => format!("node {index}"),
        }
    }
}
