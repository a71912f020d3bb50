//! The one writer interface and the one loop that feeds it.
//!
//! Every format's writer is a [`TensorSink`]: it is made from the
//! [`Feed`] (every tensor's name, dtype and dims as it will be written are
//! known before any tensor is read, for the formats whose header lists them
//! first: safetensors, cvm-params, npz, ONNX), then takes the tensors one
//! at a time, in order ([`TensorSink::put`]), then ends the file
//! ([`TensorSink::finish`]). The loop is [`Feed::drain`]: for a file being
//! written, in memory (a `Cursor<Vec<u8>>`), and for a file read by slices
//! alike, it hands each tensor over as an [`Incoming`] (got and converted
//! by the plan when the sink asks for it whole, or streamed a slice at a
//! time), reports progress once the sink has it, and holds one tensor at a
//! time. A plugin's writer, which pulls its tensors, gets them through the
//! same loop ([`Feed::each`]).

use std::io::Write;

use tensor_core::{DType, MemoryOrder, Tensor};

use crate::codec::{Item, TensorRef, WriteContext};
use crate::{InTensor, Result};

/// The tensors to write, in order, with what the writer needs besides.
pub(crate) struct Feed<'f> {
    /// The tensors, each with its name in the new file.
    pub items: &'f [Item<'f, 'f>],
    /// The plan, progress and metadata.
    pub cx: &'f WriteContext<'f>,
}

/// One format's writer, made for a [`Feed`] (its header written when the
/// format puts one first), fed by [`Feed::drain`].
pub(crate) trait TensorSink {
    /// Writes the next tensor.
    fn put(&mut self, t: &Incoming<'_>) -> Result<()>;

    /// Ends the file once every tensor is in.
    fn finish(self) -> Result<()>;
}

/// A tensor on its way into a [`TensorSink`].
pub(crate) struct Incoming<'f> {
    item: &'f Item<'f, 'f>,
    cx: &'f WriteContext<'f>,
}

impl<'f> Feed<'f> {
    /// The tensors as they will be written, before any is read.
    pub fn heads(&self) -> impl Iterator<Item = Incoming<'f>> + '_ {
        self.items.iter().map(|item| Incoming { item, cx: self.cx })
    }

    /// `__metadata__` for formats that store string metadata.
    pub fn metadata(&self) -> &[(String, String)] {
        &self.cx.metadata
    }

    /// How many tensors there are.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// The one loop: each tensor to `put` in turn, in `order` (positions
    /// in the feed) when given, progress reported once it is written.
    pub fn each(
        &self,
        order: Option<&[usize]>,
        mut put: impl FnMut(&Incoming<'_>) -> Result<()>,
    ) -> Result<()> {
        let mut one = |item: &'f Item<'f, 'f>| -> Result<()> {
            put(&Incoming { item, cx: self.cx })?;
            (self.cx.progress)(item.tensor.byte_len());
            Ok(())
        };
        match order {
            None => self.items.iter().try_for_each(&mut one),
            Some(order) => order
                .iter()
                .filter_map(|&i| self.items.get(i))
                .try_for_each(&mut one),
        }
    }

    /// Every tensor into `sink`, in order, then the end of the file.
    pub fn drain(&self, sink: impl TensorSink) -> Result<()> {
        self.drain_in(None, sink)
    }

    /// [`Feed::drain`] in `order` (positions in the feed).
    pub fn drain_in(&self, order: Option<&[usize]>, mut sink: impl TensorSink) -> Result<()> {
        self.each(order, |t| sink.put(t))?;
        sink.finish()
    }
}

impl<'f> Incoming<'f> {
    /// Its name in the new file.
    pub fn name(&self) -> &'f str {
        self.item.name
    }

    /// Its dtype as the plan leaves it.
    pub fn dtype(&self) -> DType {
        self.cx.plan.out_dtype(self.item.tensor.dtype())
    }

    /// Its dims.
    pub fn dims(&self) -> &'f [usize] {
        self.item.tensor.dims()
    }

    /// Its memory order as read (the plan may make it row-major).
    pub fn order(&self) -> MemoryOrder {
        self.item.tensor.order()
    }

    /// NNabla's `need_grad` for it.
    pub fn need_grad(&self) -> bool {
        self.item.need_grad
    }

    /// The tensor as read, or where to read it from.
    pub fn tensor(&self) -> &TensorRef<'f, 'f> {
        &self.item.tensor
    }

    /// The plan it goes through.
    pub fn plan(&self) -> &crate::convert::Plan {
        &self.cx.plan
    }

    /// Calls `f` with the tensor whole, got ([`TensorRef::get`]) and
    /// converted by the plan; both are dropped after.
    pub fn with_planned<R>(&self, f: impl FnOnce(&Tensor<'_>) -> Result<R>) -> Result<R> {
        let got = self.item.tensor.get()?;
        let t = self.cx.plan.apply(got.tensor()).in_tensor(self.name())?;
        f(&t)
    }

    /// Writes its bytes as the plan converts them to `w`, a slice at a
    /// time ([`TensorRef::write_planned`]; `row_major` for a writer that
    /// takes column-major tensors but stores them row-major).
    pub fn stream(&self, row_major: bool, w: &mut dyn Write) -> Result<()> {
        self.item
            .tensor
            .write_planned(self.name(), &self.cx.plan, row_major, w)
    }
}
