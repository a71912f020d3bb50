//! Groups: NNabla repeat blocks, found in a graph and drawn as one box
//! each, open (their operators laid out inside, with a box per value that
//! enters or leaves) or closed (one box).
//!
//! A function belongs to the blocks its `repeat_id` list names, outer
//! first; a `RepeatEnd` also to the block it closes (its `repeat_param`'s
//! `repeat_id`). The lists make a tree (the same id under two parents is
//! two groups), at most [`MAX_DEPTH`] deep: ids past it are not grouped.

use std::collections::{HashMap, HashSet};

use super::GroupKind;
use crate::graph::{Attribute, Graph, Node};

/// Deepest nesting of groups drawn; ids deeper in a list are ignored.
pub(crate) const MAX_DEPTH: usize = 16;

/// One group of a graph.
pub(crate) struct GroupDef {
    /// Unique: the ids of the group and its parents, outer first, joined by `/`.
    pub id: String,
    /// What its box says: `repeat ID ×TIMES`.
    pub label: String,
    /// What it stands for.
    pub kind: GroupKind,
    /// The group it is drawn in.
    pub parent: Option<usize>,
    /// Graph nodes directly in it, in stored order.
    pub members: Vec<usize>,
    /// Groups directly in it.
    pub children: Vec<usize>,
    /// The first stored node of its subtree (where its box goes in order).
    pub first: usize,
    /// Operators in its subtree.
    pub operators: usize,
}

/// The groups of a graph and what is outside them.
pub(crate) struct Groups {
    pub defs: Vec<GroupDef>,
    /// Nodes in no group.
    pub top_nodes: Vec<usize>,
    /// Groups in no group.
    pub top_groups: Vec<usize>,
    /// Each node's innermost group.
    pub of_node: Vec<Option<usize>>,
}

/// Field `key` of node `n`'s `repeat_param` (RepeatStart, RepeatEnd).
fn repeat_param<'n>(n: &'n Node, key: &str) -> Option<&'n Attribute> {
    match n.attribute("repeat_param")? {
        Attribute::Message(fields) => fields.iter().find(|(k, _)| k == key).map(|(_, v)| v),
        _ => None,
    }
}

/// The repeat ids node `n` lies in, outer first (empty for most nodes).
fn path(n: &Node) -> Vec<&str> {
    let mut ids: Vec<&str> = match n.attribute("repeat_id") {
        Some(Attribute::Strings(s)) => s.iter().map(String::as_str).collect(),
        _ => Vec::new(),
    };
    // a RepeatEnd closes the block its parameter names: it is drawn in it
    if n.op == "RepeatEnd"
        && let Some(Attribute::String(own)) = repeat_param(n, "repeat_id")
        && ids.last() != Some(&own.as_str())
    {
        ids.push(own);
    }
    ids.retain(|s| !s.is_empty());
    ids.truncate(MAX_DEPTH);
    ids
}

/// The `times` of the `RepeatEnd` closing block `id`, by block id, for
/// every block a `RepeatEnd` of `g` closes.
fn times(g: &Graph) -> HashMap<&str, i64> {
    g.nodes
        .iter()
        .filter(|n| n.op == "RepeatEnd")
        .filter_map(
            |n| match (repeat_param(n, "repeat_id"), repeat_param(n, "times")) {
                (Some(Attribute::String(id)), Some(Attribute::Int(t))) => Some((id.as_str(), *t)),
                _ => None,
            },
        )
        .collect()
}

/// One level of a node's place in the groups: the group's unique id (the
/// ids of the groups around it, `/`, its own), its title and kind.
#[derive(Clone)]
pub(crate) struct Seg {
    pub id: String,
    pub label: String,
    pub kind: GroupKind,
}

/// Each node's repeat blocks, outer first, as [`Seg`]s.
pub(crate) fn repeat_paths(g: &Graph) -> Vec<Vec<Seg>> {
    let times_of = times(g);
    g.nodes
        .iter()
        .map(|n| {
            let mut key = String::new();
            path(n)
                .into_iter()
                .map(|id| {
                    if !key.is_empty() {
                        key.push('/');
                    }
                    key.push_str(id);
                    Seg {
                        id: key.clone(),
                        label: match times_of.get(id) {
                            Some(t) => format!("repeat {id} ×{t}"),
                            None => format!("repeat {id}"),
                        },
                        kind: GroupKind::Repeat,
                    }
                })
                .collect()
        })
        .collect()
}

/// The groups of `g`, node `i` in the groups `paths[i]` lists, outer first
/// (none for most graphs).
pub(crate) fn find<'p>(g: &Graph, paths: &'p [Vec<Seg>]) -> Groups {
    let mut defs: Vec<GroupDef> = Vec::new();
    let mut by_id: HashMap<&'p str, usize> = HashMap::new();
    let mut of_node = vec![None; g.nodes.len()];
    let mut top_nodes = Vec::new();
    let mut top_groups = Vec::new();
    for (index, slot) in of_node.iter_mut().enumerate() {
        let mut parent: Option<usize> = None;
        for seg in paths.get(index).map_or(&[][..], Vec::as_slice) {
            let gi = match by_id.get(seg.id.as_str()) {
                Some(&gi) => gi,
                None => {
                    let gi = defs.len();
                    defs.push(GroupDef {
                        id: seg.id.clone(),
                        label: seg.label.clone(),
                        kind: seg.kind,
                        parent,
                        members: Vec::new(),
                        children: Vec::new(),
                        first: index,
                        operators: 0,
                    });
                    match parent {
                        Some(p) => defs[p].children.push(gi),
                        None => top_groups.push(gi),
                    }
                    by_id.insert(&seg.id, gi);
                    gi
                }
            };
            defs[gi].operators += 1;
            parent = Some(gi);
        }
        match parent {
            Some(gi) => defs[gi].members.push(index),
            None => top_nodes.push(index),
        }
        *slot = parent;
    }
    Groups {
        defs,
        top_nodes,
        top_groups,
        of_node,
    }
}

impl Groups {
    /// Whether node `n` lies in group `gi` or a group inside it.
    fn inside(&self, n: usize, gi: usize) -> bool {
        let mut at = self.of_node[n];
        while let Some(k) = at {
            if k == gi {
                return true;
            }
            at = self.defs[k].parent;
        }
        false
    }

    /// The nodes of group `gi` and of the groups inside it.
    fn subtree(&self, gi: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack = vec![gi];
        while let Some(k) = stack.pop() {
            out.extend(&self.defs[k].members);
            stack.extend(&self.defs[k].children);
        }
        out.sort_unstable();
        out
    }

    /// What group `gi` reads from outside it (not stored weights) and what
    /// it writes that is read outside it or is a graph output, each once,
    /// in stored order.
    pub(crate) fn boundary(
        &self,
        g: &Graph,
        gi: usize,
        readers: &Readers,
    ) -> (Vec<String>, Vec<String>) {
        let nodes = self.subtree(gi);
        let written: HashSet<&str> = nodes
            .iter()
            .flat_map(|&n| g.nodes[n].outputs.iter().map(String::as_str))
            .collect();
        let mut seen = HashSet::new();
        let mut reads = Vec::new();
        for &n in &nodes {
            for i in &g.nodes[n].inputs {
                if !written.contains(i.as_str()) && !readers.stored(i) && seen.insert(i.as_str()) {
                    reads.push(i.clone());
                }
            }
        }
        let mut writes = Vec::new();
        for &n in &nodes {
            for o in &g.nodes[n].outputs {
                let outside = readers.graph_outputs.contains(o.as_str())
                    || readers.of(o).iter().any(|&r| !self.inside(r, gi));
                if outside && seen.insert(o.as_str()) {
                    writes.push(o.clone());
                }
            }
        }
        (reads, writes)
    }
}

/// Who reads each value, and which values are stored weights.
pub(crate) struct Readers<'g> {
    by_value: HashMap<&'g str, Vec<usize>>,
    stored: HashSet<&'g str>,
    graph_outputs: HashSet<&'g str>,
}

impl<'g> Readers<'g> {
    pub(crate) fn new(g: &'g Graph) -> Self {
        let mut by_value: HashMap<&str, Vec<usize>> = HashMap::new();
        for (k, n) in g.nodes.iter().enumerate() {
            for i in &n.inputs {
                by_value.entry(i).or_default().push(k);
            }
        }
        let inputs: HashSet<&str> = g.inputs.iter().map(String::as_str).collect();
        Readers {
            by_value,
            stored: g
                .values
                .iter()
                .filter(|v| v.kind.is_stored() && !inputs.contains(v.name.as_str()))
                .map(|v| v.name.as_str())
                .collect(),
            graph_outputs: g.outputs.iter().map(String::as_str).collect(),
        }
    }

    fn of(&self, value: &str) -> &[usize] {
        self.by_value.get(value).map_or(&[], Vec::as_slice)
    }

    fn stored(&self, value: &str) -> bool {
        self.stored.contains(value)
    }
}
