//! Choosing tensors by name: the `--only`/`--exclude` rule every command
//! shares (`convert`, `stats`, `diff`).

use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::{Error, Result};

/// Patterns that keep and leave out tensors by name.
///
/// A name is kept when it matches one of the `only` patterns (or there are
/// none) and none of the `exclude` patterns. A pattern matches a name equal
/// to it, so every name `inspect` prints works as it is, brackets and all
/// (TenniS `node/key[0]`), or that its glob matches (`*` any run of
/// characters, `/` included; `?` one character; `[abc]` one of them;
/// `{a,b}` either).
///
/// ```
/// # fn main() -> Result<(), mlformats::Error> {
/// let f = mlformats::NameFilter::new(&["conv*".into(), "x/value[0]".into()], &["*/b".into()])?;
/// assert!(f.keeps("conv1/W"));
/// assert!(!f.keeps("conv1/b"));
/// assert!(f.keeps("x/value[0]"));
/// assert!(!f.keeps("fc/W"));
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Default)]
pub struct NameFilter {
    only: Option<Patterns>,
    exclude: Option<Patterns>,
}

#[derive(Debug, Clone)]
struct Patterns {
    literal: Vec<String>,
    globs: GlobSet,
}

impl Patterns {
    fn new(patterns: &[String], flag: &str) -> Result<Option<Patterns>> {
        if patterns.is_empty() {
            return Ok(None);
        }
        let mut b = GlobSetBuilder::new();
        for p in patterns {
            b.add(Glob::new(p).map_err(|e| Error::BadPattern {
                option: flag.to_string(),
                pattern: p.clone(),
                regex: false,
                why: e.to_string(),
            })?);
        }
        let globs = b
            .build()
            .map_err(|e| Error::Invalid(format!("{flag}: {e}")))?;
        Ok(Some(Patterns {
            literal: patterns.to_vec(),
            globs,
        }))
    }

    fn is_match(&self, name: &str) -> bool {
        self.literal.iter().any(|p| p == name) || self.globs.is_match(name)
    }
}

impl NameFilter {
    /// A filter keeping names matching `only` (all when empty) and matching
    /// none of `exclude`.
    ///
    /// # Errors
    ///
    /// [`Error::BadPattern`] for a pattern that is not a glob (`a[b`: an
    /// unclosed class; write `a[[]b` to match `a[b`).
    pub fn new(only: &[String], exclude: &[String]) -> Result<NameFilter> {
        Ok(NameFilter {
            only: Patterns::new(only, "--only")?,
            exclude: Patterns::new(exclude, "--exclude")?,
        })
    }

    /// True when the filter keeps everything.
    pub fn is_empty(&self) -> bool {
        self.only.is_none() && self.exclude.is_none()
    }

    /// True when `name` is kept.
    pub fn keeps(&self, name: &str) -> bool {
        self.only.as_ref().is_none_or(|p| p.is_match(name))
            && !self.exclude.as_ref().is_some_and(|p| p.is_match(name))
    }
}
