//! Laying out a graph that has groups ([`super::group`]): each open group
//! is laid out on its own, inside out, and then drawn as one box of that
//! size in the layout around it, its inside moved into the box. A closed
//! group is one box. Inside a group, a box per value that enters it sits
//! in its first layer and a box per value that leaves it in its last, so
//! the edges outside the group join them through the group's border
//! without crossing what it holds.

use std::collections::{HashMap, HashSet};

use super::build::{self, Sketch};
use super::group::{Groups, Readers};
use super::{
    Direction, Layout, LayoutError, LayoutGroup, LayoutNode, LayoutOptions, NodeKind, ShapeLookup,
};
use crate::graph::{Graph, Node};

/// Space between a group's border and what it holds.
pub(crate) const GROUP_PAD: f64 = 12.0;
/// Height of a group's title band.
pub(crate) const GROUP_HEADER: f64 = 24.0;
/// Width of a character of a group's title (bold 11 px sans-serif).
const TITLE_CHAR_WIDTH: f64 = 7.0;

/// What one node of a scope's graph stands for.
#[derive(Clone, Copy)]
enum Item {
    /// A node of the graph.
    Node(usize),
    /// A group inside the scope.
    Group(usize),
}

/// One scope laid out, in its own frame: its boxes and edges, and the
/// groups drawn in it (a `parent` of `None` is the scope's own group).
struct Part {
    layout: Layout,
    groups: Vec<LayoutGroup>,
}

/// What every scope of one layout shares.
struct Cx<'a> {
    g: &'a Graph,
    groups: &'a Groups,
    /// Per group: what it reads from outside and what it writes for outside.
    boundary: Vec<(Vec<String>, Vec<String>)>,
    collapsed: HashSet<&'a str>,
    options: &'a LayoutOptions,
    shape_of: ShapeLookup<'a>,
}

/// Lays out `g`, whose groups are `groups`.
pub(crate) fn lay(
    g: &Graph,
    groups: &Groups,
    options: &LayoutOptions,
    shape_of: ShapeLookup<'_>,
) -> Result<Layout, LayoutError> {
    let readers = Readers::new(g);
    let cx = Cx {
        g,
        groups,
        boundary: (0..groups.defs.len())
            .map(|k| groups.boundary(g, k, &readers))
            .collect(),
        collapsed: options.collapsed.iter().map(String::as_str).collect(),
        options,
        shape_of,
    };
    let mut budget = options.max_nodes;
    let part = scope(&cx, None, &mut budget)?;
    let mut l = part.layout;
    l.groups = part.groups;
    Ok(l)
}

/// The graph of one scope (the whole graph's top, or group `gi`'s inside):
/// its nodes, a node per group directly inside it, and its inputs and
/// outputs; with what each node stands for.
fn scope_graph(cx: &Cx<'_>, gi: Option<usize>) -> (Graph, Vec<Item>) {
    let (g, defs) = (cx.g, &cx.groups.defs);
    let (nodes, kids) = match gi {
        None => (&cx.groups.top_nodes, &cx.groups.top_groups),
        Some(k) => (&defs[k].members, &defs[k].children),
    };
    let mut items: Vec<(usize, Item)> = nodes
        .iter()
        .map(|&n| (n, Item::Node(n)))
        .chain(kids.iter().map(|&k| (defs[k].first, Item::Group(k))))
        .collect();
    items.sort_by_key(|x| x.0);
    let mut sub = Graph::new(g.name.clone());
    for &(_, it) in &items {
        sub.nodes.push(match it {
            Item::Node(n) => g.nodes[n].clone(),
            Item::Group(k) => {
                let (reads, writes) = &cx.boundary[k];
                Node::new("repeat", defs[k].id.as_str(), reads, writes)
            }
        });
    }
    (sub.inputs, sub.outputs) = match gi {
        None => (g.inputs.clone(), g.outputs.clone()),
        Some(k) => cx.boundary[k].clone(),
    };
    let used: HashSet<&str> = sub
        .nodes
        .iter()
        .flat_map(|n| n.inputs.iter().chain(&n.outputs).map(String::as_str))
        .chain(sub.inputs.iter().map(String::as_str))
        .collect();
    sub.values = g
        .values
        .iter()
        .filter(|v| used.contains(v.name.as_str()))
        .cloned()
        .collect();
    (sub, items.into_iter().map(|x| x.1).collect())
}

/// Lays out scope `gi` (`None`: the top), its open groups first.
fn scope(cx: &Cx<'_>, gi: Option<usize>, budget: &mut usize) -> Result<Part, LayoutError> {
    let defs = &cx.groups.defs;
    let (sub, items) = scope_graph(cx, gi);
    let mut sketch = build::sketch(&sub, cx.shape_of, cx.options.labels);
    let mut opened: HashMap<usize, (usize, Part)> = HashMap::new();
    let mut closed: HashMap<usize, usize> = HashMap::new();
    for b in 0..sketch.boxes.len() {
        let Some(Item::Group(k)) = sketch.boxes[b].node.map(|i| items[i]) else {
            continue;
        };
        if cx.collapsed.contains(defs[k].id.as_str()) {
            let node = sketch.boxes[b].node;
            sketch.boxes[b] = build::group_box(&defs[k].label, &defs[k].id, defs[k].operators);
            sketch.boxes[b].node = node;
            closed.insert(b, k);
        } else {
            let part = scope(cx, Some(k), budget)?;
            // wide enough for its title (`▾ ` and the label, bold 11 px)
            let title =
                (defs[k].label.chars().count() + 2) as f64 * TITLE_CHAR_WIDTH + 2.0 * GROUP_PAD;
            sketch.boxes[b].width = (part.layout.width + 2.0 * GROUP_PAD).max(title);
            sketch.boxes[b].height = part.layout.height + GROUP_HEADER + GROUP_PAD;
            opened.insert(b, (k, part));
        }
    }
    // inside a group, the values crossing its border are small boxes in
    // its first and last layers
    let pins = gi.map(|_| pin_ports(&mut sketch));
    let boxes = sketch.boxes.len();
    if boxes > *budget {
        return Err(LayoutError::TooManyNodes {
            nodes: cx.options.max_nodes.saturating_add(boxes - *budget),
            limit: cx.options.max_nodes,
        });
    }
    *budget -= boxes;
    let docs = Layout::docs_of(&sub, &sketch, cx.options.op_set);
    let mut laid = Layout::of_sketch(sketch, docs, cx.options, pins.as_ref())?;
    for n in &mut laid.nodes {
        n.node = match n.node.map(|i| items[i]) {
            Some(Item::Node(orig)) => Some(orig),
            _ => None,
        };
    }
    Ok(compose(cx, laid, opened, &closed))
}

/// Marks the input and output boxes of `sketch` (a group's inside) as
/// ports, each a box with the value's name; returns which go in the first
/// layer and which in the last.
fn pin_ports(sketch: &mut Sketch) -> (Vec<bool>, Vec<bool>) {
    let mut first = vec![false; sketch.boxes.len()];
    let mut last = vec![false; sketch.boxes.len()];
    for (b, bx) in sketch.boxes.iter_mut().enumerate() {
        match bx.kind {
            NodeKind::Input => first[b] = true,
            NodeKind::Output => last[b] = true,
            _ => continue,
        }
        *bx = build::port_box(&bx.name);
    }
    (first, last)
}

/// The point where an edge leaves (`out`) or enters port box `p`.
fn port_point(p: &LayoutNode, out: bool, direction: Direction) -> (f64, f64) {
    match (direction, out) {
        (Direction::TopToBottom, true) => (p.x + p.width / 2.0, p.y + p.height),
        (Direction::TopToBottom, false) => (p.x + p.width / 2.0, p.y),
        (_, true) => (p.x + p.width, p.y + p.height / 2.0),
        (_, false) => (p.x, p.y + p.height / 2.0),
    }
}

/// A group's frame: left, top, right, bottom.
type Frame = (f64, f64, f64, f64);

/// The points of a cycle's edge (laid out against the flow) that leaves
/// (`out`) or enters an open group's `frame` at its border, re-routed round
/// the frame to `port`, the point of the value's port inside: from the
/// port out of the frame on its own side, along the frame's side that
/// makes the shorter way, [`GROUP_PAD`]` / 2` outside it, to where the
/// edge met the border. `lr`:
/// layers run left to right (the same in exchanged coordinates).
fn round_frame(
    points: &[(f64, f64)],
    frame: Frame,
    port: (f64, f64),
    out: bool,
    lr: bool,
) -> Vec<(f64, f64)> {
    let swap = |p: (f64, f64)| if lr { (p.1, p.0) } else { p };
    let (left, top, right, bottom) = if lr {
        (frame.1, frame.0, frame.3, frame.2)
    } else {
        frame
    };
    let mut pts: Vec<(f64, f64)> = points.iter().map(|&p| swap(p)).collect();
    if out {
        pts.reverse();
    }
    let port = swap(port);
    let Some(&(bx, by)) = pts.last() else {
        return points.to_vec();
    };
    let g = GROUP_PAD / 2.0;
    // a port of entry sits at the inside's top, of exit at its bottom
    let port_side = if out { bottom + g } else { top - g };
    pts.pop();
    let met_top = (by - top).abs() <= (by - bottom).abs();
    let far_side = if met_top { top - g } else { bottom + g };
    pts.push((bx, far_side));
    if (far_side - port_side).abs() > f64::EPSILON {
        // round the side that makes the shorter way from where the edge
        // met the frame to the port (fewer edges of the group crossed)
        let way = |side: f64| (bx - side).abs() + (port.0 - side).abs();
        let side = if way(left - g) <= way(right + g) {
            left - g
        } else {
            right + g
        };
        pts.push((side, far_side));
        pts.push((side, port_side));
    }
    pts.push((port.0, port_side));
    pts.push(port);
    if out {
        pts.reverse();
    }
    pts.into_iter().map(swap).collect()
}

/// The scope's layout with each open group's box replaced by its inside,
/// moved into the box: ids renumbered in order, the edges that reach an
/// open group joined to the port of their value inside it.
fn compose(
    cx: &Cx<'_>,
    laid: Layout,
    mut opened: HashMap<usize, (usize, Part)>,
    closed: &HashMap<usize, usize>,
) -> Part {
    let defs = &cx.groups.defs;
    let mut nodes: Vec<LayoutNode> = Vec::with_capacity(laid.nodes.len());
    let mut groups: Vec<LayoutGroup> = Vec::new();
    let mut edges = Vec::with_capacity(laid.edges.len());
    let mut crossings = laid.crossings;
    let mut folded = laid.folded;
    // per box of this scope: its new id, or (open group) its ports by value
    let mut new_id = vec![usize::MAX; laid.nodes.len()];
    let mut ports: HashMap<usize, HashMap<String, usize>> = HashMap::new();
    // per open group's box: its frame (left, top, right, bottom)
    let mut frames: HashMap<usize, Frame> = HashMap::new();
    for mut n in laid.nodes {
        let b = n.id;
        if let Some((k, part)) = opened.remove(&b) {
            frames.insert(b, (n.x, n.y, n.x + n.width, n.y + n.height));
            let own = groups.len();
            groups.push(LayoutGroup::open(&defs[k], &n));
            // centred across the frame (wider than its inside for a long title)
            let (dx, dy) = (
                n.x + (n.width - part.layout.width) / 2.0,
                n.y + GROUP_HEADER,
            );
            let (base_id, base_group) = (nodes.len(), groups.len());
            for mut cg in part.groups {
                cg.x += dx;
                cg.y += dy;
                cg.parent = Some(cg.parent.map_or(own, |p| p + base_group));
                cg.node = cg.node.map(|i| i + base_id);
                groups.push(cg);
            }
            let mut by_value = HashMap::new();
            for mut cn in part.layout.nodes {
                cn.id += base_id;
                cn.x += dx;
                cn.y += dy;
                cn.group = Some(cn.group.map_or(own, |p| p + base_group));
                if cn.kind == NodeKind::Port && cn.group == Some(own) {
                    by_value.insert(cn.name.clone(), cn.id);
                }
                nodes.push(cn);
            }
            for mut ce in part.layout.edges {
                ce.from += base_id;
                ce.to += base_id;
                for p in &mut ce.points {
                    p.0 += dx;
                    p.1 += dy;
                }
                edges.push(ce);
            }
            crossings += part.layout.crossings;
            folded += part.layout.folded;
            ports.insert(b, by_value);
        } else {
            new_id[b] = nodes.len();
            n.id = nodes.len();
            if let Some(&k) = closed.get(&b) {
                groups.push(LayoutGroup::closed(&defs[k], &n));
            }
            nodes.push(n);
        }
    }
    let direction = cx.options.direction;
    for mut e in laid.edges {
        let from = match ports.get(&e.from) {
            Some(p) => p.get(&e.tensor).copied(),
            None => Some(new_id[e.from]),
        };
        let to = match ports.get(&e.to) {
            Some(p) => p.get(&e.tensor).copied(),
            None => Some(new_id[e.to]),
        };
        let (Some(from), Some(to)) = (from, to) else {
            continue;
        };
        // joined to the port inside; one laid out against the flow (a
        // cycle) leaves or enters the group's frame on the far side, so it
        // goes round the frame to the port
        let lr = direction == Direction::LeftToRight;
        if let Some(&frame) = frames.get(&e.from) {
            let port = port_point(&nodes[from], true, direction);
            if e.reversed {
                e.points = round_frame(&e.points, frame, port, true, lr);
            } else {
                e.points.insert(0, port);
            }
        }
        if let Some(&frame) = frames.get(&e.to) {
            let port = port_point(&nodes[to], false, direction);
            if e.reversed {
                e.points = round_frame(&e.points, frame, port, false, lr);
            } else {
                e.points.push(port);
            }
        }
        e.from = from;
        e.to = to;
        edges.push(e);
    }
    Part {
        layout: Layout {
            nodes,
            edges,
            groups: Vec::new(),
            folded,
            crossings,
            ..laid
        },
        groups,
    }
}
