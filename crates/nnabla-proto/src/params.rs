//! Parameters as `tensor-core` f32 tensors.

use std::borrow::Cow;

use tensor_core::{Bytes, DType, MemoryOrder, Tensor};

use crate::{Error, NNablaProtoBuf, Parameter, Result, Shape};

/// One NNabla parameter: its `variable_name`, its data as a row-major f32
/// tensor with the stored shape, and `need_grad`.
#[derive(Debug, Clone)]
pub struct ParamTensor<'a> {
    /// `Parameter.variable_name`, e.g. `fc1/affine/W`.
    pub name: String,
    /// The values: dtype f32, shape as stored (`[]` for a 0-d parameter).
    pub tensor: Tensor<'a>,
    /// `Parameter.need_grad`.
    pub need_grad: bool,
}

impl<'a> ParamTensor<'a> {
    /// A parameter.
    pub fn new(name: impl Into<String>, tensor: Tensor<'a>, need_grad: bool) -> Self {
        ParamTensor {
            name: name.into(),
            tensor,
            need_grad,
        }
    }

    /// An owned copy (copies mapped and borrowed bytes too).
    pub fn to_owned_param(&self) -> ParamTensor<'static> {
        ParamTensor {
            name: self.name.clone(),
            tensor: self.tensor.to_owned_tensor(),
            need_grad: self.need_grad,
        }
    }

    /// A copy that borrows nothing.
    pub fn into_static(self) -> ParamTensor<'static> {
        ParamTensor {
            name: self.name,
            tensor: self.tensor.into_static(),
            need_grad: self.need_grad,
        }
    }
}

/// The parameters of a decoded message as f32 tensors, in stored order.
///
/// On a little-endian host the tensors borrow the `Vec<f32>` of each
/// `Parameter` (no copy). Fails when a shape has a negative dimension or
/// does not match the number of values.
pub fn parameters(model: &NNablaProtoBuf) -> Result<Vec<ParamTensor<'_>>> {
    model.parameter.iter().map(parameter_tensor).collect()
}

/// One `Parameter` as a [`ParamTensor`] (borrowing its data on little-endian hosts).
pub fn parameter_tensor(p: &Parameter) -> Result<ParamTensor<'_>> {
    let name = p.variable_name.as_str();
    let dims = p.shape.as_ref().map(|s| s.dim.as_slice()).unwrap_or(&[]);
    let mut udims = Vec::with_capacity(dims.len());
    for &d in dims {
        udims.push(usize::try_from(d).map_err(|_| {
            Error::param(name, format!("negative dimension {d} in shape {dims:?}"))
        })?);
    }
    #[cfg(target_endian = "little")]
    let bytes: Bytes<'_> = Bytes::Borrowed(bytemuck::cast_slice::<f32, u8>(&p.data));
    #[cfg(not(target_endian = "little"))]
    let bytes: Bytes<'_> = Bytes::Owned(p.data.iter().flat_map(|v| v.to_le_bytes()).collect());
    let tensor = Tensor::with_order(DType::F32, udims, MemoryOrder::RowMajor, bytes)
        .map_err(|e| Error::param(name, e.to_string()))?;
    Ok(ParamTensor {
        name: name.to_string(),
        tensor,
        need_grad: p.need_grad,
    })
}

/// The little-endian f32 bytes of `tensor` in row-major order, converting
/// f16/bf16 exactly; other dtypes are refused (NNabla stores float32 only).
pub fn f32_bytes<'t>(name: &str, tensor: &'t Tensor<'_>) -> Result<Cow<'t, [u8]>> {
    let rm = tensor.to_row_major()?;
    match tensor.dtype() {
        DType::F32 => Ok(match tensor.order() {
            MemoryOrder::RowMajor => Cow::Borrowed(tensor.bytes()),
            MemoryOrder::ColumnMajor => Cow::Owned(rm.bytes().to_vec()),
        }),
        DType::F16 | DType::BF16 => {
            let vals: Vec<f32> = rm.to_vec()?;
            let mut out = Vec::with_capacity(vals.len() * 4);
            for v in vals {
                out.extend_from_slice(&v.to_le_bytes());
            }
            Ok(Cow::Owned(out))
        }
        other => Err(Error::param(
            name,
            format!("NNabla parameters are float32; this tensor is {other}"),
        )),
    }
}

/// `model` split around its `parameter` field: the fields stored before it
/// (`version`, `global_config`, `training_config`, `network`) and the
/// fields stored after it (`dataset`, `optimizer`, `monitor`, `executor`);
/// neither holds parameters.
///
/// Writing the first, then the parameters (e.g. with
/// [`crate::binary::write_parameters`] or [`crate::text::write_parameters`],
/// one tensor at a time), then the second gives the same bytes as writing
/// the whole model with its parameters, in the binary and in the text
/// format (both write fields in field-number order), without holding the
/// parameters' data in messages.
///
/// ```
/// use nnabla_proto::{binary, split_around_parameters, text};
/// use tensor_core::Tensor;
///
/// let model = text::parse("network { name: 'n' } parameter { variable_name: 'w' shape { dim: 1 } data: 2 } executor { name: 'e' }")?;
/// let (head, tail) = split_around_parameters(&model);
/// let w = Tensor::from_values([1], &[2f32])?;
/// let mut bytes = binary::encode(&head);
/// binary::write_parameters(&mut bytes, [("w", &w, false)])?;
/// bytes.extend(binary::encode(&tail));
/// assert_eq!(bytes, binary::encode(&model));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn split_around_parameters(model: &NNablaProtoBuf) -> (NNablaProtoBuf, NNablaProtoBuf) {
    let head = NNablaProtoBuf {
        version: model.version.clone(),
        global_config: model.global_config.clone(),
        training_config: model.training_config,
        network: model.network.clone(),
        ..NNablaProtoBuf::default()
    };
    let tail = NNablaProtoBuf {
        dataset: model.dataset.clone(),
        optimizer: model.optimizer.clone(),
        monitor: model.monitor.clone(),
        executor: model.executor.clone(),
        ..NNablaProtoBuf::default()
    };
    (head, tail)
}

/// True for the element types NNabla parameter messages hold: f32, and
/// f16/bf16 (converted to f32 on the way in, exactly).
pub fn can_hold(dtype: DType) -> bool {
    matches!(dtype, DType::F32 | DType::F16 | DType::BF16)
}

/// Checks names as nnabla's parameter scope checks them when it loads a
/// file: no name twice, and no name that is also a scope of another
/// (`b` and `b/Adam.m2` cannot both be parameters: nnabla refuses to load
/// such a file). Writers call this before writing anything.
pub fn check_parameter_names<'n>(names: impl IntoIterator<Item = &'n str>) -> Result<()> {
    let mut sorted: Vec<&str> = names.into_iter().collect();
    sorted.sort_unstable();
    if let Some(pair) = sorted.windows(2).find(|p| p[0] == p[1]) {
        return Err(Error::param(pair[0], "the name is given twice"));
    }
    let set: std::collections::HashSet<&str> = sorted.iter().copied().collect();
    for name in &sorted {
        let mut scope = *name;
        while let Some(i) = scope.rfind('/') {
            scope = &scope[..i];
            if set.contains(scope) {
                return Err(Error::param(
                    scope,
                    format!(
                        "it is also a scope of {name:?}: nnabla cannot load both as parameters"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A `Parameter` message holding a copy of `tensor` (f32, or f16/bf16 converted).
pub fn parameter_from_tensor(
    name: &str,
    tensor: &Tensor<'_>,
    need_grad: bool,
) -> Result<Parameter> {
    let bytes = f32_bytes(name, tensor)?;
    let data = bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    Ok(Parameter {
        variable_name: name.to_string(),
        shape: (!tensor.dims().is_empty()).then(|| Shape {
            dim: tensor.dims().iter().map(|&d| d as i64).collect(),
        }),
        data,
        need_grad,
    })
}
