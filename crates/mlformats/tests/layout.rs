//! The layered layout (`mlformats::layout`) on generated graphs (a 10,000
//! node chain, residual blocks with skips and a Split→Concat bypass, a
//! recurrent cycle) and on every graph of testdata/: every edge drawn from
//! border to border, no segment through a box other than the two it joins,
//! no two boxes overlapping, and the JSON's shape.

use mlformats::graph::{Graph, Node, ValueInfo, ValueKind};
use mlformats::layout::{
    Direction, FAMILIES, Family, GroupKind, Layout, LayoutError, LayoutOptions, NodeKind, OpSet,
};

/// Slack at box borders: an edge may touch the boxes' border lines.
const EPS: f64 = 0.01;

/// Whether segment p-q runs through the inside of box (x0, y0, x1, y1)
/// (Liang-Barsky clipping against the box shrunk by `EPS`).
fn segment_hits(p: (f64, f64), q: (f64, f64), b: (f64, f64, f64, f64)) -> bool {
    let (x0, y0, x1, y1) = (b.0 + EPS, b.1 + EPS, b.2 - EPS, b.3 - EPS);
    let (dx, dy) = (q.0 - p.0, q.1 - p.1);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (pp, qq) in [
        (-dx, p.0 - x0),
        (dx, x1 - p.0),
        (-dy, p.1 - y0),
        (dy, y1 - p.1),
    ] {
        if pp == 0.0 {
            if qq < 0.0 {
                return false;
            }
        } else {
            let t = qq / pp;
            if pp < 0.0 {
                t0 = t0.max(t);
            } else {
                t1 = t1.min(t);
            }
            if t0 > t1 {
                return false;
            }
        }
    }
    t1 - t0 > 1e-9
}

#[test]
fn segment_checker_sees_crossings() {
    let b = (0.0, 0.0, 10.0, 10.0);
    assert!(segment_hits((-5.0, 5.0), (15.0, 5.0), b));
    assert!(segment_hits((5.0, -5.0), (5.0, 5.0), b));
    assert!(
        !segment_hits((-5.0, 0.0), (15.0, 0.0), b),
        "along the border"
    );
    assert!(!segment_hits((11.0, -5.0), (11.0, 15.0), b));
    assert!(!segment_hits((-5.0, 5.0), (5.0, -6.0), b));
}

/// Every check of a good layered drawing; returns the number of segments.
fn check(l: &Layout, what: &str) -> usize {
    // every point of every edge in the frame
    for (k, e) in l.edges.iter().enumerate() {
        for p in &e.points {
            let inside =
                p.0 >= -EPS && p.1 >= -EPS && p.0 <= l.width + EPS && p.1 <= l.height + EPS;
            assert!(inside, "{what}: edge {k} at {p:?}, out of the frame");
        }
    }
    if !l.groups.is_empty() {
        return check_grouped(l, what);
    }
    // boxes: inside the frame, one layer band each, no overlaps in a layer
    let mut by_layer: Vec<Vec<usize>> = vec![Vec::new(); l.layers];
    for (i, n) in l.nodes.iter().enumerate() {
        assert_eq!(n.id, i, "{what}");
        assert!(n.width > 0.0 && n.height > 0.0, "{what}: node {i}");
        assert!(
            n.x >= -EPS && n.y >= -EPS,
            "{what}: node {i} at {},{}",
            n.x,
            n.y
        );
        assert!(n.x + n.width <= l.width + EPS && n.y + n.height <= l.height + EPS);
        by_layer[n.layer].push(i);
    }
    let mut band_bottom = f64::NEG_INFINITY;
    let mut bands = Vec::new();
    for (k, layer) in by_layer.iter_mut().enumerate() {
        assert!(!layer.is_empty(), "{what}: layer {k} has no box");
        layer.sort_by(|a, b| l.nodes[*a].x.total_cmp(&l.nodes[*b].x));
        for w in layer.windows(2) {
            let (a, b) = (&l.nodes[w[0]], &l.nodes[w[1]]);
            assert!(
                a.x + a.width < b.x,
                "{what}: boxes {} and {} overlap",
                a.id,
                b.id
            );
        }
        let top = layer
            .iter()
            .map(|&i| l.nodes[i].y)
            .fold(f64::INFINITY, f64::min);
        let bottom = layer
            .iter()
            .map(|&i| l.nodes[i].y + l.nodes[i].height)
            .fold(f64::NEG_INFINITY, f64::max);
        assert!(
            top > band_bottom,
            "{what}: layer {k} overlaps the one above"
        );
        band_bottom = bottom;
        bands.push((top, bottom));
    }
    let rect = |i: usize| {
        let n = &l.nodes[i];
        (n.x, n.y, n.x + n.width, n.y + n.height)
    };
    let on_border = |p: (f64, f64), i: usize| {
        let (x0, y0, x1, y1) = rect(i);
        p.0 >= x0 - EPS && p.0 <= x1 + EPS && ((p.1 - y0).abs() < EPS || (p.1 - y1).abs() < EPS)
    };
    let mut segments = 0;
    for (k, e) in l.edges.iter().enumerate() {
        assert!(e.points.len() >= 2, "{what}: edge {k} not drawn");
        assert_ne!(e.from, e.to);
        assert!(
            on_border(e.points[0], e.from),
            "{what}: edge {k} starts off its box"
        );
        assert!(
            on_border(e.points[e.points.len() - 1], e.to),
            "{what}: edge {k} ends off its box"
        );
        for s in e.points.windows(2) {
            segments += 1;
            let (lo, hi) = (s[0].1.min(s[1].1), s[0].1.max(s[1].1));
            // only the layers whose band meets the segment's height
            let first = bands.partition_point(|b| b.1 < lo);
            for (layer, band) in by_layer.iter().zip(&bands).skip(first) {
                if band.0 > hi {
                    break;
                }
                for &i in layer {
                    if i != e.from && i != e.to {
                        assert!(
                            !segment_hits(s[0], s[1], rect(i)),
                            "{what}: edge {k} ({} -> {}, {}) runs through box {i} ({})",
                            e.from,
                            e.to,
                            e.tensor,
                            l.nodes[i].op
                        );
                    }
                }
            }
        }
    }
    segments
}

/// The checks of [`check`] for a drawing with groups: in each scope (the
/// top, each open group's inside) the boxes keep to their layers without
/// overlapping; each open group's frame holds its boxes and the frames
/// inside it, and no box or frame of another scope meets it; every edge
/// starts and ends on its boxes' borders (or, laid out against the flow,
/// on the frame of the group around its box) and runs through no box and
/// no frame that holds neither of its ends.
fn check_grouped(l: &Layout, what: &str) -> usize {
    let rect = |i: usize| {
        let n = &l.nodes[i];
        (n.x, n.y, n.x + n.width, n.y + n.height)
    };
    let frame = |k: usize| {
        let g = &l.groups[k];
        (g.x, g.y, g.x + g.width, g.y + g.height)
    };
    let meets = |a: (f64, f64, f64, f64), b: (f64, f64, f64, f64)| {
        a.0 < b.2 - EPS && b.0 < a.2 - EPS && a.1 < b.3 - EPS && b.1 < a.3 - EPS
    };
    let holds = |a: (f64, f64, f64, f64), b: (f64, f64, f64, f64)| {
        a.0 <= b.0 + EPS && a.1 <= b.1 + EPS && b.2 <= a.2 + EPS && b.3 <= a.3 + EPS
    };
    // whether group `k` is `inner` or holds it
    let around = |k: usize, inner: Option<usize>| {
        let mut at = inner;
        while let Some(g) = at {
            if g == k {
                return true;
            }
            at = l.groups[g].parent;
        }
        false
    };
    for (k, g) in l.groups.iter().enumerate() {
        assert!(
            g.parent.is_none_or(|p| p < k),
            "{what}: group {k} before its parent"
        );
        if g.collapsed {
            let b = g.node.expect("a closed group has its box");
            // a closed subgraph is its node's own box
            let kind = if g.kind == GroupKind::Subgraph {
                NodeKind::Op
            } else {
                NodeKind::Group
            };
            assert_eq!(l.nodes[b].kind, kind, "{what}");
            assert_eq!(l.nodes[b].group, g.parent, "{what}");
            continue;
        }
        assert!(g.node.is_none() && g.operators > 0, "{what}: group {k}");
        if let Some(p) = g.parent {
            assert!(
                holds(frame(p), frame(k)),
                "{what}: group {k} outside its parent"
            );
        }
    }
    for (i, n) in l.nodes.iter().enumerate() {
        assert_eq!(n.id, i, "{what}");
        assert!(n.width > 0.0 && n.height > 0.0, "{what}: node {i}");
        for (k, g) in l.groups.iter().enumerate().filter(|(_, g)| !g.collapsed) {
            if around(k, n.group) {
                assert!(
                    holds(frame(k), rect(i)),
                    "{what}: box {i} outside group {k}"
                );
            } else {
                assert!(
                    !meets(frame(k), rect(i)),
                    "{what}: box {i} meets group {k} ({})",
                    g.id
                );
            }
        }
        for j in 0..i {
            assert!(
                !meets(rect(i), rect(j)),
                "{what}: boxes {i} and {j} overlap"
            );
        }
        // one scope's layers run down in order
        for (j, m) in l.nodes.iter().enumerate().take(i) {
            if m.group == n.group && m.layer < n.layer {
                assert!(
                    rect(j).3 < rect(i).1,
                    "{what}: box {i} (layer {}) not below box {j}",
                    n.layer
                );
            }
        }
    }
    let on_border = |p: (f64, f64), r: (f64, f64, f64, f64)| {
        p.0 >= r.0 - EPS && p.0 <= r.2 + EPS && ((p.1 - r.1).abs() < EPS || (p.1 - r.3).abs() < EPS)
    };
    let ends_on = |p: (f64, f64), i: usize, _reversed: bool| on_border(p, rect(i));
    let mut segments = 0;
    for (k, e) in l.edges.iter().enumerate() {
        assert!(e.points.len() >= 2, "{what}: edge {k} not drawn");
        assert_ne!(e.from, e.to);
        assert!(
            ends_on(e.points[0], e.from, e.reversed),
            "{what}: edge {k} starts off its box"
        );
        assert!(
            ends_on(e.points[e.points.len() - 1], e.to, e.reversed),
            "{what}: edge {k} ends off its box"
        );
        for s in e.points.windows(2) {
            segments += 1;
            for i in (0..l.nodes.len()).filter(|&i| i != e.from && i != e.to) {
                assert!(
                    !segment_hits(s[0], s[1], rect(i)),
                    "{what}: edge {k} ({} -> {}, {}) runs through box {i} ({})",
                    e.from,
                    e.to,
                    e.tensor,
                    l.nodes[i].op
                );
            }
            for (g, gr) in l.groups.iter().enumerate().filter(|(_, g)| !g.collapsed) {
                if !around(g, l.nodes[e.from].group) && !around(g, l.nodes[e.to].group) {
                    assert!(
                        !segment_hits(s[0], s[1], frame(g)),
                        "{what}: edge {k} ({}) runs through group {}",
                        e.tensor,
                        gr.id
                    );
                }
            }
        }
    }
    segments
}

/// The JSON document's shape (docs/LAYOUT_JSON.md).
fn check_json(l: &Layout) {
    let j = l.to_json();
    assert_eq!(j["format"], "mlformats-layout");
    assert_eq!(j["anchor"], "top-left");
    let nodes = j["nodes"].as_array().unwrap();
    let edges = j["edges"].as_array().unwrap();
    assert_eq!(nodes.len(), l.nodes.len());
    assert_eq!(edges.len(), l.edges.len());
    for (n, want) in nodes.iter().zip(&l.nodes) {
        assert_eq!(n["id"], want.id);
        assert_eq!(n["op"], want.op.as_str());
        assert_eq!(n["kind"], want.kind.as_str());
        assert!(
            n["label"]
                .as_str()
                .unwrap()
                .starts_with(&want.label[0].text)
        );
        for k in ["x", "y", "width", "height"] {
            assert!(n[k].as_f64().is_some(), "{k}");
        }
        // the graph node drawn, its family and the family's colours
        assert_eq!(n["node"], serde_json::json!(want.node));
        // (a body's nodes are operators of no node of the graph)
        assert!(want.node.is_none() || want.kind == NodeKind::Op);
        assert_eq!(n["family"], want.family.as_str());
        assert_eq!(n["fill"], want.family.colors().0);
        assert_eq!(n["stroke"], want.family.colors().1);
        let styles = n["label_styles"].as_array().unwrap();
        assert_eq!(styles.len(), want.label.len());
        // a port of a group's inside is the value's name alone
        let first = if want.kind == NodeKind::Port {
            "name"
        } else {
            "op"
        };
        assert_eq!(styles[0], first);
        assert_eq!(n["group"], serde_json::json!(want.group));
    }
    let groups = j["groups"].as_array().unwrap();
    assert_eq!(groups.len(), l.groups.len());
    for (g, want) in groups.iter().zip(&l.groups) {
        assert_eq!(g["id"], want.id.as_str());
        assert_eq!(g["label"], want.label.as_str());
        assert_eq!(g["kind"], want.kind.as_str());
        assert_eq!(g["parent"], serde_json::json!(want.parent));
        assert_eq!(g["collapsed"], want.collapsed);
        assert_eq!(g["node"], serde_json::json!(want.node));
        assert_eq!(g["operators"], want.operators);
    }
    for (e, want) in edges.iter().zip(&l.edges) {
        assert_eq!(e["from"], want.from);
        assert_eq!(e["to"], want.to);
        assert_eq!(e["tensor"], want.tensor.as_str());
        let pts = e["points"].as_array().unwrap();
        assert_eq!(pts.len(), want.points.len());
        assert_eq!(pts[0].as_array().unwrap().len(), 2);
    }
}

fn chain(n: usize) -> Graph {
    let mut g = Graph::new("chain");
    for i in 0..n {
        let op = ["Relu", "Convolution", "BatchNormalization"][i % 3];
        g.nodes.push(Node::new(
            op,
            format!("layer{i}"),
            [format!("x{i}")],
            [format!("x{}", i + 1)],
        ));
    }
    g.infer_inputs_outputs();
    g
}

#[test]
fn a_chain_of_10000_is_one_straight_column() {
    let g = chain(10_000);
    let l = Layout::of_graph(&g, &LayoutOptions::default()).unwrap();
    assert_eq!(l.nodes.len(), 10_002, "input, 10,000 nodes, output");
    assert_eq!(l.edges.len(), 10_001);
    assert_eq!(l.layers, 10_002);
    assert_eq!(l.crossings, 0);
    check(&l, "chain");
    check_json(&l);
    let centre = |i: usize| l.nodes[i].x + l.nodes[i].width / 2.0;
    for i in 1..l.nodes.len() {
        assert!(
            (centre(i) - centre(0)).abs() < 0.5,
            "node {i} off the column"
        );
    }
    // every edge a single vertical segment between consecutive boxes
    assert!(l.edges.iter().all(|e| e.points.len() == 2));
    assert!(l.to_svg().matches("<polyline").count() == 10_001);
}

/// Residual blocks (Conv→BN→ReLU→Conv→Add with the block's input), every
/// third block a Split into three branches of different lengths joined by
/// Concat, every fifth block a value read four blocks later (a long skip),
/// and a recurrent edge back to the first block.
fn resnet(blocks: usize) -> Graph {
    let mut g = Graph::new("resnet");
    let mut x = "input".to_string();
    let node = |g: &mut Graph, op: &str, name: String, ins: Vec<String>, out: String| {
        g.nodes.push(Node::new(op, name, ins, [out]));
    };
    g.values.push(ValueInfo::new("state", ValueKind::Buffer));
    node(
        &mut g,
        "Add",
        "recur".into(),
        vec![x.clone(), "state".into()],
        "x0".into(),
    );
    x = "x0".into();
    let mut history = vec![x.clone()];
    for b in 0..blocks {
        let p = format!("b{b}");
        let w = format!("{p}/conv1/W");
        g.values
            .push(ValueInfo::new(&w, ValueKind::Weight).with_shape(vec![64, 64, 3, 3]));
        node(
            &mut g,
            "Convolution",
            format!("{p}/conv1"),
            vec![x.clone(), w],
            format!("{p}/c1"),
        );
        node(
            &mut g,
            "BatchNormalization",
            format!("{p}/bn"),
            vec![format!("{p}/c1")],
            format!("{p}/n"),
        );
        node(
            &mut g,
            "ReLU",
            format!("{p}/relu"),
            vec![format!("{p}/n")],
            format!("{p}/r"),
        );
        node(
            &mut g,
            "Convolution",
            format!("{p}/conv2"),
            vec![format!("{p}/r")],
            format!("{p}/c2"),
        );
        let mut ins = vec![x.clone(), format!("{p}/c2")];
        if b % 5 == 4 {
            ins.push(history[b - 4].clone());
        }
        node(&mut g, "Add", format!("{p}/add"), ins, format!("{p}/y"));
        x = format!("{p}/y");
        if b % 3 == 2 {
            g.nodes.push(Node::new(
                "Split",
                format!("{p}/split"),
                [x.clone()],
                [format!("{p}/s0"), format!("{p}/s1"), format!("{p}/s2")],
            ));
            node(
                &mut g,
                "ReLU",
                format!("{p}/a"),
                vec![format!("{p}/s1")],
                format!("{p}/a1"),
            );
            node(
                &mut g,
                "ReLU",
                format!("{p}/b"),
                vec![format!("{p}/s2")],
                format!("{p}/b1"),
            );
            node(
                &mut g,
                "ReLU",
                format!("{p}/b2"),
                vec![format!("{p}/b1")],
                format!("{p}/b3"),
            );
            let ins = vec![format!("{p}/s0"), format!("{p}/a1"), format!("{p}/b3")];
            node(
                &mut g,
                "Concatenate",
                format!("{p}/cat"),
                ins,
                format!("{p}/z"),
            );
            x = format!("{p}/z");
        }
        history.push(x.clone());
    }
    node(
        &mut g,
        "Identity",
        "state_out".into(),
        vec![x.clone()],
        "state".into(),
    );
    node(&mut g, "Affine", "head".into(), vec![x], "logits".into());
    g.inputs = vec!["input".into()];
    g.outputs = vec!["logits".into()];
    g
}

#[test]
fn residual_blocks_skips_bypasses_and_a_cycle() {
    let g = resnet(40);
    let l = Layout::of_graph(&g, &LayoutOptions::default()).unwrap();
    let segments = check(&l, "resnet");
    check_json(&l);
    // every node of the graph is a box (plus the input and output)
    assert_eq!(l.nodes.len(), g.nodes.len() + 2);
    let read: usize = g
        .nodes
        .iter()
        .flat_map(|n| &n.inputs)
        .filter(|i| !i.ends_with("/W"))
        .count();
    assert_eq!(
        l.edges.len(),
        read + 1,
        "every value read is an edge, and the output's"
    );
    // the recurrent edge is laid out upwards, its points reversed
    let back: Vec<_> = l.edges.iter().filter(|e| e.reversed).collect();
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].tensor, "state");
    let (first, last) = (back[0].points[0], back[0].points[back[0].points.len() - 1]);
    assert!(first.1 > last.1, "drawn from the bottom up");
    // weights are folded into their convolutions
    assert!(
        l.nodes
            .iter()
            .any(|n| n.label.iter().any(|t| t.text == "W ⟨64×64×3×3⟩"))
    );
    assert!(
        segments > l.edges.len(),
        "long edges bend through their columns"
    );
    // a planar graph: the sweeps find a drawing without crossings
    assert_eq!(l.crossings, 0);
}

/// The layout with its axes exchanged (x for y, width for height), so that
/// a left-to-right drawing can be checked as a top-to-bottom one.
fn transposed(l: &Layout) -> Layout {
    let mut t = l.clone();
    (t.width, t.height) = (l.height, l.width);
    for n in &mut t.nodes {
        (n.x, n.y, n.width, n.height) = (n.y, n.x, n.height, n.width);
    }
    for e in &mut t.edges {
        for p in &mut e.points {
            *p = (p.1, p.0);
        }
    }
    for g in &mut t.groups {
        (g.x, g.y, g.width, g.height) = (g.y, g.x, g.height, g.width);
    }
    t
}

/// Left to right: the residual networks' layers run along x, boxes keep
/// their sizes, and no edge runs through a box (checked on the transposed
/// drawing with every check of `check`, and directly on every segment
/// against every box, as `layout_check.py` does).
#[test]
fn left_to_right_residual_networks_have_no_edge_through_a_box() {
    let mut lr = LayoutOptions::default();
    lr.direction = Direction::LeftToRight;
    for blocks in [3, 12, 40] {
        let g = resnet(blocks);
        let tb = Layout::of_graph(&g, &LayoutOptions::default()).unwrap();
        let l = Layout::of_graph(&g, &lr).unwrap();
        let what = format!("resnet {blocks} lr");
        assert_eq!(l.direction, Direction::LeftToRight);
        assert_eq!(l.to_json()["direction"], "lr");
        assert_eq!(
            (l.nodes.len(), l.edges.len()),
            (tb.nodes.len(), tb.edges.len())
        );
        for (a, b) in l.nodes.iter().zip(&tb.nodes) {
            assert_eq!((a.width, a.height, a.layer), (b.width, b.height, b.layer));
        }
        check(&transposed(&l), &what);
        let mut through = 0;
        for e in &l.edges {
            for s in e.points.windows(2) {
                for n in &l.nodes {
                    if n.id != e.from && n.id != e.to {
                        let b = (n.x, n.y, n.x + n.width, n.y + n.height);
                        through += usize::from(segment_hits(s[0], s[1], b));
                    }
                }
            }
        }
        assert_eq!(through, 0, "{what}");
        // layers from left to right: every box of a deeper layer lies right
        // of every box of the layer before; the drawing is wider than tall
        for a in &l.nodes {
            for b in l.nodes.iter().filter(|b| b.layer == a.layer + 1) {
                assert!(a.x + a.width < b.x, "{what}: {} / {}", a.id, b.id);
            }
        }
        assert!(l.width > l.height && tb.height > tb.width, "{what}");
        let svg = l.to_svg();
        assert_eq!(svg.matches("<polyline").count(), l.edges.len());
    }
}

/// Boxes link to their operators' reference: ONNX operators of the default
/// domain, NNabla functions by their Python name; none for other domains,
/// TenniS, inputs and outputs, or an unknown operator set.
#[test]
fn boxes_link_to_their_operators_documentation() {
    let onnx = |domain: Option<&str>| {
        let mut g = Graph::new("g");
        g.values.push(ValueInfo::new("w", ValueKind::Weight));
        let mut conv = Node::new("Conv", "conv", ["x", "w"], ["y"]);
        if let Some(d) = domain {
            conv = conv.with_attribute("domain", mlformats::graph::Attribute::String(d.into()));
        }
        g.nodes.push(conv);
        g.nodes.push(Node::new("Relu", "relu", ["y"], ["z"]));
        g.infer_inputs_outputs();
        g
    };
    let mut options = LayoutOptions::default();
    options.op_set = OpSet::of_format(mlformats::Format::Onnx);
    let docs = |g: &Graph, options: &LayoutOptions| -> Vec<Option<String>> {
        let l = Layout::of_graph(g, options).unwrap();
        let j = l.to_json();
        for (n, v) in l.nodes.iter().zip(j["nodes"].as_array().unwrap()) {
            assert_eq!(v["doc"], serde_json::json!(n.doc));
        }
        l.nodes.into_iter().map(|n| n.doc).collect()
    };
    let d = docs(&onnx(None), &options);
    assert_eq!(d.len(), 4, "x, Conv, Relu, z");
    assert_eq!(d[0], None);
    assert_eq!(
        d[1].as_deref(),
        Some("https://onnx.ai/onnx/operators/onnx__Conv.html")
    );
    assert_eq!(
        d[2].as_deref(),
        Some("https://onnx.ai/onnx/operators/onnx__Relu.html")
    );
    assert_eq!(d[3], None);
    let d = docs(&onnx(Some("com.microsoft")), &options);
    assert_eq!((d[1].as_deref(), d[2].is_some()), (None, true));
    assert!(
        docs(&onnx(None), &LayoutOptions::default())
            .iter()
            .all(Option::is_none)
    );
    options.op_set = OpSet::of_format(mlformats::Format::TennisModule);
    assert!(docs(&onnx(None), &options).iter().all(Option::is_none));
    options.op_set = OpSet::of_format(mlformats::Format::NnablaNntxt);
    let g = resnet(1);
    let l = Layout::of_graph(&g, &options).unwrap();
    let doc_of = |op: &str| l.nodes.iter().find(|n| n.op == op).unwrap().doc.as_deref();
    let base = "https://nnabla.readthedocs.io/en/latest/python/api/function.html#nnabla.functions.";
    assert_eq!(doc_of("Convolution"), Some(&*format!("{base}convolution")));
    assert_eq!(
        doc_of("BatchNormalization"),
        Some(&*format!("{base}batch_normalization"))
    );
    assert_eq!(doc_of("ReLU"), Some(&*format!("{base}relu")));
    // the SVG wraps linked boxes in a link
    let svg = l.to_svg();
    assert!(svg.contains(&format!("<a href=\"{base}convolution\" target=\"_blank\">")));
    assert_eq!(
        svg.matches("<a href=").count(),
        l.nodes.iter().filter(|n| n.doc.is_some()).count()
    );
}

/// Each operator drawn carries what our conversions do with it, in the
/// words of the support tables: an ONNX operator its imports into NNabla
/// and TenniS, an NNabla function its export to ONNX; the JSON and the
/// SVG's tooltips give them; other domains and unknown operators none.
#[test]
fn operators_carry_their_support_rows() {
    let mut g = Graph::new("g");
    g.values.push(ValueInfo::new("w", ValueKind::Weight));
    g.nodes.push(Node::new("Conv", "conv", ["x", "w"], ["y"]));
    g.nodes.push(
        Node::new("FusedGemm", "fused", ["y"], ["y2"]).with_attribute(
            "domain",
            mlformats::graph::Attribute::String("com.microsoft".into()),
        ),
    );
    g.nodes.push(Node::new("Loop", "loop", ["y2"], ["z"]));
    g.infer_inputs_outputs();
    let mut options = LayoutOptions::default();
    options.op_set = OpSet::of_format(mlformats::Format::Onnx);
    let l = Layout::of_graph(&g, &options).unwrap();
    let ops: Vec<&str> = l.operators.keys().map(String::as_str).collect();
    assert_eq!(
        ops,
        ["Conv", "Loop"],
        "no row for another domain's operator"
    );
    let conv = &l.operators["Conv"];
    let dirs: Vec<&str> = conv.iter().map(|c| c.direction.as_str()).collect();
    assert_eq!(dirs, ["ONNX → NNabla", "ONNX → TenniS"]);
    assert!(
        conv[0].lowered && conv[0].text.starts_with("as Convolution"),
        "{conv:?}"
    );
    assert!(conv[0].text.contains("kernel_shape"), "{conv:?}");
    // Loop is unrolled when its trip count is known: the row says so
    let lp = &l.operators["Loop"];
    assert!(
        lp.iter().all(|c| c.lowered && c.text.contains("unrolled")),
        "{lp:?}"
    );
    let j = l.to_json();
    assert_eq!(j["operators"]["Conv"][0]["text"], conv[0].text.as_str());
    assert_eq!(j["operators"]["Conv"][1]["direction"], "ONNX → TenniS");
    // a one-line description drawn from the same rows: in the JSON's
    // boxes and heading the SVG box's tooltip
    let conv_box = l.nodes.iter().find(|n| n.op == "Conv").unwrap();
    let described = conv_box.description.as_deref().unwrap();
    assert!(
        described.starts_with("ONNX Conv → NNabla Convolution") && described.contains("TenniS "),
        "{described}"
    );
    assert_eq!(j["nodes"][conv_box.id]["description"], described);
    let fused = l.nodes.iter().find(|n| n.op == "FusedGemm").unwrap();
    assert_eq!(fused.description, None, "another domain");
    assert!(
        l.nodes
            .iter()
            .filter(|n| n.kind != NodeKind::Op)
            .all(|n| n.description.is_none())
    );
    let svg = l.to_svg();
    assert!(
        svg.contains(&format!(
            "<title>{described}\nONNX → NNabla: as Convolution"
        )),
        "{svg}"
    );
    // without an operator set, no rows
    assert!(
        Layout::of_graph(&g, &LayoutOptions::default())
            .unwrap()
            .operators
            .is_empty()
    );
    // an NNabla function: its export to ONNX
    options.op_set = OpSet::of_format(mlformats::Format::NnablaNntxt);
    let l = Layout::of_graph(&resnet(1), &options).unwrap();
    let relu = &l.operators["ReLU"];
    assert_eq!(relu.len(), 1);
    assert_eq!(relu[0].direction, "→ ONNX");
    assert!(
        relu[0].lowered && relu[0].text.starts_with("as Relu"),
        "{relu:?}"
    );
    let conv = l.nodes.iter().find(|n| n.op == "Convolution").unwrap();
    assert_eq!(
        conv.description.as_deref(),
        Some("NNabla Convolution → ONNX Conv")
    );
    assert!(
        l.to_svg()
            .contains("<title>NNabla Convolution → ONNX Conv\n→ ONNX: as Conv;")
    );
}

#[test]
fn limits_refuse_before_the_work() {
    let g = chain(100);
    let mut small = LayoutOptions::default();
    small.max_nodes = 50;
    let e = Layout::of_graph(&g, &small).unwrap_err();
    assert_eq!(
        e,
        LayoutError::TooManyNodes {
            nodes: 102,
            limit: 50
        }
    );
    assert!(e.to_string().contains("102 boxes"), "{e}");
    // one value read by every node of a chain: long edges share a column,
    // but the polylines' points are bounded too
    let mut g = chain(300);
    for n in &mut g.nodes {
        n.inputs.push("mask".into());
    }
    g.nodes
        .insert(0, Node::new("Constant", "make_mask", ["x0"], ["mask"]));
    let mut tight = LayoutOptions::default();
    tight.max_routing_points = 1000;
    let e = Layout::of_graph(&g, &tight).unwrap_err();
    assert_eq!(e, LayoutError::TooManyRoutingPoints { limit: 1000 });
    let l = Layout::of_graph(&g, &LayoutOptions::default()).unwrap();
    check(&l, "mask");
    let io = l.nodes.iter().filter(|n| n.kind != NodeKind::Op).count();
    assert_eq!(io, 2);
}

#[test]
fn every_graph_of_testdata() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let mut files = Vec::new();
    let mut dirs = vec![
        root.join("nnabla"),
        root.join("onnx"),
        root.join("tennis"),
        root.join("onnx_typed"),
        root.join("onnx_styles"),
    ];
    dirs.push(root.join("translate"));
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("nnp" | "nntxt" | "tsm" | "onnx" | "protobuf")
            ) {
                files.push(p);
            }
        }
    }
    files.sort();
    let (mut graphs, mut boxes, mut long, mut bodies) = (0, 0, 0, 0);
    for f in &files {
        let Ok(doc) = mlformats::open(f) else {
            continue;
        };
        let Some(model) = doc.graph() else { continue };
        for g in &model.graphs {
            let what = format!("{}: {}", f.display(), g.name);
            let l = Layout::of_graph(g, &LayoutOptions::default()).unwrap();
            let segments = check(&l, &what);
            check_json(&l);
            // every subgraph opened, level by level, and every group closed
            let mut options = LayoutOptions::default();
            let mut opened = l.clone();
            for _ in 0..4 {
                let more: Vec<String> = opened
                    .groups
                    .iter()
                    .filter(|g| g.collapsed && g.kind == GroupKind::Subgraph)
                    .map(|g| g.id.clone())
                    .collect();
                if more.is_empty() {
                    break;
                }
                options.expanded.extend(more);
                opened = Layout::of_graph(g, &options).unwrap();
                check(&opened, &format!("{what}, subgraphs open"));
                check_json(&opened);
                bodies += 1;
            }
            if opened.groups.iter().any(|g| !g.collapsed) {
                options.collapsed = opened.groups.iter().map(|g| g.id.clone()).collect();
                check(
                    &Layout::of_graph(g, &options).unwrap(),
                    &format!("{what}, groups closed"),
                );
            }
            graphs += 1;
            boxes += l.nodes.len();
            long += segments - l.edges.len();
        }
    }
    assert!(graphs > 50, "{graphs} graphs in {} files", files.len());
    assert!(boxes > 1000, "{boxes}");
    assert!(long > 0, "some edges bend");
    assert!(bodies > 0, "some subgraphs opened");
}

/// One table of operator families: one operator's ONNX, NNabla and TenniS
/// names fall in one family, and each family has its own colour, which the
/// SVG draws.
#[test]
fn one_operator_in_every_format_falls_in_one_family() {
    let op = |s| Family::of(NodeKind::Op, s);
    for s in [
        "Conv",
        "Convolution",
        "conv2d",
        "Gemm",
        "Affine",
        "inner_prod",
        "MatMul",
    ] {
        assert_eq!(op(s), Family::Linear, "{s}");
    }
    for s in ["MaxPool", "MaxPooling", "pooling2d", "GlobalAveragePool"] {
        assert_eq!(op(s), Family::Pooling, "{s}");
    }
    for s in ["BatchNormalization", "fused_batch_norm", "LRN"] {
        assert_eq!(op(s), Family::Normalization, "{s}");
    }
    for s in ["Relu", "ReLU", "relu", "Sigmoid", "Softmax", "LeakyReLU"] {
        assert_eq!(op(s), Family::Activation, "{s}");
    }
    for s in ["Add", "Add2", "MulScalar", "add", "ReduceMean"] {
        assert_eq!(op(s), Family::Elementwise, "{s}");
    }
    for s in [
        "Reshape",
        "_reshape",
        "Concat",
        "Concatenate",
        "Transpose",
        "_dimshuffle",
    ] {
        assert_eq!(op(s), Family::Shape, "{s}");
    }
    for s in ["Loop", "If", "RepeatStart", "Delay"] {
        assert_eq!(op(s), Family::Control, "{s}");
    }
    assert_eq!(op("<const>"), Family::Io);
    assert_eq!(op("Frobnicate"), Family::Other);
    assert_eq!(Family::of(NodeKind::Input, "Conv"), Family::Io);
    let fills: std::collections::HashSet<_> = FAMILIES.iter().map(|f| f.colors().0).collect();
    assert_eq!(fills.len(), FAMILIES.len());
}

#[test]
fn the_svg_colours_boxes_by_family() {
    let mut g = Graph::new("net");
    g.values
        .push(ValueInfo::new("w", ValueKind::Weight).with_shape(vec![4, 2]));
    g.nodes
        .push(Node::new("Convolution", "conv", ["x", "w"], ["h"]));
    g.nodes.push(Node::new("ReLU", "relu", ["h"], ["y"]));
    g.infer_inputs_outputs();
    let l = Layout::of_graph(&g, &LayoutOptions::default()).unwrap();
    let families: Vec<Family> = l.nodes.iter().map(|n| n.family).collect();
    assert_eq!(
        families,
        [Family::Io, Family::Linear, Family::Activation, Family::Io]
    );
    let svg = l.to_svg();
    for f in [Family::Linear, Family::Activation, Family::Io] {
        let (fill, stroke) = f.colors();
        assert!(
            svg.contains(&format!("fill=\"{fill}\" stroke=\"{stroke}\"")),
            "{f:?}"
        );
        assert!(svg.contains(&format!("data-family=\"{}\"", f.as_str())));
    }
    assert_eq!(l.nodes[1].node, Some(0));
    assert_eq!(l.nodes[0].node, None);
}

/// An ONNX `Constant` (no inputs) is drawn inside the boxes that read it,
/// like a folded weight with its shape, not as a box of its own; a
/// `Constant` whose value is a graph output keeps its box.
#[test]
fn onnx_constant_nodes_fold_into_their_readers() {
    let mut g = Graph::new("net");
    g.values
        .push(ValueInfo::new("k", ValueKind::Buffer).with_shape(vec![1, 8]));
    g.nodes
        .push(Node::new("Constant", "make_k", Vec::<String>::new(), ["k"]));
    g.nodes.push(Node::new("Add", "add", ["x", "k"], ["y"]));
    g.nodes.push(Node::new("Relu", "relu", ["y"], ["z"]));
    g.infer_inputs_outputs();
    assert_eq!(g.inputs, ["x"]);
    let l = Layout::of_graph(&g, &LayoutOptions::default()).unwrap();
    check(&l, "constant");
    check_json(&l);
    assert!(
        l.nodes.iter().all(|n| n.op != "Constant"),
        "no Constant box"
    );
    assert_eq!(l.nodes.len(), 4, "input x, Add, Relu, output z");
    assert_eq!(l.folded, 1);
    let add = l.nodes.iter().find(|n| n.op == "Add").unwrap();
    assert!(
        add.label
            .iter()
            .any(|t| t.text == "k ⟨1×8⟩" && t.style == mlformats::layout::LineStyle::Weight),
        "{:?}",
        add.label
    );
    // x→Add, Add→Relu, Relu→z; no Constant→Add edge
    assert_eq!(l.edges.len(), 3);
    assert!(l.edges.iter().all(|e| e.tensor != "k"));
    let svg = l.to_svg();
    assert!(svg.contains("k ⟨1×8⟩"));
    assert!(!svg.contains(">Constant<"));

    // a Constant that is the graph's output stays a box, with its edge
    let mut g = Graph::new("out");
    g.nodes
        .push(Node::new("Constant", "c", Vec::<String>::new(), ["c_out"]));
    g.outputs.push("c_out".into());
    let l = Layout::of_graph(&g, &LayoutOptions::default()).unwrap();
    check(&l, "constant output");
    assert_eq!(l.folded, 0);
    assert!(l.nodes.iter().any(|n| n.op == "Constant"));
    assert_eq!(l.edges.len(), 1);
}

/// An ONNX file read by the library: its `Constant` is folded into the Add
/// that reads it, and the open dimension the file names (`dim_param`
/// `batch`) is drawn by its name in the input and output boxes.
#[cfg(feature = "onnx")]
#[test]
fn an_onnx_file_folds_constants_and_names_open_dimensions() {
    use onnx_format::builder::{Dim, GraphBuilder, attr};
    use onnx_format::proto::tensor_proto::DataType;
    let mut g = GraphBuilder::new("named");
    let k = tensor_core::Tensor::from_values([1, 8], &[0.5f32; 8]).unwrap();
    let k = onnx_format::tensor_to_proto("", &k).unwrap();
    g.node(
        "Constant",
        "make_k",
        &[],
        &["k"],
        vec![attr::tensor("value", k)],
    );
    let batch = || Dim::Param("batch".into());
    g.input("x", DataType::Float, &[batch(), Dim::Value(8)]);
    g.node("Add", "add", &["x", "k"], &["y"], vec![]);
    g.output("y", DataType::Float, &[batch(), Dim::Value(8)]);
    let m = g.finish(&Default::default());
    let mut bytes = Vec::new();
    onnx_format::write_model(&mut bytes, &m).unwrap();
    let doc = mlformats::Document::from_bytes(bytes, None, None).unwrap();
    let graph = &doc.graph().unwrap().graphs[0];
    let x = graph.values.iter().find(|v| v.name == "x").unwrap();
    assert_eq!(x.shape, Some(vec![-1, 8]));
    assert_eq!(x.dim_names, Some(vec![Some("batch".to_string()), None]));
    assert_eq!(x.shape_text().as_deref(), Some("batch×8"));
    // folded constants labelled with the tensor table's shapes, as the CLI
    // and the page do
    let shape_of = |name: &str| {
        let t = doc.tensor(name)?;
        t.dims().iter().map(|d| i64::try_from(*d).ok()).collect()
    };
    let l = Layout::of_graph_with(graph, &LayoutOptions::default(), &shape_of).unwrap();
    check(&l, "named");
    assert_eq!(l.folded, 1);
    assert!(l.nodes.iter().all(|n| n.op != "Constant"));
    assert_eq!(l.edges.len(), 2, "x→Add, Add→y");
    let add = l.nodes.iter().find(|n| n.op == "Add").unwrap();
    assert!(
        add.label.iter().any(|t| t.text == "k ⟨1×8⟩"),
        "{:?}",
        add.label
    );
    for kind in [NodeKind::Input, NodeKind::Output] {
        let port = l.nodes.iter().find(|n| n.kind == kind).unwrap();
        assert!(
            port.label.iter().any(|t| t.text == "batch×8"),
            "{:?}",
            port.label
        );
    }
}

/// `g` laid out top to bottom and left to right, each passing every check
/// of a good drawing (the left-to-right one checked transposed).
fn laid_both_ways(g: &Graph) -> Vec<(Direction, Layout)> {
    [Direction::TopToBottom, Direction::LeftToRight]
        .into_iter()
        .map(|direction| {
            let mut o = LayoutOptions::default();
            o.direction = direction;
            let l = Layout::of_graph(g, &o).unwrap();
            let what = format!("{direction:?}");
            if direction == Direction::LeftToRight {
                check(&transposed(&l), &what);
            } else {
                check(&l, &what);
            }
            (direction, l)
        })
        .collect()
}

/// A cycle that enters or leaves an open group (laid out against the
/// flow, so it meets the frame on the side away from the value's port)
/// goes round the frame to the port inside: it ends on its box, and runs
/// through no box and no other group, in both directions.
#[test]
fn cycles_into_and_out_of_a_group_reach_its_ports() {
    use mlformats::graph::Attribute;
    let inside = |n: Node| n.with_attribute("repeat_id", Attribute::Strings(vec!["r".into()]));
    let mut g = Graph::new("net");
    // a reads c2 from the group below it; b reads z from below the group
    g.nodes.push(Node::new("Add2", "a", ["x", "c2"], ["a"]));
    g.nodes
        .push(inside(Node::new("Add2", "b", ["a", "z"], ["b"])));
    g.nodes.push(inside(Node::new("Tanh", "c", ["b"], ["c"])));
    g.nodes.push(inside(Node::new("ReLU", "c2", ["c"], ["c2"])));
    g.nodes.push(Node::new("Sigmoid", "d", ["c"], ["z"]));
    g.nodes.push(Node::new("Tanh", "y", ["z"], ["y"]));
    g.infer_inputs_outputs();
    for (direction, l) in laid_both_ways(&g) {
        let what = format!("{direction:?}");
        assert_eq!(l.groups.len(), 1, "{what}");
        let back: Vec<_> = l.edges.iter().filter(|e| e.reversed).collect();
        assert!(
            !back.is_empty(),
            "{what}: no cycle laid out against the flow"
        );
        for e in &back {
            let (from, to) = (&l.nodes[e.from], &l.nodes[e.to]);
            assert!(
                from.kind == NodeKind::Port || to.kind == NodeKind::Port,
                "{what}: {} -> {} ({})",
                from.name,
                to.name,
                e.tensor
            );
            assert!(e.points.len() >= 5, "{what}: {:?}", e.points);
        }
    }
}

/// NNabla repeat blocks are groups: drawn open, a frame with its title
/// around what the block holds (a block inside another inside its frame),
/// with a box per value that enters or leaves; closed, one box. Either
/// way, both directions, every check of a good drawing holds.
#[test]
fn repeat_blocks_are_groups_that_open_and_close() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/nnabla");
    let doc = mlformats::open(root.join("loop_nested.nntxt")).unwrap();
    let g = &doc.graph().unwrap().graphs[0];
    let mut options = LayoutOptions::default();
    let open = Layout::of_graph(g, &options).unwrap();
    check(&open, "open");
    check_json(&open);
    let ids: Vec<&str> = open.groups.iter().map(|g| g.id.as_str()).collect();
    assert_eq!(ids, ["RepeatStart_2", "RepeatStart_2/RepeatStart"]);
    let labels: Vec<&str> = open.groups.iter().map(|g| g.label.as_str()).collect();
    assert_eq!(labels, ["repeat RepeatStart_2 ×2", "repeat RepeatStart ×2"]);
    assert_eq!(open.groups[1].parent, Some(0));
    assert_eq!((open.groups[0].operators, open.groups[1].operators), (6, 4));
    // what each group holds, by name: the inner block's functions with the
    // RepeatEnd that closes it, and the values crossing its border
    let inside = |k: usize, kind: NodeKind| -> Vec<&str> {
        let mut v: Vec<&str> = open
            .nodes
            .iter()
            .filter(|n| n.group == Some(k) && n.kind == kind)
            .map(|n| n.name.as_str())
            .collect();
        v.sort_unstable();
        v
    };
    assert_eq!(
        inside(1, NodeKind::Op),
        ["Convolution_2", "RepeatEnd", "RepeatStart", "Tanh_2"]
    );
    assert_eq!(inside(1, NodeKind::Port), ["RepeatEnd", "RepeatStart_2"]);
    assert_eq!(inside(0, NodeKind::Op), ["RepeatEnd_2", "RepeatStart_2"]);
    assert_eq!(inside(0, NodeKind::Port), ["RepeatEnd_2", "Tanh"]);
    // every function is drawn once, and the edge from Tanh enters the
    // outer block at its port
    let ops = open.nodes.iter().filter(|n| n.kind == NodeKind::Op).count();
    assert_eq!(ops, g.nodes.len());
    let port = open
        .nodes
        .iter()
        .find(|n| n.kind == NodeKind::Port && n.name == "Tanh")
        .unwrap();
    let into = open.edges.iter().find(|e| e.to == port.id).unwrap();
    assert_eq!(open.nodes[into.from].name, "Tanh");
    let last = *into.points.last().unwrap();
    assert!(
        (last.1 - port.y).abs() < 0.01,
        "{:?} ends at {last:?}",
        into.points
    );
    let svg = open.to_svg();
    assert_eq!(svg.matches("<g class=\"group\"").count(), 2);
    assert!(svg.contains("repeat RepeatStart ×2"));

    // the inner block closed: one box of its 4 operators, in the outer frame
    options.collapsed = vec!["RepeatStart_2/RepeatStart".into()];
    let inner_closed = Layout::of_graph(g, &options).unwrap();
    check(&inner_closed, "inner closed");
    check_json(&inner_closed);
    let closed = &inner_closed.groups[1];
    assert!(closed.collapsed && !inner_closed.groups[0].collapsed);
    let b = &inner_closed.nodes[closed.node.unwrap()];
    assert_eq!(b.kind, NodeKind::Group);
    assert_eq!(b.group, Some(0));
    assert_eq!(b.label[0].text, "repeat RepeatStart ×2");
    assert_eq!(b.label[1].text, "4 operators (closed)");
    let shown = |l: &Layout| l.nodes.iter().filter(|n| n.kind == NodeKind::Op).count();
    assert_eq!(shown(&inner_closed), g.nodes.len() - 4);
    assert!(inner_closed.groups[0].height < open.groups[0].height);

    // the outer block closed: what it holds is not laid out at all
    options.collapsed = vec!["RepeatStart_2".into()];
    let outer_closed = Layout::of_graph(g, &options).unwrap();
    check(&outer_closed, "outer closed");
    assert_eq!(outer_closed.groups.len(), 1);
    assert!(outer_closed.groups[0].collapsed);
    assert_eq!(shown(&outer_closed), g.nodes.len() - 6);
    assert!(outer_closed.nodes.iter().all(|n| n.kind != NodeKind::Port));

    // left to right, open: the same checks on the transposed drawing
    options.collapsed.clear();
    options.direction = Direction::LeftToRight;
    let lr = Layout::of_graph(g, &options).unwrap();
    let back = transposed(&lr);
    check(&back, "left to right");
    assert_eq!(lr.groups.len(), 2);
}

/// A hostile nesting: 40 repeat ids on one function make 16 nested groups
/// (the deepest drawn), and ids no RepeatEnd closes are titled without a
/// count.
#[test]
fn repeat_nesting_is_bounded() {
    use mlformats::graph::Attribute;
    let mut g = Graph::new("deep");
    let ids: Vec<String> = (0..40).map(|i| format!("R{i}")).collect();
    let mut a = Node::new("ReLU", "a", ["x"], ["y"]);
    a.attributes
        .push(("repeat_id".into(), Attribute::Strings(ids.clone())));
    g.nodes.push(a);
    g.nodes.push(Node::new("ReLU", "b", ["y"], ["z"]));
    g.infer_inputs_outputs();
    let l = Layout::of_graph(&g, &LayoutOptions::default()).unwrap();
    check(&l, "deep");
    assert_eq!(l.groups.len(), 16);
    assert_eq!(l.groups[15].id, ids[..16].join("/"));
    assert_eq!(l.groups[0].label, "repeat R0");
    assert!(l.groups.iter().all(|g| g.operators == 1));
}

/// ONNX subgraphs: an `If` is drawn closed (its own box, listed as a
/// closed group); opened by its id, a group holding a group per branch
/// (the branch's nodes, with ports for the values they read from outside
/// and give back) and the `If`, which reads what the branches give back.
#[test]
fn onnx_subgraphs_open_into_groups() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/translate");
    let doc = mlformats::open(root.join("if_select/if_select.onnx")).unwrap();
    let g = &doc.graph().unwrap().graphs[0];
    let if_index = g.nodes.iter().position(|n| n.op == "If").unwrap();
    let mut options = LayoutOptions::default();
    let closed = Layout::of_graph(g, &options).unwrap();
    check(&closed, "closed");
    check_json(&closed);
    assert_eq!(closed.groups.len(), 1);
    let c = &closed.groups[0];
    assert_eq!((c.id.as_str(), c.label.as_str()), ("branchy", "If branchy"));
    assert!(c.collapsed && c.kind == GroupKind::Subgraph && c.operators == 4);
    assert_eq!(closed.nodes[c.node.unwrap()].node, Some(if_index));

    options.expanded = vec!["branchy".into()];
    let open = Layout::of_graph(g, &options).unwrap();
    check(&open, "open");
    check_json(&open);
    let groups: Vec<(&str, GroupKind, Option<usize>)> = open
        .groups
        .iter()
        .map(|g| (g.id.as_str(), g.kind, g.parent))
        .collect();
    assert_eq!(
        groups,
        [
            ("branchy", GroupKind::Subgraph, None),
            ("branchy/else_branch", GroupKind::Body, Some(0)),
            ("branchy/then_branch", GroupKind::Body, Some(0)),
        ]
    );
    let ops = |k: usize| -> Vec<&str> {
        open.nodes
            .iter()
            .filter(|n| n.group == Some(k) && n.kind == NodeKind::Op)
            .map(|n| n.op.as_str())
            .collect()
    };
    assert_eq!(ops(0), ["If"]);
    assert_eq!(ops(1), ["Add", "Tanh"]);
    assert_eq!(ops(2), ["Mul", "Relu"]);
    // the If reads the condition and each branch's result, from the ports
    let the_if = open.nodes.iter().find(|n| n.op == "If").unwrap();
    assert_eq!(the_if.node, Some(if_index));
    let mut into: Vec<&str> = open
        .edges
        .iter()
        .filter(|e| e.to == the_if.id)
        .map(|e| e.tensor.as_str())
        .collect();
    into.sort_unstable();
    assert_eq!(into, ["cond", "e_tanh", "t_relu"]);
    // a branch's nodes are no node of the graph
    assert!(
        open.nodes
            .iter()
            .filter(|n| n.group == Some(1))
            .all(|n| n.node.is_none())
    );
    // both directions, and a branch closed into one box
    options.direction = Direction::LeftToRight;
    check(
        &transposed(&Layout::of_graph(g, &options).unwrap()),
        "open, left to right",
    );
    options.direction = Direction::TopToBottom;
    options.collapsed = vec!["branchy/then_branch".into()];
    let half = Layout::of_graph(g, &options).unwrap();
    check(&half, "then_branch closed");
    assert!(
        half.groups[2].collapsed
            && half.nodes[half.groups[2].node.unwrap()].kind == NodeKind::Group
    );
}

/// Bodies inside bodies open by their ids (`outer`, then
/// `outer/then_branch/inner`); a value a sibling branch defines again is
/// drawn under a name of its own, so each branch's edges stay its own.
#[test]
fn nested_subgraphs_open_level_by_level() {
    use mlformats::graph::Attribute;
    let node = |op: &str, name: &str, i: &[&str], o: &[&str]| -> Vec<(String, Attribute)> {
        let s = |v: &[&str]| Attribute::Strings(v.iter().map(|x| x.to_string()).collect());
        vec![
            ("op".into(), Attribute::String(op.into())),
            ("name".into(), Attribute::String(name.into())),
            ("inputs".into(), s(i)),
            ("outputs".into(), s(o)),
            ("attributes".into(), Attribute::Message(vec![])),
        ]
    };
    let body = |outputs: &[&str], nodes: Vec<Vec<(String, Attribute)>>| {
        Attribute::Message(vec![
            ("inputs".into(), Attribute::Strings(vec![])),
            (
                "outputs".into(),
                Attribute::Strings(outputs.iter().map(|x| x.to_string()).collect()),
            ),
            ("graph_nodes".into(), Attribute::Messages(nodes)),
        ])
    };
    // the inner If, inside the outer If's then_branch; both branches of
    // the outer If write `t`
    let mut inner = node("If", "inner", &["c"], &["t"]);
    inner[4].1 = Attribute::Message(vec![
        (
            "then_branch".into(),
            body(&["u"], vec![node("Neg", "n1", &["x"], &["u"])]),
        ),
        (
            "else_branch".into(),
            body(&["v"], vec![node("Abs", "n2", &["x"], &["v"])]),
        ),
    ]);
    let mut outer = Node::new("If", "outer", ["c"], ["y"]);
    outer
        .attributes
        .push(("then_branch".into(), body(&["t"], vec![inner])));
    outer.attributes.push((
        "else_branch".into(),
        body(&["t"], vec![node("Exp", "n3", &["x"], &["t"])]),
    ));
    let mut g = Graph::new("nested");
    g.nodes.push(Node::new("Sign", "s", ["x"], ["c"]));
    g.nodes.push(outer);
    g.inputs = vec!["x".into()];
    g.outputs = vec!["y".into()];

    let mut options = LayoutOptions::default();
    let l = Layout::of_graph(&g, &options).unwrap();
    check(&l, "closed");
    assert_eq!(l.groups.len(), 1);
    assert_eq!(l.groups[0].operators, 4);

    options.expanded = vec!["outer".into()];
    let l = Layout::of_graph(&g, &options).unwrap();
    check(&l, "outer open");
    let ids: Vec<&str> = l.groups.iter().map(|g| g.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "outer",
            "outer/then_branch",
            "outer/else_branch",
            "outer/then_branch/inner"
        ]
    );
    assert!(l.groups[3].collapsed);

    options.expanded.push("outer/then_branch/inner".into());
    let l = Layout::of_graph(&g, &options).unwrap();
    check(&l, "both open");
    check_json(&l);
    assert_eq!(l.groups.len(), 6);
    assert!(l.groups.iter().all(|g| !g.collapsed));
    // the else branch's `t` is its own value: its Exp feeds the outer If
    // through a port of its own
    let exp = l.nodes.iter().find(|n| n.op == "Exp").unwrap();
    let out = l.edges.iter().find(|e| e.from == exp.id).unwrap();
    assert_eq!(out.tensor, "t ⟨else_branch⟩");
    let ops = l.nodes.iter().filter(|n| n.kind == NodeKind::Op).count();
    assert_eq!(ops, 6, "Sign, two Ifs, Neg, Abs, Exp");
}

/// What a box shows (`LayoutOptions::labels`): the name line and the folded
/// weights by default, each of them hidden on demand (the weights still
/// folded), and up to four `key = value` lines of attributes with short
/// values when asked; boxes are sized to what they show, and every check
/// of a good drawing holds either way.
#[test]
fn labels_show_names_weights_and_attributes_on_demand() {
    use mlformats::graph::Attribute;
    use mlformats::layout::{Labels, LineStyle};
    let mut g = Graph::new("net");
    g.values
        .push(ValueInfo::new("w", ValueKind::Weight).with_shape(vec![8, 3, 3, 3]));
    g.values
        .push(ValueInfo::new("b", ValueKind::Weight).with_shape(vec![8]));
    let conv = Node::new("Conv", "stem/conv", ["x", "w", "b"], ["h"])
        .with_attribute("#op", Attribute::String("conv2d".into()))
        .with_attribute("kernel_shape", Attribute::Ints(vec![3, 3]))
        .with_attribute("value", Attribute::Tensor("t".into()))
        .with_attribute("pads", Attribute::Ints(vec![1; 12]))
        .with_attribute("alpha", Attribute::Float(f64::from(0.1f32)))
        .with_attribute("auto_pad", Attribute::String("NOTSET".into()))
        .with_attribute("group", Attribute::Int(1))
        .with_attribute("strides", Attribute::Ints(vec![2, 2]));
    g.nodes.push(conv);
    g.nodes.push(Node::new("Relu", "stem/relu", ["h"], ["y"]));
    g.infer_inputs_outputs();
    let lay = |names: bool, weights: bool, attributes: bool| {
        let mut o = LayoutOptions::default();
        assert_eq!(o.labels, Labels::default());
        o.labels.names = names;
        o.labels.weights = weights;
        o.labels.attributes = attributes;
        let l = Layout::of_graph(&g, &o).unwrap();
        let what = format!("names {names} weights {weights} attributes {attributes}");
        check(&l, &what);
        check_json(&l);
        // the weights are folded whatever the box shows
        assert_eq!(l.nodes.len(), 4, "{what}");
        assert_eq!(l.edges.len(), 3, "{what}");
        assert!(l.edges.iter().all(|e| e.tensor != "w" && e.tensor != "b"));
        l
    };
    let text = |l: &Layout, op: &str| -> Vec<(String, LineStyle)> {
        let n = l.nodes.iter().find(|n| n.op == op).unwrap();
        n.label.iter().map(|t| (t.text.clone(), t.style)).collect()
    };
    let conv_box = |l: &Layout| l.nodes.iter().find(|n| n.op == "Conv").unwrap().clone();
    let s = |t: &str, style| (t.to_string(), style);
    let full = lay(true, true, false);
    assert_eq!(
        text(&full, "Conv"),
        [
            s("Conv", LineStyle::Op),
            s("stem/conv", LineStyle::Name),
            s("w ⟨8×3×3×3⟩", LineStyle::Weight),
            s("b ⟨8⟩", LineStyle::Weight),
        ]
    );
    let no_names = lay(false, true, false);
    assert_eq!(
        text(&no_names, "Conv"),
        [
            s("Conv", LineStyle::Op),
            s("w ⟨8×3×3×3⟩", LineStyle::Weight),
            s("b ⟨8⟩", LineStyle::Weight),
        ]
    );
    assert_eq!(text(&no_names, "Relu"), [s("Relu", LineStyle::Op)]);
    // the ports keep their value's name
    assert_eq!(text(&no_names, "input")[1], s("x", LineStyle::Name));
    assert_eq!(
        conv_box(&no_names).height + 13.0,
        conv_box(&full).height,
        "one line less"
    );
    let no_weights = lay(true, false, false);
    assert_eq!(
        text(&no_weights, "Conv"),
        [s("Conv", LineStyle::Op), s("stem/conv", LineStyle::Name)]
    );
    assert!(conv_box(&no_weights).width < conv_box(&full).width);
    let bare = lay(false, false, false);
    assert_eq!(text(&bare, "Conv"), [s("Conv", LineStyle::Op)]);
    // attributes: four with short values, the most telling first (the
    // kernel, the strides, the group before alpha, stored before them);
    // the internal `#op`, the tensor, the twelve pads and an unset
    // auto_pad left out; an f32 by its own digits
    let attrs = lay(true, true, true);
    let conv_text = text(&attrs, "Conv");
    assert_eq!(conv_text.len(), 8, "{conv_text:?}");
    assert_eq!(
        conv_text[4..],
        [
            s("kernel_shape = 3,3", LineStyle::Attribute),
            s("strides = 2,2", LineStyle::Attribute),
            s("group = 1", LineStyle::Attribute),
            s("alpha = 0.1", LineStyle::Attribute),
        ]
    );
    assert_eq!(text(&attrs, "Relu").len(), 2, "no attributes, no lines");
    assert!(conv_box(&attrs).height > conv_box(&full).height);
    // as JSON and in the SVG, in their own style
    let j = attrs.to_json();
    let n = j["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["op"] == "Conv")
        .unwrap();
    assert_eq!(n["label_styles"][4], "attr");
    assert!(n["label"].as_str().unwrap().ends_with("\nalpha = 0.1"));
    let svg = attrs.to_svg();
    assert!(
        svg.contains("<text x=\"7\" y=\"67\" class=\"a\">kernel_shape = 3,3</text>"),
        "{svg}"
    );
    assert!(!full.to_svg().contains("class=\"a\""));
}

/// Attributes in boxes, the most telling for the operator's family first
/// (`Family::telling_attributes`, one table for the SVG and the page):
/// a Conv's kernel, strides, pads and group before its dilations, the axis
/// of a Concat and a Softmax, a Transpose's perm, a Cast's to, the mode of
/// a Pad and a Resize, each stored after attributes that tell less; the
/// rest in stored order.
#[test]
fn attributes_most_telling_for_their_family_first() {
    use mlformats::graph::Attribute;
    let int = |v: i64| Attribute::Int(v);
    let ints = |v: &[i64]| Attribute::Ints(v.to_vec());
    let text = |v: &str| Attribute::String(v.into());
    // (operator, attributes as stored, the lines wanted)
    type Case<'a> = (&'a str, Vec<(&'a str, Attribute)>, Vec<&'a str>);
    let cases: Vec<Case> = vec![
        (
            "Conv",
            // sorted by name, as exporters store them
            vec![
                ("dilations", ints(&[1, 1])),
                ("group", int(32)),
                ("kernel_shape", ints(&[3, 3])),
                ("pads", ints(&[1, 1, 1, 1])),
                ("strides", ints(&[2, 2])),
            ],
            vec![
                "kernel_shape = 3,3",
                "strides = 2,2",
                "pads = 1,1,1,1",
                "group = 32",
            ],
        ),
        (
            "Concat",
            vec![("mystery", int(7)), ("axis", int(1))],
            vec!["axis = 1", "mystery = 7"],
        ),
        (
            "Softmax",
            vec![("beta", int(2)), ("axis", int(-1))],
            vec!["axis = -1", "beta = 2"],
        ),
        (
            "Transpose",
            vec![("axis", int(0)), ("perm", ints(&[0, 2, 3, 1]))],
            vec!["perm = 0,2,3,1", "axis = 0"],
        ),
        (
            "Cast",
            vec![("saturate", int(1)), ("to", int(1))],
            vec!["to = 1", "saturate = 1"],
        ),
        (
            "Pad",
            vec![("value", int(0)), ("mode", text("reflect"))],
            vec!["mode = reflect", "value = 0"],
        ),
        (
            "Resize",
            vec![
                ("coordinate_transformation_mode", text("asymmetric")),
                ("cubic_coeff_a", int(-1)),
                ("mode", text("nearest")),
                ("nearest_mode", text("floor")),
                ("exclude_outside", int(0)),
            ],
            vec![
                "mode = nearest",
                "coordinate_transformation_mode = asymmetric",
                "cubic_coeff_a = -1",
                "nearest_mode = floor",
            ],
        ),
        (
            // no family: stored order behind the generally telling ones
            "MysteryOp",
            vec![("zeta", int(1)), ("alpha", int(2)), ("kernel", int(3))],
            vec!["kernel = 3", "alpha = 2", "zeta = 1"],
        ),
    ];
    let mut options = LayoutOptions::default();
    options.labels.attributes = true;
    options.labels.names = false;
    options.labels.weights = false;
    for (op, attributes, want) in cases {
        let mut node = Node::new(op, "n", ["x"], ["y"]);
        for (k, v) in attributes {
            node = node.with_attribute(k, v);
        }
        let mut g = Graph::new("g");
        g.nodes.push(node);
        g.infer_inputs_outputs();
        let l = Layout::of_graph(&g, &options).unwrap();
        let b = l.nodes.iter().find(|n| n.op == op).unwrap();
        let lines: Vec<&str> = b.label[1..].iter().map(|t| t.text.as_str()).collect();
        // long keys are shortened in the box
        let want: Vec<String> = want
            .iter()
            .map(|w| {
                let (k, v) = w.split_once(" = ").unwrap();
                if k.chars().count() > 24 {
                    format!("{}… = {v}", k.chars().take(22).collect::<String>())
                } else {
                    w.to_string()
                }
            })
            .collect();
        assert_eq!(lines, want, "{op}");
        // the SVG draws the same lines in the same order
        let svg = l.to_svg();
        let at: Vec<usize> = want
            .iter()
            .map(|w| svg.find(&format!("class=\"a\">{w}<")).expect(w))
            .collect();
        assert!(at.windows(2).all(|p| p[0] < p[1]), "{op}: {svg}");
    }
}

/// An NNabla network (`.nntxt`, as Neural Network Console writes them)
/// whose repeat blocks are entered by cycles: the outer block's
/// RepeatStart reads a value computed below the block, the inner block's
/// RepeatStart one computed below it in the outer block. Each such edge,
/// laid out against the flow, runs round its group's frame to the port
/// box of its value inside and ends on that box, not on the frame; no
/// edge crosses a box or a group it does not belong to, both directions.
fn looped_nntxt() -> String {
    let mut v = String::new();
    let mut f = String::new();
    let ids = |r: &[&str]| -> String {
        r.iter()
            .map(|id| format!("    repeat_id: \"{id}\"\n"))
            .collect()
    };
    for (name, r) in [
        ("x", &[][..]),
        ("pre", &[]),
        ("rs_o", &["o"]),
        ("rs_i", &["o", "i"]),
        ("t_i", &["o", "i"]),
        ("re_i", &["o"]),
        ("fb_i", &["o"]),
        ("re_o", &[]),
        ("back", &[]),
        ("y", &[]),
    ] {
        v.push_str(&format!(
            "  variable {{\n    name: \"{name}\"\n    type: \"Buffer\"\n{}    shape: {{ dim: -1 dim: 8 }}\n  }}\n",
            ids(r)
        ));
    }
    for (name, op, r, ins, param) in [
        ("pre", "Tanh", &[][..], &["x"][..], ""),
        ("rs_o", "RepeatStart", &["o"], &["pre", "back"], "o"),
        ("rs_i", "RepeatStart", &["o", "i"], &["rs_o", "fb_i"], "i"),
        ("t_i", "Tanh", &["o", "i"], &["rs_i"], ""),
        ("re_i", "RepeatEnd", &["o"], &["t_i"], "i"),
        ("fb_i", "Sigmoid", &["o"], &["re_i"], ""),
        ("re_o", "RepeatEnd", &[], &["fb_i"], "o"),
        ("back", "Abs", &[], &["re_o"], ""),
        ("y", "Tanh", &[], &["re_o"], ""),
    ] {
        let inputs: String = ins
            .iter()
            .map(|i| format!("    input: \"{i}\"\n"))
            .collect();
        let param = if param.is_empty() {
            String::new()
        } else if op == "RepeatEnd" {
            format!("    repeat_param {{\n      repeat_id: \"{param}\"\n      times: 2\n    }}\n")
        } else {
            format!("    repeat_param {{\n      repeat_id: \"{param}\"\n    }}\n")
        };
        f.push_str(&format!(
            "  function {{\n    name: \"{name}\"\n    type: \"{op}\"\n{}{inputs}    output: \"{name}\"\n{param}  }}\n",
            ids(r)
        ));
    }
    format!(
        "network {{\n  name: \"looped\"\n  batch_size: 1\n  repeat_info {{\n    id: \"o\"\n    times: 2\n  }}\n  repeat_info {{\n    id: \"i\"\n    times: 2\n  }}\n{v}{f}}}\n\
         executor {{\n  name: \"runtime\"\n  network_name: \"looped\"\n  data_variable {{\n    variable_name: \"x\"\n    data_name: \"x\"\n  }}\n  output_variable {{\n    variable_name: \"y\"\n    data_name: \"y\"\n  }}\n}}\n"
    )
}

#[test]
fn cycles_into_nntxt_repeat_blocks_end_at_their_ports() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("looped.nntxt");
    std::fs::write(&path, looped_nntxt()).unwrap();
    let doc = mlformats::open(&path).unwrap();
    let g = &doc.graph().unwrap().graphs[0];
    for (direction, l) in laid_both_ways(g) {
        let what = format!("{direction:?}");
        let ids: Vec<&str> = l.groups.iter().map(|g| g.id.as_str()).collect();
        assert_eq!(ids, ["o", "o/i"], "{what}");
        // the two cycles into the blocks: `back` into the outer one from
        // the top, `fb_i` into the inner one from the outer one
        for (tensor, group) in [("back", 0), ("fb_i", 1)] {
            let e = l
                .edges
                .iter()
                .find(|e| {
                    e.tensor == tensor
                        && l.nodes[e.to].group == Some(group)
                        && l.nodes[e.from].group != Some(group)
                })
                .unwrap_or_else(|| panic!("{what}: no edge of {tensor} into group {group}"));
            let to = &l.nodes[e.to];
            assert!(e.reversed, "{what}: {tensor} not laid out against the flow");
            assert_eq!(
                (to.kind, to.name.as_str()),
                (NodeKind::Port, tensor),
                "{what}: {tensor} ends at {} {}",
                to.kind.as_str(),
                to.name
            );
            assert_ne!(l.nodes[e.from].group, Some(group), "{what}: {tensor}");
            // it ends on the port's box, on the side the flow enters it
            let &(px, py) = e.points.last().unwrap();
            let (x0, y0, x1) = (to.x, to.y, to.x + to.width);
            let (y1, across) = (to.y + to.height, to.x);
            let on = match direction {
                Direction::TopToBottom => (py - y0).abs() < EPS && px > x0 && px < x1,
                _ => (px - across).abs() < EPS && py > y0 && py < y1,
            };
            assert!(
                on,
                "{what}: {tensor} ends at {:?}, off its port {to:?}",
                (px, py)
            );
            // and reached the port from outside its group's frame
            let f = &l.groups[group];
            let outside = |p: &(f64, f64)| {
                p.0 < f.x - EPS
                    || p.0 > f.x + f.width + EPS
                    || p.1 < f.y - EPS
                    || p.1 > f.y + f.height + EPS
            };
            assert!(
                e.points.iter().any(outside),
                "{what}: {tensor}: {:?}",
                e.points
            );
        }
    }
}

/// Edges joining the same two boxes (a Split's two outputs both read by
/// one Concat, next to it or far below; a cycle's edge beside a forward
/// one) share their ports and routing points, so each is moved a few
/// pixels sideways: no two run on one line, and every check of a good
/// drawing still holds, both directions.
#[test]
fn edges_joining_the_same_boxes_are_each_seen() {
    let mut g = Graph::new("net");
    g.nodes
        .push(Node::new("Split", "split", ["x"], ["s0", "s1", "s2"]));
    // next to each other: three edges split → near
    g.nodes
        .push(Node::new("Concat", "near", ["s0", "s1", "s2"], ["n"]));
    // far below: two edges split → far, past a chain of three
    g.nodes.push(Node::new("Relu", "r1", ["n"], ["a"]));
    g.nodes.push(Node::new("Relu", "r2", ["a"], ["b"]));
    g.nodes.push(Node::new("Relu", "r3", ["b"], ["c"]));
    g.nodes
        .push(Node::new("Concat", "far", ["c", "s0", "s1"], ["y"]));
    g.infer_inputs_outputs();
    for (direction, l) in laid_both_ways(&g) {
        let what = format!("{direction:?}");
        let id = |name: &str| l.nodes.iter().find(|n| n.name == name).unwrap().id;
        for (to, k) in [("near", 3), ("far", 2)] {
            let same: Vec<&Vec<(f64, f64)>> = l
                .edges
                .iter()
                .filter(|e| e.from == id("split") && e.to == id(to))
                .map(|e| &e.points)
                .collect();
            assert_eq!(same.len(), k, "{what}: split → {to}");
            for (a, b) in same.iter().zip(same.iter().skip(1)) {
                // apart all the way: at each end and at every bend
                assert_eq!(a.len(), b.len(), "{what}");
                for (p, q) in a.iter().zip(b.iter()) {
                    let apart = (p.0 - q.0).abs().max((p.1 - q.1).abs());
                    assert!(apart >= 2.0, "{what}: split → {to}: {a:?} and {b:?}");
                }
            }
        }
    }
}
