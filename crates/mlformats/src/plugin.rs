//! Formats added from outside the crate: the [`FormatPlugin`] trait and
//! [`register_format`].
//!
//! A crate that knows a format `mlformats` does not implements
//! [`FormatPlugin`] on a unit struct (its names, extensions, magic bytes,
//! the dtypes it holds, a reader and a writer) and registers it once:
//!
//! ```
//! use mlformats::{DType, FormatPlugin, PluginRead, Tensor, TensorsToWrite};
//!
//! /// One tensor of bytes after a four-byte magic.
//! struct Blob;
//!
//! impl FormatPlugin for Blob {
//!     fn name(&self) -> &'static str { "blob" }
//!     fn extensions(&self) -> &'static [&'static str] { &["blob"] }
//!     fn detect(&self, head: &[u8]) -> bool { head.starts_with(b"BLOB") }
//!     fn dtypes(&self) -> &'static [DType] { &[DType::U8] }
//!     fn read<'a>(&self, bytes: &'a [u8], _: &mlformats::tensor_core::Limits)
//!         -> mlformats::Result<PluginRead<'a>> {
//!         let data = bytes.get(4..).ok_or_else(|| mlformats::Error::plugin("blob", "too short"))?;
//!         let t = Tensor::new(DType::U8, vec![data.len()], data)?;
//!         Ok(PluginRead::new().tensor("data", t))
//!     }
//!     fn write(&self, tensors: &mut TensorsToWrite<'_, '_>, out: &mut dyn std::io::Write)
//!         -> mlformats::Result<()> {
//!         out.write_all(b"BLOB")?;
//!         tensors.for_each(|_, t| Ok(out.write_all(t.bytes())?))
//!     }
//! }
//!
//! let blob = mlformats::register_format(&Blob)?;
//! assert_eq!(mlformats::Format::from_name("blob"), Some(blob));
//! assert_eq!(mlformats::detect(&b"BLOB\x01\x02"[..]), Some(blob));
//! let doc = mlformats::Document::from_bytes(b"BLOB\x01\x02".to_vec(), None, None)?;
//! assert_eq!(doc.tensor("data").unwrap().bytes(), [1, 2]);
//! # Ok::<(), mlformats::Error>(())
//! ```
//!
//! From then on the format is a [`Format`] like the others
//! ([`Format::External`]): [`Format::from_name`], [`Format::from_extension`],
//! [`detect`](crate::detect), [`Format::all`] and [`Format::names`] know
//! it, [`open`](crate::open) reads its files through
//! [`FormatPlugin::read`], and [`save`](crate::save) and
//! [`convert`](crate::convert()) write it through [`FormatPlugin::write`]
//! (after the usual selection, renaming and casts). Its files hold
//! parameters only: graph features (ONNX export, whole-model conversion)
//! refuse them as they refuse any parameter file.

use std::sync::RwLock;

use serde_json::{Map, Value};
use tensor_core::{DType, Limits, Tensor};

use crate::codec::{Codec, Contents, Item, ReadOptions, Source, StoredTensor, WriteContext};
use crate::codec::{TensorRef, WriteSeek};
use crate::convert::Plan;
use crate::random_access::{FileIndex, ReadAt};
use crate::sink::Feed;
use crate::{Error, Format, InTensor, Result};

/// A file format implemented outside `mlformats`, registered with
/// [`register_format`].
///
/// Names, aliases and extensions are lower case; none may be a name,
/// alias or extension of a format already known (registration refuses
/// it). Files of the format hold named tensors and string-keyed metadata,
/// no graph.
pub trait FormatPlugin: Send + Sync + 'static {
    /// The format's one name (what [`Format::name`] and `inspect` say).
    fn name(&self) -> &'static str;

    /// Other names [`Format::from_name`] takes for it (none by default).
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }

    /// Its file extensions, without the dot, lower case; the first is the
    /// one written. At least one.
    fn extensions(&self) -> &'static [&'static str];

    /// Whether a file starting with `head` (its first bytes, up to 4 KiB,
    /// fewer when the file is shorter) is of this format: its magic bytes.
    fn detect(&self, head: &[u8]) -> bool;

    /// Whether a file whose extension names the format is of it even when
    /// [`FormatPlugin::detect`] says no (formats without magic bytes).
    /// False by default: the extension alone detects nothing.
    fn extension_decides(&self) -> bool {
        false
    }

    /// The dtypes its files hold: conversions refuse tensors of others
    /// ([`Error::CannotHoldTensors`]) before anything is written.
    fn dtypes(&self) -> &'static [DType];

    /// Reads a whole file. Tensors may borrow `bytes` (they then share the
    /// memory map without a copy). `limits` bound what a hostile file may
    /// make the reader allocate. Errors are best given as
    /// [`Error::plugin`].
    fn read<'a>(&self, bytes: &'a [u8], limits: &Limits) -> Result<PluginRead<'a>>;

    /// Writes `tensors`, in their order, to `out` (a file being written
    /// atomically, or memory): tensors come one at a time
    /// ([`TensorsToWrite::for_each`]), already selected, renamed, cast and
    /// row-major, in [`FormatPlugin::dtypes`].
    fn write(
        &self,
        tensors: &mut TensorsToWrite<'_, '_>,
        out: &mut dyn std::io::Write,
    ) -> Result<()>;
}

/// What [`FormatPlugin::read`] makes of a file: named tensors in stored
/// order, and metadata.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct PluginRead<'a> {
    /// The tensors, in the order the file stores them (a repeated name
    /// gets `#2`, `#3`, ... appended, as for every format).
    pub tensors: Vec<(String, Tensor<'a>)>,
    /// File-level metadata ([`crate::Document::metadata`]).
    pub metadata: Map<String, Value>,
}

impl<'a> PluginRead<'a> {
    /// Nothing read yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same with one more tensor.
    pub fn tensor(mut self, name: impl Into<String>, t: Tensor<'a>) -> Self {
        self.tensors.push((name.into(), t));
        self
    }

    /// The same with one more metadata entry.
    pub fn meta(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.metadata.insert(key.into(), value.into());
        self
    }
}

/// The tensors a [`FormatPlugin::write`] writes, in order, each given as
/// the target gets it (selected, renamed, cast, row-major).
pub struct TensorsToWrite<'s, 'a> {
    feed: &'s Feed<'a>,
}

impl TensorsToWrite<'_, '_> {
    /// How many tensors there are.
    pub fn len(&self) -> usize {
        self.feed.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.feed.len() == 0
    }

    /// Each tensor's name, dtype and dims as it will be written, known
    /// before any tensor is read (for formats whose header comes first).
    pub fn headers(&self) -> impl Iterator<Item = (&str, DType, &[usize])> {
        self.feed.heads().map(|t| (t.name(), t.dtype(), t.dims()))
    }

    /// String metadata to store, for formats that store some
    /// ([`crate::SaveOptions::metadata`]).
    pub fn metadata(&self) -> &[(String, String)] {
        self.feed.metadata()
    }

    /// Calls `f` with each tensor's name and tensor, in order, one at a
    /// time: each is read (when it comes from a file) and converted just
    /// before, and dropped just after; the first error stops.
    pub fn for_each(&mut self, mut f: impl FnMut(&str, &Tensor<'_>) -> Result<()>) -> Result<()> {
        self.feed.each(None, |t| {
            t.with_planned(|p| f(t.name(), p).in_tensor(t.name()))
        })
    }
}

/// A registered format: a handle [`Format::External`] holds, copied freely.
#[derive(Clone, Copy)]
pub struct ExternalFormat {
    entry: &'static Entry,
}

impl ExternalFormat {
    /// The plugin that implements it.
    pub fn plugin(self) -> &'static dyn FormatPlugin {
        self.entry.plugin
    }
}

impl PartialEq for ExternalFormat {
    fn eq(&self, other: &Self) -> bool {
        self.entry.id == other.entry.id
    }
}

impl Eq for ExternalFormat {}

impl std::hash::Hash for ExternalFormat {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.entry.id.hash(state);
    }
}

impl std::fmt::Debug for ExternalFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ExternalFormat")
            .field(&self.entry.plugin.name())
            .finish()
    }
}

/// One registered plugin (leaked once: registrations last the process).
struct Entry {
    /// Its place in the registry.
    id: usize,
    plugin: &'static dyn FormatPlugin,
}

/// Every registered format, in registration order.
static REGISTRY: RwLock<Vec<ExternalFormat>> = RwLock::new(Vec::new());

/// The registered formats, in registration order (a copy: the registry is
/// not locked while the caller uses them).
pub(crate) fn registered() -> Vec<Format> {
    let list = REGISTRY.read().unwrap_or_else(|e| e.into_inner());
    list.iter().copied().map(Format::External).collect()
}

/// The registered formats' handles, copied.
fn handles() -> Vec<ExternalFormat> {
    REGISTRY.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The registered format whose magic bytes start `head`, if any (the
/// plugins are asked with the registry unlocked: one may register another).
pub(crate) fn detect_registered(head: &[u8]) -> Option<Format> {
    handles()
        .into_iter()
        .find(|e| e.plugin().detect(head))
        .map(Format::External)
}

/// Adds a format to every list of this process ([`Format::all`],
/// [`Format::from_name`], [`detect`](crate::detect), ...) and gives its
/// [`Format`]. Registering the same plugin (the same name) again gives the
/// format it already has.
///
/// [`Error::FormatNameTaken`] when its name, an alias or an extension is
/// already a name of another format, or when it has no extension.
pub fn register_format(plugin: &'static dyn FormatPlugin) -> Result<Format> {
    let mut list = REGISTRY.write().unwrap_or_else(|e| e.into_inner());
    if let Some(e) = list.iter().find(|e| e.plugin().name() == plugin.name()) {
        return Ok(Format::External(*e));
    }
    if plugin.extensions().is_empty() {
        return Err(Error::FormatNameTaken {
            name: plugin.name().to_string(),
            by: None,
        });
    }
    let names = std::iter::once(plugin.name())
        .chain(plugin.aliases().iter().copied())
        .chain(plugin.extensions().iter().copied());
    let taken_by = |n: &str| {
        let builtin = Format::ALL.iter().copied();
        let registered = list.iter().copied().map(Format::External);
        builtin
            .chain(registered)
            .find(|f| f.name() == n || f.aliases().any(|a| a == n))
    };
    for n in names {
        let taken = taken_by(n);
        if taken.is_some() || n.is_empty() || n != n.to_ascii_lowercase() {
            return Err(Error::FormatNameTaken {
                name: n.to_string(),
                by: taken,
            });
        }
    }
    let entry: &'static Entry = Box::leak(Box::new(Entry {
        id: list.len(),
        plugin,
    }));
    let handle = ExternalFormat { entry };
    list.push(handle);
    Ok(Format::External(handle))
}

impl Entry {
    /// What the plugin's reader makes of the file `src`.
    fn contents(&self, src: &Source, opts: &ReadOptions) -> Result<Contents> {
        let read = self.plugin.read(src.bytes(), &opts.limits)?;
        let mut c = Contents::default();
        for (name, t) in read.tensors {
            let t = t.rebase(&src.map);
            c.push(StoredTensor::new(name, &t), t);
        }
        c.metadata = read.metadata;
        Ok(c)
    }
}

impl Codec for Entry {
    /// The plugin reads a file whole: the file is read into memory (or
    /// parsed where it is, a memory map) and its tensors held.
    fn index(&self, format: Format, index: &mut FileIndex, r: &dyn ReadAt) -> Result<()> {
        let src = index.whole(r, format)?;
        let c = self.contents(&src, &index.read_options())?;
        index.push_contents(c)?;
        Ok(())
    }

    fn write(&self, _: Format, w: &mut dyn WriteSeek, feed: &Feed<'_>) -> Result<()> {
        self.plugin.write(&mut TensorsToWrite { feed }, w)
    }

    fn reencode(&self, src: &Source, w: &mut dyn WriteSeek) -> Result<()> {
        let c = self.contents(src, &ReadOptions::default())?;
        let items: Vec<Item<'_, '_>> = c
            .stored
            .iter()
            .filter_map(|s| {
                let t = c.tensors.get(&s.name)?;
                Some(Item {
                    name: &s.name,
                    tensor: TensorRef::Held(t),
                    need_grad: true,
                })
            })
            .collect();
        let cx = WriteContext::quiet(Plan::unchanged());
        self.write_to(src.format, w, &items, &cx)
    }

    fn refuses(&self, _: Format, dtype: DType, _dims: &[usize]) -> Option<String> {
        (!self.plugin.dtypes().contains(&dtype))
            .then(|| format!("{} has no {dtype} type", self.plugin.name()))
    }
}

/// The codec of a registered format.
pub(crate) fn codec_of(e: ExternalFormat) -> &'static dyn Codec {
    e.entry
}
