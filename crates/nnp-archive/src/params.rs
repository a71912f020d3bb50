//! Named parameters with `need_grad`, merged the way nnabla merges them.

use std::collections::HashMap;

use tensor_core::{DType, TensorMap};

/// One NNabla parameter: a name (`fc1/affine/W`), its values and whether
/// training updates it. The same type as [`nnabla_proto::ParamTensor`]: a
/// parameter read from an `.h5`, a `.protobuf` or an `.nnp` is one type.
pub use nnabla_proto::ParamTensor as Parameter;

/// A parameter declared without its data, for the streaming writers
/// ([`crate::NnpStreamWriter`], [`crate::h5::StreamWriter`]): its name, element
/// type, logical shape and `need_grad`.
///
/// ```
/// use nnp_archive::{ParamSpec, Parameter};
/// use tensor_core::{DType, Tensor};
///
/// let s = ParamSpec::new("fc/W", DType::F32, [2, 3], true);
/// let p = Parameter::new("fc/W", Tensor::from_values([2, 3], &[0f32; 6])?, true);
/// assert_eq!(ParamSpec::of(&p), s);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParamSpec {
    /// The parameter name (`fc1/affine/W`).
    pub name: String,
    /// The element type.
    pub dtype: DType,
    /// The logical shape (`[]` for a scalar).
    pub dims: Vec<usize>,
    /// Whether training updates it.
    pub need_grad: bool,
}

/// Refuses `tensor` given to a streaming writer for the parameter `name`
/// declared as `dtype` of `dims` unless it is of that type and shape.
pub(crate) fn check_declared(
    name: &str,
    dtype: DType,
    dims: &[usize],
    tensor: &tensor_core::Tensor<'_>,
) -> crate::Result<()> {
    if tensor.dtype() == dtype && tensor.dims() == dims {
        return Ok(());
    }
    Err(crate::Error::Stream {
        name: name.to_string(),
        reason: format!(
            "declared {dtype} {dims:?}, given {} {:?}",
            tensor.dtype(),
            tensor.dims()
        ),
    })
}

impl ParamSpec {
    /// A parameter spec.
    pub fn new(
        name: impl Into<String>,
        dtype: DType,
        dims: impl Into<Vec<usize>>,
        need_grad: bool,
    ) -> Self {
        ParamSpec {
            name: name.into(),
            dtype,
            dims: dims.into(),
            need_grad,
        }
    }

    /// The spec of an existing parameter (name, dtype, dims, `need_grad`).
    pub fn of(p: &Parameter<'_>) -> Self {
        ParamSpec::new(
            p.name.clone(),
            p.tensor.dtype(),
            p.tensor.dims(),
            p.need_grad,
        )
    }
}

impl From<&Parameter<'_>> for ParamSpec {
    fn from(p: &Parameter<'_>) -> Self {
        ParamSpec::of(p)
    }
}

/// Parameters in load order, merged as nnabla's Python loader does: a name
/// registered again keeps its first position and takes the new values and
/// `need_grad` (last file wins).
#[derive(Debug, Clone, Default)]
pub struct ParameterSet<'a> {
    items: Vec<Parameter<'a>>,
    index: HashMap<String, usize>,
}

impl<'a> ParameterSet<'a> {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `p`; returns the parameter it replaced, if its name was present.
    pub fn insert(&mut self, p: Parameter<'a>) -> Option<Parameter<'a>> {
        if let Some(&i) = self.index.get(&p.name) {
            return Some(std::mem::replace(&mut self.items[i], p));
        }
        self.index.insert(p.name.clone(), self.items.len());
        self.items.push(p);
        None
    }

    /// The parameter named `name`.
    pub fn get(&self, name: &str) -> Option<&Parameter<'a>> {
        self.index.get(name).map(|&i| &self.items[i])
    }

    /// The parameter named `name`, mutably (to change values or `need_grad`).
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Parameter<'a>> {
        self.index.get(name).map(|&i| &mut self.items[i])
    }

    /// Number of parameters.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The parameters in order.
    pub fn iter(&self) -> std::slice::Iter<'_, Parameter<'a>> {
        self.items.iter()
    }

    /// The values by name, in order (drops `need_grad`).
    pub fn to_tensor_map(&self) -> TensorMap<'a> {
        self.items
            .iter()
            .map(|p| (p.name.clone(), p.tensor.clone()))
            .collect()
    }

    /// A set that no longer borrows the input.
    pub fn into_static(self) -> ParameterSet<'static> {
        self.into_iter().map(Parameter::into_static).collect()
    }
}

impl<'a> IntoIterator for ParameterSet<'a> {
    type Item = Parameter<'a>;
    type IntoIter = std::vec::IntoIter<Parameter<'a>>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

impl<'s, 'a> IntoIterator for &'s ParameterSet<'a> {
    type Item = &'s Parameter<'a>;
    type IntoIter = std::slice::Iter<'s, Parameter<'a>>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl<'a> FromIterator<Parameter<'a>> for ParameterSet<'a> {
    fn from_iter<I: IntoIterator<Item = Parameter<'a>>>(iter: I) -> Self {
        let mut s = ParameterSet::new();
        for p in iter {
            s.insert(p);
        }
        s
    }
}

impl<'a> Extend<Parameter<'a>> for ParameterSet<'a> {
    fn extend<I: IntoIterator<Item = Parameter<'a>>>(&mut self, iter: I) {
        for p in iter {
            self.insert(p);
        }
    }
}
