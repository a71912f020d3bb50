//! ONNX subgraphs (the bodies of `If`, `Loop` and `Scan`) drawn as groups.
//!
//! A node with bodies is drawn closed by default: its own box. Opened
//! ([`super::LayoutOptions::expanded`], by its group id), it becomes a
//! group holding a group per body (its nodes, drawn as the top graph's
//! are; a body's own bodies open in turn when named) and the node itself,
//! which then reads the bodies' outputs: an `If`'s box below its two
//! branches, where it picks one. Values a body reads from the graph
//! around it enter its group as ports, as the body's inputs (a `Loop`'s
//! iteration count and condition) do.
//!
//! The graph drawn is the top graph with each open node's bodies added as
//! nodes: a body's value whose name is already used elsewhere is drawn
//! as `name ⟨body⟩`.

use std::collections::{HashMap, HashSet};

use super::GroupKind;
use super::group::Seg;
use crate::graph::{Attribute, Graph, Node};

/// One body of a node: its inputs, outputs and nodes.
struct Body {
    /// The attribute holding it (`then_branch`, `body`; `name#i` for the
    /// i-th graph of a list).
    attr: String,
    inputs: Vec<String>,
    outputs: Vec<String>,
    nodes: Vec<Node>,
}

fn strings(fields: &[(String, Attribute)], key: &str) -> Vec<String> {
    match fields.iter().find(|(k, _)| k == key) {
        Some((_, Attribute::Strings(s))) => s.clone(),
        _ => Vec::new(),
    }
}

fn text(fields: &[(String, Attribute)], key: &str) -> String {
    match fields.iter().find(|(k, _)| k == key) {
        Some((_, Attribute::String(s))) => s.clone(),
        _ => String::new(),
    }
}

/// The body a subgraph attribute's summary describes (onnx-format's
/// `graph_summary`: `inputs`, `outputs`, `graph_nodes`), if it is one.
fn body(attr: String, fields: &[(String, Attribute)]) -> Option<Body> {
    let Some((_, Attribute::Messages(nodes))) = fields.iter().find(|(k, _)| k == "graph_nodes")
    else {
        return None;
    };
    let nodes = nodes
        .iter()
        .map(|f| {
            let mut n = Node::new(
                text(f, "op"),
                text(f, "name"),
                strings(f, "inputs"),
                strings(f, "outputs"),
            );
            if let Some((_, Attribute::Message(a))) = f.iter().find(|(k, _)| k == "attributes") {
                n.attributes = a.clone();
            }
            n
        })
        .collect();
    Some(Body {
        attr,
        inputs: strings(fields, "inputs"),
        outputs: strings(fields, "outputs"),
        nodes,
    })
}

/// The bodies of node `n` (none for most nodes).
fn bodies(n: &Node) -> Vec<Body> {
    let mut out = Vec::new();
    for (k, v) in &n.attributes {
        match v {
            Attribute::Message(f) => out.extend(body(k.clone(), f)),
            Attribute::Messages(list) => {
                for (i, f) in list.iter().enumerate() {
                    out.extend(body(format!("{k}#{i}"), f));
                }
            }
            _ => {}
        }
    }
    out
}

/// Whether any node of `g` has a body.
pub(crate) fn has_bodies(g: &Graph) -> bool {
    g.nodes.iter().any(|n| !bodies(n).is_empty())
}

/// A node with bodies drawn closed: its index in the drawn graph, its
/// group id and title, and the nodes its bodies hold.
pub(crate) struct Closed {
    pub node: usize,
    pub id: String,
    pub label: String,
    pub operators: usize,
}

/// The graph drawn for `g` with the nodes `open` names opened.
pub(crate) struct Drawn {
    /// `g`'s nodes, each open node's bodies' nodes added before it.
    pub graph: Graph,
    /// Each node's groups, outer first.
    pub paths: Vec<Vec<Seg>>,
    /// Each node's index in `g` (`None` for a body's nodes).
    pub orig: Vec<Option<usize>>,
    /// The nodes with bodies drawn closed.
    pub closed: Vec<Closed>,
}

/// Nodes counted in a node's bodies, with their own bodies'.
fn operators(bodies: &[Body]) -> usize {
    bodies
        .iter()
        .map(|b| {
            b.nodes.len()
                + b.nodes
                    .iter()
                    .map(|n| operators(&self::bodies(n)))
                    .sum::<usize>()
        })
        .sum()
}

struct Builder<'a> {
    open: &'a HashSet<&'a str>,
    out: Drawn,
    /// Every value name drawn so far.
    names: HashSet<String>,
    /// Group ids given so far.
    ids: HashSet<String>,
}

impl Builder<'_> {
    /// `id` made unique among the group ids given.
    fn unique(&mut self, id: String) -> String {
        let mut u = id.clone();
        let mut k = 2;
        while !self.ids.insert(u.clone()) {
            u = format!("{id}#{k}");
            k += 1;
        }
        u
    }

    /// Adds `nodes` (of `g` when `orig` gives their indices), in groups
    /// `path`, the ids of their groups starting with `prefix`.
    fn add(&mut self, nodes: Vec<(Node, Option<usize>)>, path: &[Seg], prefix: &str) {
        for (k, (mut n, orig)) in nodes.into_iter().enumerate() {
            let bodies = bodies(&n);
            if bodies.is_empty() {
                self.push(n, path.to_vec(), orig);
                continue;
            }
            let own = if n.name.is_empty() {
                format!("#{k}")
            } else {
                n.name.clone()
            };
            let id = self.unique(format!("{prefix}{own}"));
            let label = if n.name.is_empty() {
                n.op.clone()
            } else {
                format!("{} {}", n.op, n.name)
            };
            if !self.open.contains(id.as_str()) {
                self.out.closed.push(Closed {
                    node: self.out.graph.nodes.len(),
                    id,
                    label,
                    operators: operators(&bodies),
                });
                self.push(n, path.to_vec(), orig);
                continue;
            }
            let mut here = path.to_vec();
            here.push(Seg {
                id: id.clone(),
                label,
                kind: GroupKind::Subgraph,
            });
            for b in bodies {
                let rename = self.local_names(&b);
                let map = |v: &String| rename.get(v).cloned().unwrap_or_else(|| v.clone());
                let mut inner = here.clone();
                let body_id = self.unique(format!("{id}/{}", b.attr));
                inner.push(Seg {
                    id: body_id.clone(),
                    label: b.attr.clone(),
                    kind: GroupKind::Body,
                });
                let nodes = b
                    .nodes
                    .into_iter()
                    .map(|mut m| {
                        m.inputs = m.inputs.iter().map(map).collect();
                        m.outputs = m.outputs.iter().map(map).collect();
                        (m, None)
                    })
                    .collect();
                self.add(nodes, &inner, &format!("{body_id}/"));
                // the node reads what its bodies give back
                n.inputs.extend(b.outputs.iter().map(map));
            }
            self.push(n, here, orig);
        }
    }

    /// New names for the values body `b` defines (its inputs and what its
    /// nodes write) that are already drawn elsewhere.
    fn local_names(&mut self, b: &Body) -> HashMap<String, String> {
        let mut rename = HashMap::new();
        let defined = b
            .inputs
            .iter()
            .chain(b.nodes.iter().flat_map(|n| &n.outputs));
        for v in defined {
            if v.is_empty() || rename.contains_key(v) {
                continue;
            }
            if self.names.contains(v) {
                let mut u = format!("{v} ⟨{}⟩", b.attr);
                let mut k = 2;
                while self.names.contains(&u) {
                    u = format!("{v} ⟨{}⟩#{k}", b.attr);
                    k += 1;
                }
                self.names.insert(u.clone());
                rename.insert(v.clone(), u);
            } else {
                self.names.insert(v.clone());
            }
        }
        rename
    }

    fn push(&mut self, n: Node, path: Vec<Seg>, orig: Option<usize>) {
        self.names
            .extend(n.inputs.iter().chain(&n.outputs).cloned());
        self.out.graph.nodes.push(n);
        self.out.paths.push(path);
        self.out.orig.push(orig);
    }
}

/// The graph drawn for `g`, whose nodes with bodies are drawn closed
/// unless `open` names them; `None` when no node of `g` has a body.
pub(crate) fn draw(g: &Graph, open: &HashSet<&str>) -> Option<Drawn> {
    if !has_bodies(g) {
        return None;
    }
    let mut graph = Graph::new(g.name.clone());
    graph.batch_size = g.batch_size;
    graph.inputs = g.inputs.clone();
    graph.outputs = g.outputs.clone();
    graph.values = g.values.clone();
    let mut b = Builder {
        open,
        out: Drawn {
            graph,
            paths: Vec::new(),
            orig: Vec::new(),
            closed: Vec::new(),
        },
        names: g
            .nodes
            .iter()
            .flat_map(|n| n.inputs.iter().chain(&n.outputs))
            .chain(&g.inputs)
            .chain(&g.outputs)
            .cloned()
            .collect(),
        ids: HashSet::new(),
    };
    let nodes = g
        .nodes
        .iter()
        .cloned()
        .enumerate()
        .map(|(i, n)| (n, Some(i)))
        .collect();
    b.add(nodes, &[], "");
    Some(b.out)
}
