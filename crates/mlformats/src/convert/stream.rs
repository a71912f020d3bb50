//! A tensor's bytes as the plan converts them, handed to a writer a slice
//! at a time ([`TensorRef::write_planned`]): the one way the safetensors,
//! npz and cvm-params writers get a tensor's data, whether it is held in
//! memory (a document read at open) or read from the file by slices (a
//! document opened at a `ReadAt`, [`super::convert_sliced`]).

use std::io::Write;

use tensor_core::{MemoryOrder, Tensor};

use super::Plan;
use crate::codec::TensorRef;
use crate::{Error, InTensor, Result};

/// Bytes of a tensor read (and converted) at a time.
pub(crate) const SLICE_BYTES: u64 = 4 << 20;

impl TensorRef<'_, '_> {
    /// Writes the tensor's bytes, as `plan` converts them, to `w` (`name`
    /// for errors): row-major when the plan or `row_major` asks (a writer
    /// that takes column-major tensors but stores them row-major,
    /// cvm-params), else in the tensor's own order.
    ///
    /// Memory: one slice of [`SLICE_BYTES`] of elements and its converted
    /// copy, whether the tensor is held (its slices borrowed) or read (each
    /// slice read from the file when its turn comes). A column-major tensor
    /// turned row-major is written a band at a time ([`TensorRef::bands`]),
    /// or read whole when reading it decodes it (a deflated member), where
    /// each band would decode it again.
    pub(crate) fn write_planned(
        &self,
        name: &str,
        plan: &Plan,
        row_major: bool,
        w: &mut dyn Write,
    ) -> Result<()> {
        if self.dtype().size() == 0 {
            // (elements of no bytes: nothing to write, however many)
            return Ok(());
        }
        let transposed = self.order() == MemoryOrder::ColumnMajor
            && self.dims().iter().filter(|&&d| d > 1).count() > 1
            && (plan.row_major || row_major);
        if transposed && self.is_decoded() {
            let got = self.get()?;
            let planned = plan.apply(got.tensor()).in_tensor(name)?;
            w.write_all(planned.to_row_major()?.bytes())?;
            return Ok(());
        }
        if transposed {
            return self.bands(name, plan, w);
        }
        let numel = self.numel(name)?;
        let step = (SLICE_BYTES / self.dtype().size().max(1) as u64).max(1);
        let mut buf = Vec::new();
        let mut at = 0;
        while at < numel {
            let part = self.elements(at, step, &mut buf)?;
            let planned = plan.apply(&part).in_tensor(name)?;
            tensor_core::io::write_prefaulted(w, planned.bytes())?;
            at += step;
        }
        Ok(())
    }

    /// Its number of elements.
    fn numel(&self, name: &str) -> Result<u64> {
        self.dims()
            .iter()
            .try_fold(1u64, |n, &d| n.checked_mul(d as u64))
            .ok_or_else(|| Error::TooLarge.in_tensor(name))
    }

    /// True when reading its bytes decodes them (never for a held tensor).
    fn is_decoded(&self) -> bool {
        match *self {
            TensorRef::Held(_) => false,
            TensorRef::Read { at, from, .. } => from.is_decoded(at),
        }
    }

    /// `count` elements (fewer at its end) from flat (stored-order) element
    /// `start`, as a one-dimensional tensor: borrowed from memory when
    /// held, else read into `buf`.
    fn elements<'b>(&'b self, start: u64, count: u64, buf: &'b mut Vec<u8>) -> Result<Tensor<'b>> {
        match *self {
            TensorRef::Held(t) => {
                let size = t.dtype().size() as u64;
                let end = start.saturating_add(count).min(t.numel() as u64);
                let start = start.min(end);
                let bytes = usize::try_from(start * size)
                    .ok()
                    .zip(usize::try_from(end * size).ok())
                    .and_then(|(a, b)| t.bytes().get(a..b))
                    .ok_or(Error::TooLarge)?;
                Ok(Tensor::new(t.dtype(), [(end - start) as usize], bytes)?)
            }
            TensorRef::Read { at, from, .. } => from.read_elements(at, start, count, buf),
        }
    }

    /// A column-major tensor written row-major a band at a time: a band is
    /// a range of indices `a..b` of its first axis (axes of 1 left out),
    /// every element with them, which is a contiguous range of the
    /// row-major output. Its elements are the run `a..b` of each
    /// column-major "column" (all indices but the first): read in
    /// contiguous ranges of at most [`SLICE_BYTES`] that cover as many runs
    /// as fit (one run at least), then transposed as a column-major tensor
    /// of dims `[b - a, ...]`. A band holds [`SLICE_BYTES`] of elements, or
    /// one index of the first axis (`numel / dims[0]` elements) when that
    /// is more. Memory: the range read, the band gathered, its transposed
    /// (and cast) copy: about three times `max(SLICE_BYTES, numel / dims[0]
    /// elements)`. The file is read about `dims[0] / (b - a)` times over
    /// when the runs are shorter than the first axis (each range also
    /// covers the gaps between runs, at most [`SLICE_BYTES`] at a time).
    fn bands(&self, name: &str, plan: &Plan, w: &mut dyn Write) -> Result<()> {
        let numel = self.numel(name)?;
        if numel == 0 {
            // an empty axis among the others: no element to write
            return Ok(());
        }
        let too_big = || Error::TooLarge.in_tensor(name);
        let dtype = self.dtype();
        let size = dtype.size().max(1);
        let dims: Vec<u64> = self
            .dims()
            .iter()
            .filter(|&&d| d > 1)
            .map(|&d| d as u64)
            .collect();
        let (d0, rest) = match dims.split_first() {
            Some((&d0, rest)) if !rest.is_empty() => (d0, rest),
            _ => return Err(Error::Internal("not a multi-axis tensor".into()).in_tensor(name)),
        };
        let columns = numel / d0;
        let slice = (SLICE_BYTES / size as u64).max(1);
        let rows = (slice / columns).clamp(1, d0);
        let mut buf = Vec::new();
        let mut a = 0u64;
        while a < d0 {
            let b = (a + rows).min(d0);
            let run = b - a;
            let band_len = usize::try_from(run * columns * size as u64).map_err(|_| too_big())?;
            let run_len = usize::try_from(run).map_err(|_| too_big())? * size;
            let stride = usize::try_from(d0).map_err(|_| too_big())? * size;
            let mut band: Vec<u8> = Vec::new();
            band.try_reserve_exact(band_len).map_err(|_| too_big())?;
            // columns k0..k1 per read: from a + d0 * k0 to b + d0 * (k1 - 1)
            let per_read = ((slice.saturating_sub(run)) / d0 + 1).min(columns);
            let mut k0 = 0u64;
            while k0 < columns {
                let k1 = (k0 + per_read).min(columns);
                let from = a + d0 * k0;
                let count = d0 * (k1 - 1 - k0) + run;
                let part = self.elements(from, count, &mut buf)?;
                let bytes = part.bytes();
                for j in 0..(k1 - k0) as usize {
                    let run_bytes = j
                        .checked_mul(stride)
                        .and_then(|at| bytes.get(at..at.checked_add(run_len)?))
                        .ok_or_else(too_big)?;
                    band.extend_from_slice(run_bytes);
                }
                k0 = k1;
            }
            let mut band_dims = vec![run as usize];
            band_dims.extend(rest.iter().map(|&d| d as usize));
            let gathered = Tensor::with_order(dtype, band_dims, MemoryOrder::ColumnMajor, band)
                .map_err(|e| Error::from(e).in_tensor(name))?;
            let planned = plan.apply(&gathered).in_tensor(name)?;
            // (the plan keeps the order when the target's writer transposes)
            w.write_all(planned.to_row_major()?.bytes())?;
            a = b;
        }
        Ok(())
    }
}
