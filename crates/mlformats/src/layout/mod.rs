//! A layered (Sugiyama) drawing of a network, in near-linear time.
//!
//! [`Layout::of_graph`] turns one typed [`Graph`] into boxes and edges with
//! coordinates, top to bottom:
//!
//! - **What is drawn.** Every operator is a box (its type, its name, and up
//!   to four lines for the weights and constants it reads, which are folded
//!   into it rather than drawn as boxes of their own; [`Labels`] hides the
//!   name or the weights and adds up to four attributes). Each graph input and
//!   output gets a box. An edge joins the box that writes a value to each box
//!   that reads it, named by the value.
//! - **Layers.** Cycles (recurrent networks) are broken by reversing the
//!   edges a depth-first search finds going back; every box then sits one
//!   layer below the deepest box it reads from (longest path), and a box
//!   that reads nothing (an input) sits just above its first reader.
//! - **Long edges.** An edge spanning several layers runs through one
//!   routing point (a "dummy") per layer it crosses; the edges leaving one
//!   box share one column of such points, so a value used far below costs
//!   one column, not one per use. Points are ordered and spaced like boxes,
//!   so no edge ever runs through a box other than the two it joins: inside
//!   a layer an edge is vertical in its own column, between layers it runs
//!   in the free band where there are no boxes. Edges joining the same two
//!   boxes (a Split's outputs read by one Concat) would run on one line:
//!   each is moved a few pixels sideways, so that every one is seen.
//! - **Order.** A bounded number of barycenter sweeps (down, then up)
//!   reduces crossings; the order with the fewest crossings, counted exactly
//!   in O(E log V), is kept.
//! - **Coordinates.** Each pass places every layer at the (weighted) mean of
//!   its neighbours' positions in the layer above or below, as close as the
//!   boxes' widths allow: the closest placement that keeps the order and the
//!   gaps is an isotonic regression, solved exactly in linear time by pool
//!   adjacent violators. Long edges weigh more, so they run straight.
//!
//! **Cost.** With V boxes, E edges and D routing points, the layout takes
//! O((V + D + E) log V) time and O(V + D + E) memory: a fixed number of
//! sweeps, each a sort per layer. D is at most the sum, over the boxes, of
//! the longest span of their outgoing edges: linear for chains, residual
//! blocks and other networks whose edges are mostly short. Both are checked
//! against [`LayoutOptions`] before any work that depends on them.
//!
//! ```
//! use mlformats::graph::{Graph, Node, ValueInfo, ValueKind};
//! use mlformats::layout::{Layout, LayoutOptions};
//!
//! let mut g = Graph::new("net");
//! g.values.push(ValueInfo::new("w", ValueKind::Weight).with_shape(vec![4, 2]));
//! g.nodes.push(Node::new("Affine", "fc", ["x", "w"], ["h"]));
//! g.nodes.push(Node::new("ReLU", "relu", ["h"], ["y"]));
//! g.infer_inputs_outputs();
//! let l = Layout::of_graph(&g, &LayoutOptions::default()).unwrap();
//! // input x, Affine (with its weight folded in), ReLU, output y
//! assert_eq!(l.nodes.len(), 4);
//! assert_eq!(l.edges.len(), 3);
//! assert!(l.nodes[1].label.iter().any(|line| line.text == "w ⟨4×2⟩"));
//! let json = l.to_json();
//! assert_eq!(json["edges"][0]["tensor"], "x");
//! assert!(l.to_svg().starts_with("<svg"));
//! ```
//!
//! `docs/LAYOUT_JSON.md` describes [`Layout::to_json`]'s document.

mod body;
mod build;
mod doc;
mod family;
mod group;
mod nest;
mod order;
mod place;
mod rank;
mod render;

use crate::graph::Graph;

pub use doc::{OpSet, OpSupport, describe, doc_url, op_support};
pub use family::{FAMILIES, Family};

/// Which way the layers run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Direction {
    /// Layers from the top down: inputs at the top (the default).
    #[default]
    TopToBottom,
    /// Layers from left to right: inputs on the left. The same layout as
    /// top to bottom with the axes exchanged (boxes keep their size), so
    /// edges still never run through a box.
    LeftToRight,
}

impl Direction {
    /// `tb` or `lr`.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::TopToBottom => "tb",
            Direction::LeftToRight => "lr",
        }
    }
}

/// Bounds on the work one layout may do.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LayoutOptions {
    /// The most boxes (operators, inputs and outputs) laid out; default 200,000.
    pub max_nodes: usize,
    /// The most edges; default 1,000,000.
    pub max_edges: usize,
    /// The most routing points of long edges; default 4,000,000.
    pub max_routing_points: usize,
    /// Crossing-reduction rounds (one down and one up sweep each); default 6.
    pub order_rounds: usize,
    /// Coordinate passes (one down and one up each); default 6.
    pub place_rounds: usize,
    /// Which way the layers run; default top to bottom.
    pub direction: Direction,
    /// Whose operators the graph uses, for the boxes' documentation links
    /// ([`LayoutNode::doc`]); default [`OpSet::Unknown`] (no links).
    pub op_set: OpSet,
    /// Groups drawn closed, as one box each, by [`LayoutGroup::id`]; the
    /// others are drawn open. Default none.
    pub collapsed: Vec<String>,
    /// Nodes with subgraphs (ONNX `If`, `Loop`, `Scan`) drawn open, their
    /// bodies laid out in a group, by [`LayoutGroup::id`]; the others are
    /// drawn closed, as their node's box. Default none.
    pub expanded: Vec<String>,
    /// What an operator's box shows besides its type; default its name and
    /// its folded weights, no attributes.
    pub labels: Labels,
}

/// What the label of an operator's box shows besides the operator type
/// (boxes are sized to what they show). Inputs and outputs always show
/// their value's name and shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Labels {
    /// The node's name line; default on.
    pub names: bool,
    /// The folded weights and constants it reads (`name ⟨shape⟩`, up to
    /// four, then `+N more`); default on. Folded either way: off, they are
    /// neither boxes nor lines.
    pub weights: bool,
    /// Up to four attributes with short values, as `key = value` lines;
    /// default off.
    pub attributes: bool,
}

impl Default for Labels {
    fn default() -> Self {
        Labels {
            names: true,
            weights: true,
            attributes: false,
        }
    }
}

impl Default for LayoutOptions {
    fn default() -> Self {
        LayoutOptions {
            max_nodes: 200_000,
            max_edges: 1_000_000,
            max_routing_points: 4_000_000,
            order_rounds: 6,
            place_rounds: 6,
            direction: Direction::TopToBottom,
            op_set: OpSet::Unknown,
            collapsed: Vec::new(),
            expanded: Vec::new(),
            labels: Labels::default(),
        }
    }
}

/// Why a graph was not laid out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LayoutError {
    /// More boxes than [`LayoutOptions::max_nodes`].
    #[error("the graph has {nodes} boxes to draw, more than the layout's limit of {limit}")]
    TooManyNodes {
        /// Boxes the graph needs.
        nodes: usize,
        /// The limit.
        limit: usize,
    },
    /// More edges than [`LayoutOptions::max_edges`].
    #[error("the graph has {edges} edges to draw, more than the layout's limit of {limit}")]
    TooManyEdges {
        /// Edges the graph needs.
        edges: usize,
        /// The limit.
        limit: usize,
    },
    /// Its long edges need more routing points than
    /// [`LayoutOptions::max_routing_points`].
    #[error(
        "the graph's long edges need more than {limit} routing points (values used very far from where they are computed)"
    )]
    TooManyRoutingPoints {
        /// The limit.
        limit: usize,
    },
}

/// What a box stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NodeKind {
    /// An operator of the graph.
    Op,
    /// A graph input.
    Input,
    /// A graph output.
    Output,
    /// A closed group ([`LayoutGroup`]): one box for what it holds.
    Group,
    /// Inside an open group, a value that enters it (in its first layer)
    /// or leaves it (in its last).
    Port,
}

impl NodeKind {
    /// `op`, `input` or `output`.
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::Op => "op",
            NodeKind::Input => "input",
            NodeKind::Output => "output",
            NodeKind::Group => "group",
            NodeKind::Port => "port",
        }
    }
}

/// How a line of a box's label is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LineStyle {
    /// The operator type (bold).
    Op,
    /// The node's or value's name.
    Name,
    /// A folded weight or constant (monospace).
    Weight,
    /// An attribute, `key = value` (monospace; [`Labels::attributes`]).
    Attribute,
}

impl LineStyle {
    /// `op`, `name`, `weight` or `attr`.
    pub fn as_str(self) -> &'static str {
        match self {
            LineStyle::Op => "op",
            LineStyle::Name => "name",
            LineStyle::Weight => "weight",
            LineStyle::Attribute => "attr",
        }
    }
}

/// One line of a box's label.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LabelLine {
    /// The text (long names shortened with `…`).
    pub text: String,
    /// How it is drawn.
    pub style: LineStyle,
}

/// A box of the drawing.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LayoutNode {
    /// Its index in [`Layout::nodes`].
    pub id: usize,
    /// What it stands for.
    pub kind: NodeKind,
    /// The operator's index in the graph's [`Graph::nodes`] (`None` for an
    /// input or output box).
    pub node: Option<usize>,
    /// The operator type; `input` or `output` for the graph's ports.
    pub op: String,
    /// The operator's family, which colours its box.
    pub family: Family,
    /// The node's name, or the input's or output's value name.
    pub name: String,
    /// The lines drawn in the box.
    pub label: Vec<LabelLine>,
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width, from the label's longest line.
    pub width: f64,
    /// Height, from the label's line count.
    pub height: f64,
    /// Its layer, 0 at the top (at the left when laid out left to right),
    /// among the boxes of the group it is drawn in (or of the top).
    pub layer: usize,
    /// The innermost open group it is drawn in ([`Layout::groups`]).
    pub group: Option<usize>,
    /// The address of the operator's reference documentation ([`doc_url`]),
    /// if it has one.
    pub doc: Option<String>,
    /// A one-line description of the operator ([`describe`]: what our
    /// conversions make of it), when the support tables speak of it.
    pub description: Option<String>,
}

/// An edge of the drawing: a value from the box that writes it to a box
/// that reads it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LayoutEdge {
    /// The writing box's id.
    pub from: usize,
    /// The reading box's id.
    pub to: usize,
    /// The value's name.
    pub tensor: String,
    /// The polyline, from the border of `from` to the border of `to`
    /// (at least two points).
    pub points: Vec<(f64, f64)>,
    /// True when the edge closes a cycle and was laid out pointing up.
    pub reversed: bool,
}

/// A laid-out graph: boxes with coordinates and edges as polylines, in a
/// frame whose top-left corner is (0, 0).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Layout {
    /// The boxes.
    pub nodes: Vec<LayoutNode>,
    /// The edges.
    pub edges: Vec<LayoutEdge>,
    /// Width of the drawing.
    pub width: f64,
    /// Height of the drawing.
    pub height: f64,
    /// Number of layers.
    pub layers: usize,
    /// Which way the layers run.
    pub direction: Direction,
    /// Nodes of the graph folded into the boxes that use them (constants).
    pub folded: usize,
    /// Edge crossings left by the ordering (counted between adjacent layers).
    pub crossings: u64,
    /// The groups: NNabla repeat blocks, outer ones before the ones they
    /// hold (empty for a graph without them).
    pub groups: Vec<LayoutGroup>,
    /// What our conversions do with each operator drawn ([`op_support`];
    /// filled when [`LayoutOptions::op_set`] is known), by operator.
    pub operators: std::collections::BTreeMap<String, Vec<OpSupport>>,
}

/// What a group stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum GroupKind {
    /// An NNabla repeat block: the functions between a `RepeatStart` and
    /// its `RepeatEnd` (those whose `repeat_id` names it, and the
    /// `RepeatEnd`).
    Repeat,
    /// An ONNX node with subgraphs (`If`, `Loop`, `Scan`): open, a group
    /// per body and the node, which reads what they give back; closed,
    /// the node's own box.
    Subgraph,
    /// One body of a [`GroupKind::Subgraph`] (`then_branch`, `body`).
    Body,
}

impl GroupKind {
    /// `repeat`.
    pub fn as_str(self) -> &'static str {
        match self {
            GroupKind::Repeat => "repeat",
            GroupKind::Subgraph => "subgraph",
            GroupKind::Body => "body",
        }
    }
}

/// A group of boxes drawn as one: open, a frame with a title around the
/// boxes of what it holds; closed, the one box [`LayoutGroup::node`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LayoutGroup {
    /// Unique in the layout: the block's id, after its outer blocks' ids
    /// and `/` (what [`LayoutOptions::collapsed`] takes).
    pub id: String,
    /// Its title (`repeat ID ×TIMES`).
    pub label: String,
    /// What it stands for.
    pub kind: GroupKind,
    /// The group it is drawn in.
    pub parent: Option<usize>,
    /// Drawn closed.
    pub collapsed: bool,
    /// The box that stands for it when closed.
    pub node: Option<usize>,
    /// Operators it holds, with those of the groups inside it.
    pub operators: usize,
    /// Left edge of its frame (or box).
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width.
    pub width: f64,
    /// Height.
    pub height: f64,
}

impl LayoutGroup {
    fn at(def: &group::GroupDef, n: &LayoutNode, collapsed: bool) -> Self {
        LayoutGroup {
            id: def.id.clone(),
            label: def.label.clone(),
            kind: def.kind,
            parent: None,
            collapsed,
            node: collapsed.then_some(n.id),
            operators: def.operators,
            x: n.x,
            y: n.y,
            width: n.width,
            height: n.height,
        }
    }

    /// Group `def` drawn open in the frame of box `n`.
    pub(crate) fn open(def: &group::GroupDef, n: &LayoutNode) -> Self {
        LayoutGroup::at(def, n, false)
    }

    /// Group `def` drawn closed as box `n`.
    pub(crate) fn closed(def: &group::GroupDef, n: &LayoutNode) -> Self {
        LayoutGroup::at(def, n, true)
    }
}

/// The shape of a stored tensor, by the name a graph value gives for it
/// (for folded constants whose graph value declares no shape).
pub type ShapeLookup<'a> = &'a dyn Fn(&str) -> Option<Vec<i64>>;

impl Layout {
    /// Lays out `g` (see the [module documentation](self)).
    pub fn of_graph(g: &Graph, options: &LayoutOptions) -> Result<Layout, LayoutError> {
        Layout::of_graph_with(g, options, &|_| None)
    }

    /// Lays out `g`, labelling folded weights whose value declares no shape
    /// with `shape_of(tensor name)` (a document's tensor table).
    pub fn of_graph_with(
        g: &Graph,
        options: &LayoutOptions,
        shape_of: ShapeLookup<'_>,
    ) -> Result<Layout, LayoutError> {
        // a subgraph named in both lists is drawn closed, as its node
        let open: std::collections::HashSet<&str> = options
            .expanded
            .iter()
            .map(String::as_str)
            .filter(|id| !options.collapsed.iter().any(|c| c == id))
            .collect();
        let drawn = body::draw(g, &open);
        let (graph, paths) = match &drawn {
            Some(d) => (&d.graph, std::borrow::Cow::Borrowed(&d.paths)),
            None => (g, std::borrow::Cow::Owned(group::repeat_paths(g))),
        };
        let groups = group::find(graph, &paths);
        let mut l = if groups.defs.is_empty() {
            let sketch = build::sketch(graph, shape_of, options.labels);
            let docs = Layout::docs_of(graph, &sketch, options.op_set);
            Layout::of_sketch(sketch, docs, options, None)?
        } else {
            nest::lay(graph, &groups, options, shape_of)?
        };
        if let Some(d) = drawn {
            l.close_bodies(d);
        }
        l.operators = Layout::support_of(&l.nodes, options.op_set);
        l.describe_boxes(options.op_set);
        l.fit_frame();
        Ok(l)
    }

    /// Moves the drawing so that everything in it (boxes, groups and edge
    /// points, such as a cycle's way round a group's frame) lies in the
    /// frame from (0, 0) to (`width`, `height`), widening the frame as needed.
    fn fit_frame(&mut self) {
        let points = self.edges.iter().flat_map(|e| e.points.iter().copied());
        let corners = self
            .nodes
            .iter()
            .map(|n| (n.x, n.y, n.x + n.width, n.y + n.height))
            .chain(
                self.groups
                    .iter()
                    .map(|g| (g.x, g.y, g.x + g.width, g.y + g.height)),
            )
            .chain(points.map(|(x, y)| (x, y, x, y)));
        let (mut x0, mut y0, mut x1, mut y1) = (0.0f64, 0.0f64, self.width, self.height);
        for (a, b, c, d) in corners {
            (x0, y0, x1, y1) = (x0.min(a), y0.min(b), x1.max(c), y1.max(d));
        }
        let (dx, dy) = (-x0, -y0);
        if dx > 0.0 || dy > 0.0 {
            for n in &mut self.nodes {
                (n.x, n.y) = (n.x + dx, n.y + dy);
            }
            for g in &mut self.groups {
                (g.x, g.y) = (g.x + dx, g.y + dy);
            }
            for p in self.edges.iter_mut().flat_map(|e| e.points.iter_mut()) {
                (p.0, p.1) = (p.0 + dx, p.1 + dy);
            }
        }
        (self.width, self.height) = (x1 - x0, y1 - y0);
    }

    /// [`Layout::operators`]: the support rows of each operator boxed in
    /// `nodes` (of ONNX, those of the default domain: the boxes with a
    /// reference link).
    fn support_of(
        nodes: &[LayoutNode],
        op_set: OpSet,
    ) -> std::collections::BTreeMap<String, Vec<OpSupport>> {
        let mut out = std::collections::BTreeMap::new();
        for n in nodes {
            let wanted = n.kind == NodeKind::Op
                && (op_set != OpSet::Onnx || n.doc.is_some())
                && !out.contains_key(&n.op);
            if wanted {
                let rows = op_support(op_set, "", &n.op);
                if !rows.is_empty() {
                    out.insert(n.op.clone(), rows);
                }
            }
        }
        out
    }

    /// Gives each operator's box the description of its operator, from
    /// [`Layout::operators`] (which holds the rows of the boxes that have
    /// them).
    fn describe_boxes(&mut self, op_set: OpSet) {
        let text: std::collections::BTreeMap<&str, String> = self
            .operators
            .iter()
            .filter_map(|(op, rows)| Some((op.as_str(), doc::describe_rows(op_set, op, rows)?)))
            .collect();
        for n in &mut self.nodes {
            let wanted = n.kind == NodeKind::Op && (op_set != OpSet::Onnx || n.doc.is_some());
            if wanted {
                n.description = text.get(n.op.as_str()).cloned();
            }
        }
    }

    /// Lists the nodes with bodies drawn closed as groups (their own
    /// boxes), and gives every box the index of its node in the graph
    /// laid out rather than in the one drawn (`None` for a body's nodes).
    fn close_bodies(&mut self, d: body::Drawn) {
        let box_of: std::collections::HashMap<usize, usize> = self
            .nodes
            .iter()
            .filter_map(|n| Some((n.node?, n.id)))
            .collect();
        for c in d.closed {
            let Some(&b) = box_of.get(&c.node) else {
                continue;
            };
            let n = &self.nodes[b];
            self.groups.push(LayoutGroup {
                id: c.id,
                label: c.label,
                kind: GroupKind::Subgraph,
                parent: n.group,
                collapsed: true,
                node: Some(b),
                operators: c.operators,
                x: n.x,
                y: n.y,
                width: n.width,
                height: n.height,
            });
        }
        for n in &mut self.nodes {
            n.node = n.node.and_then(|i| d.orig.get(i).copied().flatten());
        }
    }

    /// The documentation link of each box of `sketch`, a drawing of `g`.
    fn docs_of(g: &Graph, sketch: &build::Sketch, op_set: OpSet) -> Vec<Option<String>> {
        sketch
            .boxes
            .iter()
            .map(|b| {
                if b.kind != NodeKind::Op {
                    return None;
                }
                let node = g.nodes.get(b.node?)?;
                let domain = match node.attribute("domain") {
                    Some(crate::graph::Attribute::String(d)) => d.as_str(),
                    _ => "",
                };
                doc_url(op_set, domain, &node.op)
            })
            .collect()
    }

    /// Lays out `sketch`; `pins` (a group's inside) puts the boxes marked
    /// in its first list in the first layer, those in its second in the last.
    fn of_sketch(
        sketch: build::Sketch,
        mut docs: Vec<Option<String>>,
        options: &LayoutOptions,
        pins: Option<&(Vec<bool>, Vec<bool>)>,
    ) -> Result<Layout, LayoutError> {
        let n = sketch.boxes.len();
        if n > options.max_nodes {
            return Err(LayoutError::TooManyNodes {
                nodes: n,
                limit: options.max_nodes,
            });
        }
        if sketch.edges.len() > options.max_edges {
            return Err(LayoutError::TooManyEdges {
                edges: sketch.edges.len(),
                limit: options.max_edges,
            });
        }
        let pairs: Vec<(usize, usize)> = sketch.edges.iter().map(|e| (e.from, e.to)).collect();
        let ranked = rank::rank(n, &pairs, pins);
        let mut layered = order::Layered::build(&ranked, &pairs, options.max_routing_points)
            .ok_or(LayoutError::TooManyRoutingPoints {
                limit: options.max_routing_points,
            })?;
        let crossings = layered.reduce_crossings(options.order_rounds);
        // left to right: laid out top to bottom with each box's sides
        // exchanged, then every coordinate transposed
        let lr = options.direction == Direction::LeftToRight;
        let sizes: Vec<(f64, f64)> = sketch
            .boxes
            .iter()
            .map(|b| {
                if lr {
                    (b.height, b.width)
                } else {
                    (b.width, b.height)
                }
            })
            .collect();
        let mut placed = place::place(&layered, &sizes, options.place_rounds);
        // a group's ports sit against its border: the first layer's at the
        // top of their band, the last layer's at its bottom, so the edges
        // joining them from outside cross nothing inside the group
        if let Some((first, last)) = pins {
            for (v, size) in sizes.iter().enumerate() {
                let band = layered.layer_of[v];
                if first.get(v) == Some(&true) {
                    placed.top[v] = placed.layer_top[band];
                } else if last.get(v) == Some(&true) {
                    placed.top[v] = placed.layer_bottom[band] - size.1;
                }
            }
        }
        let mut nodes = Vec::with_capacity(n);
        for (id, b) in sketch.boxes.into_iter().enumerate() {
            let (x, y) = if lr {
                (placed.top[id], placed.x[id] - b.height / 2.0)
            } else {
                (placed.x[id] - b.width / 2.0, placed.top[id])
            };
            nodes.push(LayoutNode {
                id,
                kind: b.kind,
                node: b.node,
                family: Family::of(b.kind, &b.op),
                op: b.op,
                name: b.name,
                label: b.label,
                x,
                y,
                width: b.width,
                height: b.height,
                layer: ranked.layer[id],
                group: None,
                doc: docs.get_mut(id).and_then(Option::take),
                description: None,
            });
        }
        let routes = place::routes(&layered, &placed, &pairs);
        let edges = sketch
            .edges
            .into_iter()
            .zip(routes)
            .enumerate()
            .map(|(i, (e, points))| LayoutEdge {
                points: points
                    .into_iter()
                    .map(|(a, b)| if lr { (b, a) } else { (a, b) })
                    .collect(),
                reversed: layered.edge_reversed(i),
                from: e.from,
                to: e.to,
                tensor: e.tensor,
            })
            .collect();
        let (width, height) = if lr {
            (placed.height, placed.width)
        } else {
            (placed.width, placed.height)
        };
        Ok(Layout {
            nodes,
            edges,
            width,
            height,
            layers: layered.layers.len(),
            direction: options.direction,
            folded: sketch.folded,
            crossings,
            groups: Vec::new(),
            operators: Default::default(),
        })
    }
}
