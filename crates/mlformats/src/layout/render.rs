//! A layout as JSON (`docs/LAYOUT_JSON.md`) and as SVG (the viewer page's
//! look).

use std::fmt::Write;

use serde_json::{Value, json};

use super::build::LINE_HEIGHT;
use super::{Layout, LineStyle, NodeKind};

/// Space around the drawing in the SVG.
const MARGIN: f64 = 20.0;

/// A coordinate to one decimal.
fn r(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

fn xml(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            c => o.push(c),
        }
    }
    o
}

impl Layout {
    /// The layout as JSON: `nodes` (id, kind, op, name, label, x, y, width,
    /// height, layer, doc, description; x and y the top-left corner) and `edges` (from, to,
    /// tensor, points, reversed), with the drawing's `width` and `height`
    /// (see `docs/LAYOUT_JSON.md`).
    pub fn to_json(&self) -> Value {
        let nodes: Vec<Value> = self
            .nodes
            .iter()
            .map(|n| {
                let label: Vec<&str> = n.label.iter().map(|l| l.text.as_str()).collect();
                let styles: Vec<&str> = n.label.iter().map(|l| l.style.as_str()).collect();
                json!({
                    "id": n.id,
                    "kind": n.kind.as_str(),
                    "node": n.node,
                    "family": n.family.as_str(),
                    "fill": n.family.colors().0,
                    "stroke": n.family.colors().1,
                    "op": n.op,
                    "name": n.name,
                    "label": label.join("\n"),
                    "label_styles": styles,
                    "x": r(n.x),
                    "y": r(n.y),
                    "width": r(n.width),
                    "height": r(n.height),
                    "layer": n.layer,
                    "group": n.group,
                    "doc": n.doc,
                    "description": n.description,
                })
            })
            .collect();
        let edges: Vec<Value> = self
            .edges
            .iter()
            .map(|e| {
                let points: Vec<[f64; 2]> = e.points.iter().map(|p| [r(p.0), r(p.1)]).collect();
                json!({
                    "from": e.from,
                    "to": e.to,
                    "tensor": e.tensor,
                    "points": points,
                    "reversed": e.reversed,
                })
            })
            .collect();
        let groups: Vec<Value> = self
            .groups
            .iter()
            .map(|g| {
                json!({
                    "id": g.id,
                    "label": g.label,
                    "kind": g.kind.as_str(),
                    "parent": g.parent,
                    "collapsed": g.collapsed,
                    "node": g.node,
                    "operators": g.operators,
                    "x": r(g.x),
                    "y": r(g.y),
                    "width": r(g.width),
                    "height": r(g.height),
                })
            })
            .collect();
        json!({
            "format": "mlformats-layout",
            "version": 1,
            "anchor": "top-left",
            "direction": self.direction.as_str(),
            "width": r(self.width),
            "height": r(self.height),
            "layers": self.layers,
            "folded": self.folded,
            "crossings": self.crossings,
            "nodes": nodes,
            "edges": edges,
            "groups": groups,
            "operators": self.operators_json(),
        })
    }

    /// `operators` of the JSON: by operator, what our conversions do with
    /// it (`direction`, `lowered`, `text`).
    fn operators_json(&self) -> Value {
        let map: serde_json::Map<String, Value> = self
            .operators
            .iter()
            .map(|(op, rows)| {
                let rows: Vec<Value> = rows
                    .iter()
                    .map(|c| {
                        json!({"direction": c.direction, "lowered": c.lowered, "text": c.text, "writes": c.writes})
                    })
                    .collect();
                (op.clone(), Value::Array(rows))
            })
            .collect();
        Value::Object(map)
    }

    /// The layout drawn as a standalone SVG document: rounded boxes,
    /// sans-serif labels and arrowed polylines in the viewer page's colours.
    pub fn to_svg(&self) -> String {
        let (w, h) = (r(self.width + 2.0 * MARGIN), r(self.height + 2.0 * MARGIN));
        let mut s = String::with_capacity(256 * (self.nodes.len() + self.edges.len()) + 1024);
        let _ = write!(
            s,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">\n\
             <style>\
             .node rect{{stroke-width:1.2}}\
             text{{font-family:system-ui,sans-serif;font-size:11px;fill:#222}}\
             .op{{font-weight:bold;font-size:12px}}\
             .w{{fill:#666;font-family:monospace;font-size:10px}}\
             .a{{fill:#4a5a8a;font-family:monospace;font-size:10px}}\
             .edge{{fill:none;stroke:#8a9aab;stroke-width:1.2}}\
             .group rect{{fill:#f3f1fb;fill-opacity:0.55;stroke:#8a7fc0;stroke-dasharray:5 3}}\
             .group text{{font-weight:bold;fill:#5a4f96}}\
             .closed rect{{stroke-dasharray:5 2;stroke-width:2}}\
             </style>\n\
             <defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\">\
             <path d=\"M0,0 L10,5 L0,10 z\" fill=\"#8a9aab\"/></marker></defs>\n\
             <rect width=\"100%\" height=\"100%\" fill=\"#fafafa\"/>\n\
             <g transform=\"translate({MARGIN},{MARGIN})\">\n"
        );
        // open groups behind everything, outer ones first
        for g in self.groups.iter().filter(|g| !g.collapsed) {
            let _ = writeln!(
                s,
                "<g class=\"group\" transform=\"translate({},{})\"><rect width=\"{}\" height=\"{}\" rx=\"6\" ry=\"6\"/><text x=\"8\" y=\"16\">{}</text></g>",
                r(g.x),
                r(g.y),
                r(g.width),
                r(g.height),
                xml(&g.label)
            );
        }
        for e in &self.edges {
            s.push_str("<polyline class=\"edge\" marker-end=\"url(#arrow)\" points=\"");
            for (i, p) in e.points.iter().enumerate() {
                if i > 0 {
                    s.push(' ');
                }
                let _ = write!(s, "{},{}", r(p.0), r(p.1));
            }
            let _ = writeln!(s, "\"><title>{}</title></polyline>", xml(&e.tensor));
        }
        for n in &self.nodes {
            let class = match n.kind {
                NodeKind::Op => "node",
                NodeKind::Group => "node closed",
                _ => "node io",
            };
            let (fill, stroke) = n.family.colors();
            // a box with a reference page links to it
            if let Some(url) = &n.doc {
                let _ = write!(s, "<a href=\"{}\" target=\"_blank\">", xml(url));
            }
            let _ = write!(
                s,
                "<g class=\"{class}\" data-family=\"{}\" transform=\"translate({},{})\"><rect width=\"{}\" height=\"{}\" rx=\"4\" ry=\"4\" fill=\"{fill}\" stroke=\"{stroke}\"/>",
                n.family.as_str(),
                r(n.x),
                r(n.y),
                r(n.width),
                r(n.height)
            );
            // hovering a box describes its operator (the description names
            // it) and says what each of our conversions does with it
            if let Some(d) = &n.description {
                let _ = write!(s, "<title>{}", xml(d));
                for c in self.operators.get(&n.op).into_iter().flatten() {
                    let _ = write!(s, "\n{}: {}", xml(&c.direction), xml(&c.text));
                }
                s.push_str("</title>");
            }
            for (k, line) in n.label.iter().enumerate() {
                let cls = match line.style {
                    LineStyle::Op => " class=\"op\"",
                    LineStyle::Name => "",
                    LineStyle::Weight => " class=\"w\"",
                    LineStyle::Attribute => " class=\"a\"",
                };
                let _ = write!(
                    s,
                    "<text x=\"7\" y=\"{}\"{cls}>{}</text>",
                    r(15.0 + k as f64 * LINE_HEIGHT),
                    xml(&line.text)
                );
            }
            s.push_str("</g>");
            if n.doc.is_some() {
                s.push_str("</a>");
            }
            s.push('\n');
        }
        s.push_str("</g>\n</svg>\n");
        s
    }
}
