//! `validate`: the strictest read plus checks of the data.

use std::collections::HashMap;

use tensor_core::stats;

use crate::Document;

/// What [`validate`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Validation {
    /// Every problem, one sentence each.
    pub problems: Vec<String>,
}

impl Validation {
    /// True when no problem was found.
    pub fn is_valid(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Checks an opened document: names stored twice, empty names, NaN and
/// infinite values. `progress` is called with each tensor's byte count.
pub fn validate(doc: &Document, progress: &dyn Fn(u64)) -> Validation {
    let mut problems = Vec::new();
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for s in doc.stored() {
        *seen.entry(s.name.as_str()).or_default() += 1;
    }
    let mut dups: Vec<(&str, usize)> = seen.into_iter().filter(|(_, n)| *n > 1).collect();
    dups.sort();
    for (name, n) in dups {
        problems.push(format!("name {name:?} is stored {n} times"));
    }
    for (name, t) in doc.tensors() {
        if name.is_empty() {
            problems.push("a tensor has an empty name".to_string());
        }
        let s = stats::summarize(t);
        if s.nan > 0 {
            problems.push(format!("{name}: {} NaN of {} elements", s.nan, s.count));
        }
        if s.inf > 0 {
            problems.push(format!(
                "{name}: {} infinite of {} elements",
                s.inf, s.count
            ));
        }
        progress(t.bytes().len() as u64);
    }
    Validation { problems }
}
