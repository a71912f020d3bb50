//! Saving named tensors to any format.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::path::Path;

use tensor_core::Tensor;

use crate::codec::{Item, TensorRef, WriteContext, WriteSeek, codec};
use crate::convert::Plan;
use crate::{Error, Format, Result};

/// How [`save_with`] writes.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct SaveOptions {
    /// The format (default: from the file's extension).
    pub format: Option<Format>,
    /// NNabla `need_grad` per tensor name (default: true, nnabla's default
    /// for parameters).
    pub need_grad: HashMap<String, bool>,
    /// String metadata, for formats that store it (`.safetensors`'
    /// `__metadata__`).
    pub metadata: Vec<(String, String)>,
    /// Keep column-major tensors in Fortran order where the format can say
    /// so (npz) instead of writing row-major.
    pub keep_order: bool,
    /// Flush the file to the disk (file, then folder) so it survives a
    /// power loss once `save_with` returns. Off by default: the file is
    /// still replaced atomically, so a killed or crashed save leaves the
    /// previous file, but a power loss may lose the new one (see
    /// [`tensor_core::io`]).
    pub sync: bool,
}

impl SaveOptions {
    /// Options that take the format from the extension.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same options writing `format`.
    pub fn format(mut self, format: Format) -> Self {
        self.format = Some(format);
        self
    }

    /// The same options with NNabla `need_grad` of `name` set.
    pub fn need_grad(mut self, name: impl Into<String>, need_grad: bool) -> Self {
        self.need_grad.insert(name.into(), need_grad);
        self
    }

    /// The same options, flushing to the disk when `yes` (see
    /// [`SaveOptions::sync`](struct.SaveOptions.html#structfield.sync)).
    pub fn sync(mut self, yes: bool) -> Self {
        self.sync = yes;
        self
    }

    /// The same options with one more metadata entry.
    pub fn metadata(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.metadata.push((key.into(), value.into()));
        self
    }
}

/// Saves named tensors as a new file whose format the extension names
/// (`.safetensors`, `.npz`, `.params`, `.data`, `.nntxt`, `.protobuf`,
/// `.nnp`, `.h5`, `.tsm`), atomically.
///
/// `tensors` is anything that yields `(name, tensor)`: a document's
/// [`tensors`](crate::Document::tensors), a [`TensorMap`](tensor_core::TensorMap)'s
/// `iter()`, a `Vec<(String, Tensor)>`, a `HashMap`.
pub fn save<'a, I, N, T>(path: impl AsRef<Path>, tensors: I) -> Result<()>
where
    I: IntoIterator<Item = (N, T)>,
    N: AsRef<str>,
    T: Borrow<Tensor<'a>>,
{
    save_with(path, tensors, &SaveOptions::default())
}

/// [`save`] with options: an explicit format, NNabla `need_grad`, metadata.
pub fn save_with<'a, I, N, T>(path: impl AsRef<Path>, tensors: I, opts: &SaveOptions) -> Result<()>
where
    I: IntoIterator<Item = (N, T)>,
    N: AsRef<str>,
    T: Borrow<Tensor<'a>>,
{
    let path = path.as_ref();
    let format = match opts.format {
        Some(f) => f,
        None => Format::from_extension(path).ok_or_else(|| Error::UnknownExtension {
            name: path.display().to_string(),
        })?,
    };
    let wo = tensor_core::io::WriteOptions::new().sync(opts.sync);
    tensor_core::io::write_atomic_with(path, &wo, |w| write_items(w, format, tensors, opts))
}

/// [`save_with`] writing to `out` (standard output, a pipe: any writer; it
/// need not seek) instead of a file, as `format`: the bytes a file of that
/// format would get. Every format works, also those whose writer seeks
/// (`.nnp`, `.h5`, `.npz`): the file is made in an unnamed temporary file
/// first and then copied to `out`
/// ([`tensor_core::io::write_spooled`]). When saving fails, nothing is
/// written to `out`. `opts.format` is not used.
///
/// ```
/// # fn main() -> mlformats::Result<()> {
/// use mlformats::{Format, SaveOptions, Tensor};
/// let t = Tensor::from_values([2], &[1.0f32, 2.0])?;
/// let mut out = Vec::new(); // or std::io::stdout().lock()
/// mlformats::save_to_writer(&mut out, Format::Safetensors, [("w", &t)], &SaveOptions::new())?;
/// assert_eq!(mlformats::Document::from_bytes(out, None, None)?.len(), 1);
/// # Ok(()) }
/// ```
pub fn save_to_writer<'a, W, I, N, T>(
    out: &mut W,
    format: Format,
    tensors: I,
    opts: &SaveOptions,
) -> Result<()>
where
    W: std::io::Write + ?Sized,
    I: IntoIterator<Item = (N, T)>,
    N: AsRef<str>,
    T: Borrow<Tensor<'a>>,
{
    tensor_core::io::write_spooled(out, |w| write_items(w, format, tensors, opts))
}

/// Writes `tensors` to `w` as `format`.
fn write_items<'a, I, N, T>(
    w: &mut dyn WriteSeek,
    format: Format,
    tensors: I,
    opts: &SaveOptions,
) -> Result<()>
where
    I: IntoIterator<Item = (N, T)>,
    N: AsRef<str>,
    T: Borrow<Tensor<'a>>,
{
    let list: Vec<(N, T)> = tensors.into_iter().collect();
    let mut seen = std::collections::HashSet::new();
    for (n, _) in &list {
        if !seen.insert(n.as_ref()) {
            return Err(Error::DuplicateName {
                name: n.as_ref().to_string(),
                format: None,
            });
        }
    }
    let items: Vec<Item<'_, '_>> = list
        .iter()
        .map(|(n, t)| Item {
            name: n.as_ref(),
            tensor: TensorRef::Held(t.borrow()),
            need_grad: opts.need_grad.get(n.as_ref()).copied().unwrap_or(true),
        })
        .collect();
    let c = codec(format)?;
    let cx = WriteContext {
        plan: Plan::for_target(format, None, opts.keep_order)?,
        progress: &|_| {},
        metadata: opts.metadata.clone(),
    };
    c.write_to(format, w, &items, &cx)
}
