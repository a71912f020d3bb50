//! Standalone NNabla `.protobuf` files (a whole `NNablaProtoBuf`: a model,
//! its parameters, or both) by random access: the walk of an `.nnp`'s
//! `.protobuf` members (`random_access/nnp.rs`) over the whole file. Every
//! field but the parameters is read and decoded (the networks, shown as the
//! graph); each parameter's name, shape and `need_grad` are read and its
//! packed float data located, not read. A file whose parameters are
//! unpacked or split into several runs is read whole (`None`).

use nnabla_proto::NNablaProtoBuf;

use super::FileIndex;
use super::ReadAt;
use super::nnp::{Message, protobuf_member};
use super::wire::Stop;
use crate::Result;

impl FileIndex {
    /// A standalone `.protobuf`; false (read it whole) for a layout the
    /// walk does not index.
    pub(crate) fn read_protobuf<R: ReadAt + ?Sized>(&mut self, r: &R) -> Result<bool> {
        let limits = self.limits;
        let msg = Message {
            name: "the file",
            data_start: 0,
            size: r.len(),
        };
        let mut entries = Vec::new();
        let mut rest = Vec::new();
        match protobuf_member(r, &msg, &limits, &mut entries, &mut rest) {
            Ok(()) => {}
            Err(Stop::Whole) => return Ok(false),
            Err(Stop::Err(e)) => return Err(e),
        }
        let mut model = NNablaProtoBuf::default();
        nnabla_proto::binary::merge(&mut model, &rest)?;
        self.push_entries(entries)?;
        self.graph = Some(crate::formats::nnabla::graph(&model, &limits)?);
        self.nnabla_model = model != NNablaProtoBuf::default();
        self.nnabla = Some(std::sync::Arc::new(model));
        Ok(true)
    }
}
