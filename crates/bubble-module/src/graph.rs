//! The graph API: nodes by index or name, typed reserved keys, consumers,
//! topological order, reachability, and constants as named tensors.

use tensor_core::{DType, Tensor, TensorMap};

use crate::dtype::dtype_from_code;
use crate::error::{Error, Result};
use crate::module::{Module, Node, NodeKind};

/// A `<const>` node's tensor, with the node's index and name.
#[derive(Debug, Clone, Copy)]
pub struct Constant<'m, 'a> {
    /// Index of the node.
    pub index: usize,
    /// The node's `#name`.
    pub name: &'m str,
    /// The main field of its `value` parameter.
    pub tensor: &'m Tensor<'a>,
}

impl<'a> Module<'a> {
    /// The node at `index`.
    pub fn node(&self, index: usize) -> Option<&Node<'a>> {
        self.nodes.get(index)
    }

    /// The index of the first node named `name` (names need not be unique).
    pub fn node_by_name(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name() == name)
    }

    /// The indices of every node named `name`, in order.
    pub fn nodes_named<'s>(&'s self, name: &'s str) -> impl Iterator<Item = usize> + 's {
        self.nodes
            .iter()
            .enumerate()
            .filter(move |(_, n)| n.name() == name)
            .map(|(i, _)| i)
    }

    /// The nodes that use node `index` as an input, in index order, each
    /// once (even when it uses the node twice, as `mul(s, s)` does).
    pub fn consumers(&self, index: usize) -> Vec<usize> {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.inputs.contains(&index))
            .map(|(i, _)| i)
            .collect()
    }

    /// The consumers of every node at once: `table[i]` is
    /// [`Module::consumers`]`(i)`, computed in one pass.
    pub fn consumer_table(&self) -> Vec<Vec<usize>> {
        let mut table = vec![Vec::new(); self.nodes.len()];
        for (i, n) in self.nodes.iter().enumerate() {
            for &u in &n.inputs {
                if let Some(list) = table.get_mut(u)
                    && list.last() != Some(&i)
                {
                    list.push(i);
                }
            }
        }
        table
    }

    /// Every node index in an order where each producer comes before all
    /// of its consumers: a depth-first post-order with roots in index order,
    /// so an order that already has this property is returned unchanged.
    /// Fails with [`Error::Cycle`] on a cycle (a parsed or built module has none).
    pub fn topological_order(&self) -> Result<Vec<usize>> {
        self.dfs_order()
    }

    /// The indices of the nodes reachable from the outputs (walking inputs
    /// backwards), ascending. The Python writer writes only these.
    pub fn reachable_from_outputs(&self) -> Vec<usize> {
        self.reachable_mask()
            .iter()
            .enumerate()
            .filter(|(_, r)| **r)
            .map(|(i, _)| i)
            .collect()
    }

    /// True when node `index` is not reachable from any output.
    pub fn is_unused(&self, index: usize) -> bool {
        !self.reachable_mask().get(index).copied().unwrap_or(false)
    }

    /// Every `<const>` node with a `value`, in node order.
    pub fn constants(&self) -> Vec<Constant<'_, 'a>> {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.kind() == NodeKind::Const)
            .filter_map(|(index, n)| {
                n.value().map(|tensor| Constant {
                    index,
                    name: n.name(),
                    tensor,
                })
            })
            .collect()
    }

    /// The constants as a [`TensorMap`] keyed by node name (sharing the
    /// bytes; a repeated name keeps its first position and its last tensor).
    pub fn constant_map(&self) -> TensorMap<'a> {
        self.constants()
            .into_iter()
            .map(|c| (c.name.to_string(), c.tensor.clone()))
            .collect()
    }
}

impl Node<'_> {
    /// The `#shape` hint of a `<param>` node, cast to `i32` as the C++
    /// library does (any integer or float dtype). `Ok(None)` when absent.
    pub fn shape_hint(&self) -> Result<Option<Vec<i32>>> {
        let Some(p) = self.param("#shape") else {
            return Ok(None);
        };
        let bad = |what: &str| Error::BadNode {
            at: format!("node {:?}", self.name()),
            offset: self.offset.unwrap_or(0),
            what: format!("#shape {what}"),
        };
        let t = p.value().main().ok_or_else(|| bad("has no field"))?;
        if t.shape().rank() > 1 {
            return Err(bad("is not 1-D"));
        }
        let v = t.to_f64_vec().ok_or_else(|| bad("is not numeric"))?;
        Ok(Some(v.into_iter().map(|x| x as i32).collect()))
    }

    /// The `#dtype` hint of a `<param>` node (an INT32 holding a DTYPE
    /// code; Python writes it 0-d, C++ with shape `[1]`). `Ok(None)` when absent.
    pub fn dtype_hint(&self) -> Result<Option<DType>> {
        let Some(p) = self.param("#dtype") else {
            return Ok(None);
        };
        let bad = |what: String| Error::BadNode {
            at: format!("node {:?}", self.name()),
            offset: self.offset.unwrap_or(0),
            what,
        };
        let v = p
            .value()
            .main()
            .filter(|t| t.numel() == 1)
            .and_then(|t| t.to_f64_vec())
            .and_then(|v| v.first().copied())
            .ok_or_else(|| bad("#dtype is not one integer".into()))?;
        let code = u8::try_from(v as i64).ok().filter(|_| v.fract() == 0.0);
        code.and_then(dtype_from_code)
            .map(Some)
            .ok_or_else(|| bad(format!("#dtype {v} is not a known DTYPE code")))
    }

    /// The legacy `#output_count` (1 in any module that reads), if present.
    pub fn output_count(&self) -> Option<i64> {
        let t = self.param("#output_count")?.value().main()?;
        let v = t.to_f64_vec()?;
        (v.len() == 1).then(|| v[0] as i64)
    }
}
