//! Fused batch normalization: `FusedBatchNormalization`.

use tensor_core::graph::{Attribute, Node};

use super::super::nnabla_table::TABLE;
use super::super::table::find;
use super::{Call, Exporter};
use crate::export::{Error, Result};

impl Exporter<'_> {
    /// Lowers `FusedBatchNormalization(axes, decay_rate, eps, batch_stat,
    /// nonlinearity)`: `BatchNormalization`'s lowering, the residual `z`
    /// added, then `Relu`.
    pub(crate) fn fused_batch_normalization(&mut self, n: &Node, c: &Call) -> Result<()> {
        let act = n
            .attribute("nonlinearity")
            .and_then(Attribute::as_str)
            .unwrap_or("relu");
        if act != "relu" {
            return Err(Error::Unsupported(format!(
                "FusedBatchNormalization function {:?}: nonlinearity {act:?} (relu is exported)",
                n.name
            )));
        }
        let bn_entry = find(TABLE.as_slice(), "BatchNormalization")
            .ok_or_else(|| Error::Invalid("no BatchNormalization entry".into()))?;
        let normed = self.cx.helper_name("fused_bn");
        let bn = Call {
            ins: c.ins.iter().take(5).copied().collect(),
            out: &normed,
            entry: bn_entry,
            op: "BatchNormalization",
            name: &n.name,
        };
        self.batch_normalization(n, &bn)?;
        let pre = match c.ins.get(5) {
            Some(z) => self.cx.op("Add", &[&normed, z], vec![]),
            None => normed.clone(),
        };
        self.cx.op_to("Relu", "", &[&pre], c.out, vec![]);
        Ok(())
    }
}
