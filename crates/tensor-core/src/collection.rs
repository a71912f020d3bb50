//! An ordered name → tensor collection that every format can produce.

use std::collections::HashMap;

use crate::Tensor;

/// Tensors by name, in the order they were inserted (the file's order).
///
/// Inserting a name that is already present replaces its tensor but keeps
/// its first position, which is how NNabla and the `inspect` contract treat
/// a name stored twice; [`TensorMap::insert`] reports it so a strict reader
/// can refuse duplicates instead.
#[derive(Debug, Clone, Default)]
pub struct TensorMap<'a> {
    entries: Vec<(String, Tensor<'a>)>,
    index: HashMap<String, usize>,
}

impl<'a> TensorMap<'a> {
    /// An empty collection.
    pub fn new() -> Self {
        Self::default()
    }

    /// Inserts `tensor` under `name`. Returns the tensor it replaced, if the
    /// name was present (the entry keeps its original position).
    pub fn insert(&mut self, name: impl Into<String>, tensor: Tensor<'a>) -> Option<Tensor<'a>> {
        let name = name.into();
        if let Some(&i) = self.index.get(&name) {
            return Some(std::mem::replace(&mut self.entries[i].1, tensor));
        }
        self.index.insert(name.clone(), self.entries.len());
        self.entries.push((name, tensor));
        None
    }

    /// The tensor named `name`.
    pub fn get(&self, name: &str) -> Option<&Tensor<'a>> {
        self.index.get(name).map(|&i| &self.entries[i].1)
    }

    /// True when `name` is present.
    pub fn contains(&self, name: &str) -> bool {
        self.index.contains_key(name)
    }

    /// The number of tensors.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when there are no tensors.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `(name, tensor)` pairs in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Tensor<'a>)> {
        self.entries.iter().map(|(n, t)| (n.as_str(), t))
    }

    /// The names in order.
    pub fn names(&self) -> impl ExactSizeIterator<Item = &str> {
        self.entries.iter().map(|(n, _)| n.as_str())
    }

    /// Keeps the tensors for which `keep(name, tensor)` is true, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&str, &Tensor<'a>) -> bool) {
        self.entries.retain(|(n, t)| keep(n, t));
        self.reindex();
    }

    /// A collection that no longer borrows the input.
    pub fn into_static(self) -> TensorMap<'static> {
        self.into_iter()
            .map(|(n, t)| (n, t.into_static()))
            .collect()
    }

    fn reindex(&mut self) {
        self.index = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, (n, _))| (n.clone(), i))
            .collect();
    }
}

impl<'a> IntoIterator for TensorMap<'a> {
    type Item = (String, Tensor<'a>);
    type IntoIter = std::vec::IntoIter<(String, Tensor<'a>)>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl<'a, S: Into<String>> FromIterator<(S, Tensor<'a>)> for TensorMap<'a> {
    fn from_iter<I: IntoIterator<Item = (S, Tensor<'a>)>>(iter: I) -> Self {
        let mut m = TensorMap::new();
        for (n, t) in iter {
            m.insert(n, t);
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_lookup_and_duplicates() {
        let t = |v: f32| Tensor::from_values([1], &[v]).unwrap();
        let mut m = TensorMap::new();
        assert!(m.insert("b", t(1.0)).is_none());
        assert!(m.insert("a", t(2.0)).is_none());
        let old = m.insert("b", t(3.0)).unwrap();
        assert_eq!(old.view::<f32>().unwrap()[0], 1.0);
        assert_eq!(m.names().collect::<Vec<_>>(), ["b", "a"]);
        assert_eq!(m.get("b").unwrap().view::<f32>().unwrap()[0], 3.0);
        m.retain(|n, _| n != "b");
        assert_eq!(m.names().collect::<Vec<_>>(), ["a"]);
        assert!(m.get("b").is_none() && m.contains("a"));
        assert_eq!(m.len(), 1);
    }
}
