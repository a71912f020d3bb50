//! The steps every conversion of a file's tensors takes (the one driver,
//! `run.rs`, for a [`crate::Document`] and for [`super::convert_sliced`]):
//! the selection (`--only`/`--exclude`), the renames, the check that no two
//! tensors get one name, the target's refusals, the cast plan, the warnings
//! and what a tensors-only target loses. The driver describes its file as a
//! [`Source`] and hands the [`Selection`]'s items to the target's writer.

use std::path::Path;

use tensor_core::DType;

use super::{ConvertOptions, ConvertSummary, Plan};
use crate::codec::{Codec, Item, WriteContext, codec};
use crate::{Error, Format, NameFilter, Result};

/// A conversion's input as the shared steps see it.
pub(super) struct Source<'t, 'a> {
    /// Its format.
    pub format: Format,
    /// primitiv's data type, where it has one.
    pub kind: Option<&'static str>,
    /// Its file name, for the metadata of the output.
    pub path: Option<&'t Path>,
    /// What a tensors-only target would not carry of it ([`super::lost_of`]).
    pub lost: Option<String>,
    /// Every tensor, named as in the input, in stored order: its dtype,
    /// dims, bytes and where to get it ([`crate::codec::TensorRef`]).
    pub tensors: Vec<Item<'t, 'a>>,
}

/// The tensors a conversion writes and what it says about them.
pub(super) struct Selection {
    from: Format,
    target: Format,
    /// What happens to each tensor on its way to the target.
    plan: Plan,
    /// (position in the [`Source`], name in the output) of each tensor written.
    written: Vec<(usize, String)>,
    /// (name, why) of the tensors the target cannot hold.
    skipped: Vec<(String, String)>,
    /// (name, dtype read, dtype written) of the tensors cast.
    cast: Vec<(String, DType, DType)>,
    /// (name in the input, name in the output) of the tensors renamed.
    renamed: Vec<(String, String)>,
    /// What the conversion loses or changes, said to the user.
    pub warnings: Vec<String>,
}

impl Selection {
    /// The tensors of `src` written as `target` with `opts` (`filter` and
    /// `renames` made of them), or the refusal: a file with nothing to
    /// write but what `target` cannot hold (unless `keeps_model`: the model
    /// goes along), a selection of no tensor, two tensors renamed alike,
    /// tensors the target cannot hold (without `--skip-unsupported`).
    pub fn new(
        src: &Source<'_, '_>,
        target: Format,
        opts: &ConvertOptions,
        filter: &NameFilter,
        renames: &[(regex::Regex, String)],
        keeps_model: bool,
    ) -> Result<Selection> {
        if src.tensors.is_empty()
            && !keeps_model
            && !opts.weights_only
            && let Some(w) = &src.lost
        {
            return Err(Error::NothingToWrite {
                from: src.format,
                kind: src.kind,
                holds: w.clone(),
                target,
            });
        }
        let selected = select(src, filter, renames)?;
        let plan = Plan::for_target(target, opts.dtype, opts.keep_order)?;
        let c = codec(target)?;
        let renamed = selected
            .iter()
            .filter(|(i, new)| src.tensors[*i].name != new)
            .map(|(i, new)| (src.tensors[*i].name.to_string(), new.clone()))
            .collect();
        let mut s = Selection {
            from: src.format,
            target,
            plan,
            written: Vec::with_capacity(selected.len()),
            skipped: Vec::new(),
            cast: Vec::new(),
            renamed,
            warnings: Vec::new(),
        };
        let mut changed = Vec::new();
        for (i, new) in selected {
            let t = &src.tensors[i];
            let dtype = t.tensor.dtype();
            let planned = plan.out_dtype(dtype);
            if let Some(why) = c.refuses(target, planned, t.tensor.dims()) {
                s.skipped.push((t.name.to_string(), why));
                continue;
            }
            let out = c.written_dtype(target, planned);
            if out != dtype {
                s.cast.push((t.name.to_string(), dtype, out));
            }
            // what the user asked for (the dtype read, or --dtype's)
            let asked = opts.dtype.filter(|_| dtype.is_float()).unwrap_or(dtype);
            if out != asked {
                changed.push(format!("{:?} ({asked} -> {out})", t.name));
            }
            s.written.push((i, new));
        }
        if !s.skipped.is_empty() && !opts.skip_unsupported {
            return Err(Error::CannotHoldTensors {
                target,
                tensors: s.skipped,
            });
        }
        s.warnings.extend(no_type_warning(target, &changed));
        Ok(s)
    }

    /// Adds the warning that `target` gets the tensors alone, when the
    /// input holds more (`src.lost`) and `--weights-only` does not say so.
    pub fn say_lost(&mut self, src: &Source<'_, '_>, opts: &ConvertOptions) {
        if !opts.weights_only
            && let Some(w) = &src.lost
        {
            self.warnings.push(format!(
                "{} gets the tensors alone: {w} of this {} {} not carried over \
                 (--weights-only says that is what you want)",
                self.target,
                src.format,
                if w.ends_with('s') { "are" } else { "is" }
            ));
        }
    }

    /// The items the writer gets: the tensors of `src` written, under
    /// their names in the output.
    pub fn items<'x, 'a>(&'x self, src: &'x Source<'x, 'a>) -> Vec<Item<'x, 'a>> {
        self.written
            .iter()
            .map(|(i, new)| Item {
                name: new,
                tensor: src.tensors[*i].tensor,
                need_grad: src.tensors[*i].need_grad,
            })
            .collect()
    }

    /// What the writer needs besides the items: the plan, `opts`' progress,
    /// the source's format and file name as metadata.
    pub fn context<'c>(&self, src: &Source<'_, '_>, opts: &'c ConvertOptions) -> WriteContext<'c> {
        WriteContext {
            plan: self.plan,
            progress: progress(opts),
            metadata: super::source_metadata(src.format, src.path),
        }
    }

    /// The summary of the conversion, once written (`whole_model`: the
    /// input's model went along).
    pub fn summary(self, whole_model: bool) -> ConvertSummary {
        let mut s = ConvertSummary::new(self.from, self.target, self.written.len(), whole_model);
        s.skipped = self.skipped;
        s.warnings = self.warnings;
        s.cast = self.cast;
        s.renamed = self.renamed;
        s
    }
}

/// (position, name in the output) of the tensors of `src` that `filter`
/// keeps, renamed by `renames`; refused when none is left of a file that
/// has some, or when two get one name.
fn select(
    src: &Source<'_, '_>,
    filter: &NameFilter,
    renames: &[(regex::Regex, String)],
) -> Result<Vec<(usize, String)>> {
    let mut selected = Vec::new();
    for (i, t) in src.tensors.iter().enumerate() {
        if filter.keeps(t.name) {
            let mut new = t.name.to_string();
            for (re, to) in renames {
                new = re.replace_all(&new, to.as_str()).into_owned();
            }
            selected.push((i, new));
        }
    }
    if selected.is_empty() && !src.tensors.is_empty() {
        return Err(Error::NoTensorSelected {
            of: src.tensors.len(),
        });
    }
    let mut seen = std::collections::HashMap::new();
    for (i, new) in &selected {
        let old = src.tensors[*i].name;
        if let Some(first) = seen.insert(new.as_str(), old) {
            return Err(Error::RenameCollision {
                first: first.to_string(),
                second: old.to_string(),
                name: new.clone(),
            });
        }
    }
    Ok(selected)
}

/// The warning that `target` has no type for the tensors `changed` lists
/// (`"name" (asked -> written)`), written as the nearest type it has.
fn no_type_warning(target: Format, changed: &[String]) -> Option<String> {
    (!changed.is_empty()).then(|| {
        format!(
            "{target} has no type for {} of the tensors, written as the nearest type it has: {}",
            changed.len(),
            changed.join(", ")
        )
    })
}

/// The warning of a transcode between NNabla formats that widens some of
/// the `tensors` (name, dtype) to f32 ([`Codec::written_dtype`]).
pub(super) fn widened_warning<'n>(
    target: Format,
    tensors: impl Iterator<Item = (&'n str, DType)>,
) -> Result<Option<String>> {
    let c: &dyn Codec = codec(target)?;
    let widened: Vec<String> = tensors
        .filter_map(|(n, d)| {
            let out = c.written_dtype(target, d);
            (out != d).then(|| format!("{n:?} ({d} -> {out})"))
        })
        .collect();
    Ok(no_type_warning(target, &widened))
}

/// `opts`' progress callback, or one that does nothing.
pub(super) fn progress(opts: &ConvertOptions) -> &dyn Fn(u64) {
    fn noop(_: u64) {}
    match &opts.progress {
        Some(p) => p.as_ref(),
        None => &noop,
    }
}
