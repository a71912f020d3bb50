//! `validate`: the real loader's rules and checks of the data.
//!
//! Opening a file already applies every rule its reader applies (a TenniS
//! module is read with the C++ `Module::Load` checks, a `.params` file
//! refuses duplicate names, ...). `validate` adds the rules the real library
//! applies only later, when it builds a model from the file, and checks of
//! the data; each problem says which rule failed and where.

use std::collections::HashMap;

use tensor_core::graph::ValueKind;
use tensor_core::stats;

use crate::Document;

/// What [`validate`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Validation {
    /// Every problem, one sentence each: a rule of the real library that
    /// the file breaks, or data that is NaN or infinite.
    pub problems: Vec<String>,
    /// What is worth knowing but breaks no rule (a name stored twice, which
    /// the real library accepts).
    pub notes: Vec<String>,
}

impl Validation {
    /// True when no problem was found.
    pub fn is_valid(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Opens `path` and checks it with [`validate_document`], as
/// [`crate::diff()`] opens and compares two paths.
///
/// # Errors
///
/// The reader's error when the file cannot be read (a file the reader
/// rejects is not a [`Validation`] with problems: it is an error).
///
/// ```
/// # fn main() -> Result<(), mlformats::Error> {
/// let v = mlformats::validate("../../testdata/cvm/two_entry.params")?;
/// assert!(v.is_valid());
/// # Ok(()) }
/// ```
pub fn validate(path: impl AsRef<std::path::Path>) -> crate::Result<Validation> {
    let doc = Document::open(path)?;
    Ok(validate_document(&doc, &|_| {}))
}

/// Checks an opened document. `progress` is called with each tensor's byte
/// count as its data is checked.
///
/// Rules: NNabla builds a network only when every parameter's stored shape
/// is the shape the network declares for that variable (a stored 0-d
/// parameter counts as `[1]`, as nnabla reads it). Data: no NaN, no
/// infinity, no empty tensor name.
pub fn validate_document(doc: &Document, progress: &dyn Fn(u64)) -> Validation {
    let mut v = Validation {
        problems: Vec::new(),
        notes: Vec::new(),
    };
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for s in doc.stored() {
        *seen.entry(s.stored_name.as_str()).or_default() += 1;
    }
    let mut dups: Vec<(&str, usize)> = seen.into_iter().filter(|(_, n)| *n > 1).collect();
    dups.sort();
    for (name, n) in dups {
        v.notes.push(format!(
            "name {name:?} is stored {n} times (the library accepts it; tensors are named uniquely)"
        ));
    }
    if doc.format().is_nnabla()
        && let Some(g) = doc.graph()
    {
        for net in &g.graphs {
            for val in net.values.iter().filter(|x| x.kind == ValueKind::Weight) {
                let (Some(declared), Some(t)) = (&val.shape, doc.tensor(&val.name)) else {
                    continue;
                };
                let as_loaded = |d: Vec<i64>| if d.is_empty() { vec![1] } else { d };
                let stored = as_loaded(t.dims().iter().map(|&d| d as i64).collect());
                if declared.iter().all(|&d| d >= 0) && as_loaded(declared.clone()) != stored {
                    v.problems.push(format!(
                        "network {:?}: parameter {:?} is stored with shape {:?} but the network declares {:?} (nnabla refuses to build the network)",
                        net.name,
                        val.name,
                        t.dims(),
                        declared
                    ));
                }
            }
        }
    }
    for (name, t) in doc.tensors() {
        if name.is_empty() {
            v.problems.push("a tensor has an empty name".to_string());
        }
        let s = stats::summarize(t);
        if s.nan > 0 {
            v.problems
                .push(format!("{name}: {} NaN of {} elements", s.nan, s.count));
        }
        if s.inf > 0 {
            v.problems.push(format!(
                "{name}: {} infinite of {} elements",
                s.inf, s.count
            ));
        }
        progress(t.bytes().len() as u64);
    }
    v
}
