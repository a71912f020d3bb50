//! The boxes and edges drawn for a graph: operators, with the weights and
//! constants they read folded in, and a box per graph input and output.

use std::collections::{HashMap, HashSet};

use super::{Family, LabelLine, Labels, LineStyle, NodeKind, ShapeLookup};
use crate::graph::{Attribute, Graph};

/// Folded weights listed in a box; the rest are counted.
const MAX_WEIGHT_LINES: usize = 4;
/// Attributes listed in a box ([`Labels::attributes`]).
const MAX_ATTRIBUTE_LINES: usize = 4;
/// Longest attribute value shown, in characters (longer ones are left to
/// the details).
const MAX_ATTRIBUTE_CHARS: usize = 24;
/// Most list items an attribute value shows.
const MAX_ATTRIBUTE_ITEMS: usize = 8;
/// Longest name line, in characters.
const MAX_NAME_CHARS: usize = 40;
/// Longest weight name, in characters.
const MAX_WEIGHT_CHARS: usize = 24;
/// Width of a character of a name line (11 px sans-serif, on average).
pub(crate) const CHAR_WIDTH: f64 = 6.6;
/// Width of a character of the operator line (bold 12 px sans-serif).
const OP_CHAR_WIDTH: f64 = 7.6;
/// Width of a character of a weight line (10 px monospace).
const WEIGHT_CHAR_WIDTH: f64 = 6.1;
/// Height of a label line.
pub(crate) const LINE_HEIGHT: f64 = 13.0;
/// Space around the label inside a box.
const PADDING_X: f64 = 14.0;
const PADDING_Y: f64 = 8.0;
const MIN_WIDTH: f64 = 70.0;

/// A box before layout.
pub(crate) struct SketchBox {
    pub kind: NodeKind,
    /// The graph node drawn (its index in `Graph::nodes`); none for ports.
    pub node: Option<usize>,
    pub op: String,
    pub name: String,
    pub label: Vec<LabelLine>,
    pub width: f64,
    pub height: f64,
}

/// An edge before layout (never a self-loop).
pub(crate) struct SketchEdge {
    pub from: usize,
    pub to: usize,
    pub tensor: String,
}

/// Boxes and edges of one graph.
pub(crate) struct Sketch {
    pub boxes: Vec<SketchBox>,
    pub edges: Vec<SketchEdge>,
    pub folded: usize,
}

fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut t: String = s.chars().take(max.saturating_sub(2)).collect();
    t.push('…');
    t
}

fn shape_text(shape: Option<&[i64]>) -> String {
    match shape {
        Some(s) => s
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join("×"),
        None => "?".to_string(),
    }
}

fn line(text: String, style: LineStyle) -> LabelLine {
    LabelLine { text, style }
}

fn sized(kind: NodeKind, op: &str, name: &str, label: Vec<LabelLine>) -> SketchBox {
    // each line's width by its style's font (the page's and the SVG's)
    let longest = label
        .iter()
        .map(|l| {
            let per_char = match l.style {
                LineStyle::Op => OP_CHAR_WIDTH,
                LineStyle::Name => CHAR_WIDTH,
                LineStyle::Weight | LineStyle::Attribute => WEIGHT_CHAR_WIDTH,
            };
            l.text.chars().count() as f64 * per_char
        })
        .fold(0.0, f64::max);
    SketchBox {
        kind,
        node: None,
        op: op.to_string(),
        name: name.to_string(),
        width: (longest + PADDING_X).max(MIN_WIDTH),
        height: PADDING_Y + label.len() as f64 * LINE_HEIGHT,
        label,
    }
}

/// A box for a graph input or output named `value`, of shape `shape`
/// (as text).
fn port(kind: NodeKind, value: &str, shape: Option<String>) -> SketchBox {
    let op = kind.as_str();
    let mut label = vec![line(op.to_string(), LineStyle::Op)];
    label.push(line(shorten(value, MAX_NAME_CHARS), LineStyle::Name));
    if let Some(s) = shape {
        label.push(line(s, LineStyle::Weight));
    }
    sized(kind, op, value, label)
}

/// Whether node `n` is a constant drawn inside the boxes that read it: a
/// stored constant (`<const>`) not fed from outside, or an ONNX `Constant`
/// (no inputs) whose every output is read by some node and is neither a
/// graph input nor a graph output (those keep their box, so that the
/// output's edge has a writer).
fn folds(
    n: &crate::graph::Node,
    inputs: &HashSet<&str>,
    outputs: &HashSet<&str>,
    read: &HashSet<&str>,
) -> bool {
    let fed = n.outputs.iter().any(|o| inputs.contains(o.as_str()));
    match n.op.as_str() {
        "<const>" => !fed,
        "Constant" => {
            n.inputs.is_empty()
                && !n.outputs.is_empty()
                && !fed
                && n.outputs
                    .iter()
                    .all(|o| read.contains(o.as_str()) && !outputs.contains(o.as_str()))
        }
        _ => false,
    }
}

/// A number as short text: an `f32` stored as `f64` by its shortest
/// `f32` digits (`0.1`, not `0.10000000149011612`).
fn number(v: f64) -> String {
    let f = v as f32;
    if f64::from(f) == v {
        format!("{f}")
    } else {
        format!("{v}")
    }
}

/// A list's items as `a,b,c`; `None` past [`MAX_ATTRIBUTE_ITEMS`].
fn items<T>(v: &[T], text: impl Fn(&T) -> String) -> Option<String> {
    (v.len() <= MAX_ATTRIBUTE_ITEMS).then(|| v.iter().map(text).collect::<Vec<_>>().join(","))
}

/// An attribute's value as short text, `None` for one that is not short
/// (tensors, messages, long texts and lists, empty ones).
fn attribute_text(a: &Attribute) -> Option<String> {
    let text = match a {
        Attribute::Int(v) => v.to_string(),
        Attribute::Float(v) => number(*v),
        Attribute::Bool(v) => v.to_string(),
        Attribute::String(v) => v.clone(),
        Attribute::Ints(v) => items(v, i64::to_string)?,
        Attribute::Floats(v) => items(v, |x| number(*x))?,
        Attribute::Bools(v) => items(v, bool::to_string)?,
        Attribute::Strings(v) => items(v, String::clone)?,
        _ => return None,
    };
    let short = !text.is_empty()
        && text.chars().count() <= MAX_ATTRIBUTE_CHARS
        && !text.contains(['\n', '\r']);
    short.then_some(text)
}

/// Up to [`MAX_ATTRIBUTE_LINES`] lines `key = value` of node `n`'s
/// attributes with short values, the most telling for its operator's
/// family first ([`Family::telling_attributes`]), the others in stored
/// order (internal `#` fields, ONNX's `domain` and `auto_pad = NOTSET`
/// left out).
fn attribute_lines(n: &crate::graph::Node) -> impl Iterator<Item = LabelLine> + '_ {
    let telling: Vec<&str> = Family::of(NodeKind::Op, &n.op)
        .telling_attributes()
        .collect();
    // how telling attribute `key` is (lower is more): its place in the
    // family's list, after them the others
    let rank = |key: &str| {
        telling
            .iter()
            .position(|t| key.eq_ignore_ascii_case(t))
            .unwrap_or(telling.len())
    };
    let mut shown: Vec<(usize, &String, String)> = n
        .attributes
        .iter()
        .filter(|(k, _)| !k.starts_with('#') && k.as_str() != "domain")
        .filter_map(|(k, a)| {
            let v = attribute_text(a)?;
            let unset = k == "auto_pad" && v == "NOTSET";
            (!unset).then(|| (rank(k), k, v))
        })
        .collect();
    // stable: attributes equally telling keep their stored order
    shown.sort_by_key(|(rank, _, _)| *rank);
    shown
        .into_iter()
        .take(MAX_ATTRIBUTE_LINES)
        .map(|(_, k, v)| {
            let text = format!("{} = {v}", shorten(k, MAX_WEIGHT_CHARS));
            line(text, LineStyle::Attribute)
        })
}

/// A port of a group's inside: a value entering or leaving it, by name.
pub(crate) fn port_box(value: &str) -> SketchBox {
    let label = vec![line(shorten(value, MAX_NAME_CHARS), LineStyle::Name)];
    sized(NodeKind::Port, "port", value, label)
}

/// A closed group: its title and how many operators it holds.
pub(crate) fn group_box(title: &str, id: &str, operators: usize) -> SketchBox {
    let n = if operators == 1 {
        "operator"
    } else {
        "operators"
    };
    let label = vec![
        line(shorten(title, MAX_NAME_CHARS), LineStyle::Op),
        line(format!("{operators} {n} (closed)"), LineStyle::Name),
    ];
    sized(NodeKind::Group, "group", id, label)
}

/// The boxes and edges of `g`, operators labelled as `labels` says.
pub(crate) fn sketch(g: &Graph, shape_of: ShapeLookup<'_>, labels: Labels) -> Sketch {
    let values: HashMap<&str, &crate::graph::ValueInfo> =
        g.values.iter().map(|v| (v.name.as_str(), v)).collect();
    let inputs: HashSet<&str> = g.inputs.iter().map(String::as_str).collect();
    let shape = |name: &str| -> Option<Vec<i64>> {
        let v = values.get(name);
        if let Some(s) = v.and_then(|v| v.shape.clone()) {
            return Some(s);
        }
        let tensor = v.and_then(|v| v.tensor.as_deref()).unwrap_or(name);
        shape_of(tensor).or_else(|| shape_of(name))
    };
    // a port's shape, open dimensions by the names the file gives them
    let port_shape = |name: &str| -> Option<String> {
        values
            .get(name)
            .and_then(|v| v.shape_text())
            .or_else(|| shape(name).map(|s| shape_text(Some(&s))))
    };
    let stored =
        |name: &str| !inputs.contains(name) && values.get(name).is_some_and(|v| v.kind.is_stored());
    let mut boxes = Vec::new();
    let mut producer: HashMap<&str, usize> = HashMap::new();
    for name in &g.inputs {
        if producer.contains_key(name.as_str()) {
            continue;
        }
        producer.insert(name, boxes.len());
        boxes.push(port(NodeKind::Input, name, port_shape(name)));
    }
    // constants not fed from outside are drawn inside their users
    let read: HashSet<&str> = g
        .nodes
        .iter()
        .flat_map(|n| n.inputs.iter().map(String::as_str))
        .collect();
    let outputs: HashSet<&str> = g.outputs.iter().map(String::as_str).collect();
    let mut folded_values: HashSet<&str> = HashSet::new();
    let mut fold_node = vec![false; g.nodes.len()];
    for (index, n) in g.nodes.iter().enumerate() {
        if folds(n, &inputs, &outputs, &read) {
            folded_values.extend(n.outputs.iter().map(String::as_str));
            fold_node[index] = true;
        }
    }
    let folded = fold_node.iter().filter(|f| **f).count();
    // (box, value) pairs read by each box, resolved once every box exists
    let mut reads: Vec<(usize, &str)> = Vec::new();
    for (index, n) in g.nodes.iter().enumerate() {
        if fold_node[index] {
            continue;
        }
        // a TenniS input placeholder already drawn as an input box
        if n.op == "<param>" && n.outputs.iter().all(|o| producer.contains_key(o.as_str())) {
            continue;
        }
        let id = boxes.len();
        let mut label = vec![line(shorten(&n.op, MAX_NAME_CHARS), LineStyle::Op)];
        if labels.names && !n.name.is_empty() && n.name != n.op {
            label.push(line(shorten(&n.name, MAX_NAME_CHARS), LineStyle::Name));
        }
        let mut weights = 0;
        for i in &n.inputs {
            if folded_values.contains(i.as_str()) || stored(i) {
                weights += 1;
                if labels.weights && weights <= MAX_WEIGHT_LINES {
                    let short = i.rsplit('/').next().unwrap_or(i);
                    let text = format!(
                        "{} ⟨{}⟩",
                        shorten(short, MAX_WEIGHT_CHARS),
                        shape_text(shape(i).as_deref())
                    );
                    label.push(line(text, LineStyle::Weight));
                }
            } else {
                reads.push((id, i));
            }
        }
        if labels.weights && weights > MAX_WEIGHT_LINES {
            let more = format!("+{} more", weights - MAX_WEIGHT_LINES);
            label.push(line(more, LineStyle::Weight));
        }
        if labels.attributes {
            label.extend(attribute_lines(n));
        }
        let mut b = sized(NodeKind::Op, &n.op, &n.name, label);
        b.node = Some(index);
        boxes.push(b);
        for o in &n.outputs {
            producer.entry(o).or_insert(id);
        }
    }
    for name in &g.outputs {
        let id = boxes.len();
        boxes.push(port(NodeKind::Output, name, port_shape(name)));
        reads.push((id, name));
    }
    let edges = reads
        .into_iter()
        .filter_map(|(to, value)| {
            let from = *producer.get(value)?;
            (from != to).then(|| SketchEdge {
                from,
                to,
                tensor: value.to_string(),
            })
        })
        .collect();
    Sketch {
        boxes,
        edges,
        folded,
    }
}
