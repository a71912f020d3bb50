//! `mlformats graph`: a network as Graphviz DOT, Mermaid, or an SVG laid
//! out in-process (by the pure-Rust `layout-rs`, so no Graphviz install).
//!
//! The picture is drawn from the `graph` object of the inspect contract, so
//! every format that reports a graph can be drawn the same way.

use std::collections::HashMap;
use std::fmt::Write;

use anyhow::{Result, anyhow, bail};
use serde_json::Value;

/// Output syntax.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GraphFormat {
    /// Graphviz DOT text.
    Dot,
    /// SVG, laid out in-process.
    Svg,
    /// Mermaid flowchart text.
    Mermaid,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// A function or operator.
    Op,
    /// A data variable.
    Var,
    /// A parameter or constant (drawn small).
    Param,
}

struct Node {
    label: Vec<String>,
    shape: Shape,
}

/// Nodes and edges, independent of the output syntax.
struct Picture {
    nodes: Vec<Node>,
    edges: Vec<(usize, usize)>,
}

fn shape_text(v: Option<&Value>) -> Option<String> {
    let dims = v?.as_array()?;
    let d: Vec<String> = dims.iter().map(|x| x.to_string()).collect();
    Some(format!("[{}]", d.join(", ")))
}

fn from_nnabla(graph: &Value, network: Option<&str>) -> Result<Picture> {
    let nets = graph
        .get("networks")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let net = match network {
        Some(n) => nets
            .iter()
            .find(|x| x.get("name").and_then(Value::as_str) == Some(n))
            .ok_or_else(|| {
                let names: Vec<&str> = nets
                    .iter()
                    .filter_map(|x| x.get("name")?.as_str())
                    .collect();
                anyhow!("no network named {n:?} (networks: {})", names.join(", "))
            })?,
        None => nets
            .first()
            .ok_or_else(|| anyhow!("the file holds no network"))?,
    };
    let mut pic = Picture {
        nodes: Vec::new(),
        edges: Vec::new(),
    };
    let mut var_index = std::collections::HashMap::new();
    for v in net
        .get("variables")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = v
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string();
        let is_param = v.get("type").and_then(Value::as_str) == Some("Parameter");
        let mut label = vec![name.clone()];
        if let Some(s) = shape_text(v.get("shape")) {
            label.push(s);
        }
        var_index.insert(name, pic.nodes.len());
        pic.nodes.push(Node {
            label,
            shape: if is_param { Shape::Param } else { Shape::Var },
        });
    }
    for f in net
        .get("functions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let id = pic.nodes.len();
        let ty = f
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string();
        let name = f
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        pic.nodes.push(Node {
            label: vec![ty, name],
            shape: Shape::Op,
        });
        let mut var = |n: &str, pic: &mut Picture| -> usize {
            *var_index.entry(n.to_string()).or_insert_with(|| {
                pic.nodes.push(Node {
                    label: vec![n.to_string()],
                    shape: Shape::Var,
                });
                pic.nodes.len() - 1
            })
        };
        for i in f
            .get("inputs")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            let v = var(i, &mut pic);
            pic.edges.push((v, id));
        }
        for o in f
            .get("outputs")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            let v = var(o, &mut pic);
            pic.edges.push((id, v));
        }
    }
    Ok(pic)
}

fn from_tennis(graph: &Value, shapes: &HashMap<String, Vec<usize>>) -> Result<Picture> {
    let nodes = graph
        .get("nodes")
        .and_then(Value::as_array)
        .ok_or_else(|| anyhow!("no nodes in the graph"))?;
    let mut pic = Picture {
        nodes: Vec::new(),
        edges: Vec::new(),
    };
    for n in nodes {
        let op = n
            .get("op")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string();
        let name = n
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let shape = match op.as_str() {
            "<const>" => Shape::Param,
            "<param>" | "<var>" => Shape::Var,
            _ => Shape::Op,
        };
        let mut label = vec![op, name];
        let known = shapes.get(&format!("{}/value", label[1]));
        if let Some(dims) = known.filter(|_| shape == Shape::Param) {
            label.push(format!("{dims:?}"));
        }
        pic.nodes.push(Node { label, shape });
    }
    for (j, n) in nodes.iter().enumerate() {
        for i in n
            .get("inputs")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_u64)
        {
            let i = usize::try_from(i).ok().filter(|&i| i < pic.nodes.len());
            match i {
                Some(i) => pic.edges.push((i, j)),
                None => bail!("node {j} has an input index out of range"),
            }
        }
    }
    Ok(pic)
}

fn dot_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

fn to_dot(p: &Picture) -> String {
    let mut s = String::from("digraph G {\n  rankdir=TB;\n");
    for (i, n) in p.nodes.iter().enumerate() {
        let label = n
            .label
            .iter()
            .map(|l| dot_escape(l))
            .collect::<Vec<_>>()
            .join("\\n");
        let attrs = match n.shape {
            Shape::Op => "shape=box, style=filled, fillcolor=\"#dbe8f9\"",
            Shape::Var => "shape=ellipse",
            Shape::Param => "shape=box, fontsize=9, style=filled, fillcolor=\"#f3f3f3\"",
        };
        let _ = writeln!(s, "  n{i} [label=\"{label}\", {attrs}];");
    }
    for (a, b) in &p.edges {
        let _ = writeln!(s, "  n{a} -> n{b};");
    }
    s.push_str("}\n");
    s
}

fn mermaid_escape(s: &str) -> String {
    s.replace('"', "#quot;")
        .replace('<', "#lt;")
        .replace('>', "#gt;")
}

fn to_mermaid(p: &Picture) -> String {
    let mut s = String::from("flowchart TD\n");
    for (i, n) in p.nodes.iter().enumerate() {
        let label = n
            .label
            .iter()
            .map(|l| mermaid_escape(l))
            .collect::<Vec<_>>()
            .join("<br/>");
        let _ = match n.shape {
            Shape::Op => writeln!(s, "  n{i}[\"{label}\"]"),
            Shape::Var => writeln!(s, "  n{i}([\"{label}\"])"),
            Shape::Param => writeln!(s, "  n{i}[/\"{label}\"/]"),
        };
    }
    for (a, b) in &p.edges {
        let _ = writeln!(s, "  n{a} --> n{b}");
    }
    s
}

fn to_svg(p: &Picture) -> Result<String> {
    use layout::backends::svg::SVGWriter;
    use layout::core::base::Orientation;
    use layout::core::geometry::Point;
    use layout::core::style::StyleAttr;
    use layout::std_shapes::shapes::{Arrow, Element, ShapeKind};
    use layout::topo::layout::VisualGraph;

    // layout-rs asserts on some inputs; keep a panic there from reaching
    // the user as a crash, and from printing its message.
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = std::panic::catch_unwind(|| {
        let mut vg = VisualGraph::new(Orientation::TopToBottom);
        let handles: Vec<_> = p
            .nodes
            .iter()
            .map(|n| {
                let text = n.label.join("\n");
                let longest = n.label.iter().map(|l| l.chars().count()).max().unwrap_or(1) as f64;
                let (kind, font, fill) = match n.shape {
                    Shape::Op => (ShapeKind::new_box(&text), 14, "#dbe8f9"),
                    Shape::Var => (ShapeKind::new_circle(&text), 14, "white"),
                    Shape::Param => (ShapeKind::new_box(&text), 10, "#f3f3f3"),
                };
                let w = (longest * font as f64 * 0.62 + 20.0).max(40.0);
                let h = (n.label.len() as f64 * font as f64 * 1.3 + 14.0).max(30.0);
                let mut look = StyleAttr::simple();
                look.font_size = font;
                look.fill_color = Some(layout::core::color::Color::fast(fill));
                vg.add_node(Element::create(
                    kind,
                    look,
                    Orientation::TopToBottom,
                    Point::new(w, h),
                ))
            })
            .collect();
        for &(a, b) in &p.edges {
            vg.add_edge(Arrow::simple(""), handles[a], handles[b]);
        }
        let mut svg = SVGWriter::new();
        vg.do_it(false, false, false, &mut svg);
        svg.finalize()
    });
    std::panic::set_hook(previous);
    result.map_err(|_| {
        anyhow!("the SVG layout failed on this graph; use --format dot and render it with Graphviz")
    })
}

/// Renders the `graph` object of an inspect report; `shapes` (tensor name
/// to dims, from the same report) labels TenniS constants with their shape.
pub fn render(
    graph: &Value,
    shapes: &HashMap<String, Vec<usize>>,
    format: GraphFormat,
    network: Option<&str>,
) -> Result<String> {
    let pic = if graph.get("networks").is_some() {
        from_nnabla(graph, network)?
    } else if graph.get("nodes").is_some() {
        if network.is_some() {
            bail!("--network applies to NNabla files; a TenniS module has one graph");
        }
        from_tennis(graph, shapes)?
    } else {
        bail!("the file holds no graph");
    };
    Ok(match format {
        GraphFormat::Dot => to_dot(&pic),
        GraphFormat::Mermaid => to_mermaid(&pic),
        GraphFormat::Svg => to_svg(&pic)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn nnabla() -> Value {
        json!({"networks": [{"name": "net", "batch_size": 1,
            "variables": [{"name": "x", "type": "Buffer", "shape": [1, 4]},
                          {"name": "fc/W", "type": "Parameter", "shape": [4, 2]},
                          {"name": "y", "type": "Buffer", "shape": [1, 2]}],
            "functions": [{"name": "fc", "type": "Affine", "inputs": ["x", "fc/W"], "outputs": ["y"]}]}],
            "executors": [], "optimizers": [], "datasets": [], "monitors": []})
    }

    #[test]
    fn dot_and_mermaid_of_an_nnabla_network() {
        let dot = render(&nnabla(), &HashMap::new(), GraphFormat::Dot, None).unwrap();
        assert!(
            dot.contains("n3 [label=\"Affine\\nfc\", shape=box"),
            "{dot}"
        );
        assert!(
            dot.contains("n1 [label=\"fc/W\\n[4, 2]\", shape=box, fontsize=9"),
            "{dot}"
        );
        assert!(
            dot.contains("n0 -> n3;") && dot.contains("n3 -> n2;"),
            "{dot}"
        );
        let m = render(
            &nnabla(),
            &HashMap::new(),
            GraphFormat::Mermaid,
            Some("net"),
        )
        .unwrap();
        assert!(
            m.starts_with("flowchart TD\n") && m.contains("n1[/\"fc/W<br/>[4, 2]\"/]"),
            "{m}"
        );
        assert!(
            render(&nnabla(), &HashMap::new(), GraphFormat::Dot, Some("other"))
                .unwrap_err()
                .to_string()
                .contains("net")
        );
    }

    #[test]
    fn svg_of_a_tennis_module() {
        let g = json!({"inputs": [0], "outputs": [2], "nodes": [
            {"op": "<param>", "name": "x", "inputs": [], "params": ["#name", "#op"]},
            {"op": "<const>", "name": "c", "inputs": [], "params": ["#name", "#op", "value"]},
            {"op": "add", "name": "y", "inputs": [0, 1], "params": ["#name", "#op"]}]});
        let shapes = HashMap::from([("c/value".to_string(), vec![2, 3])]);
        let svg = render(&g, &shapes, GraphFormat::Svg, None).unwrap();
        assert!(svg.contains("[2, 3]"), "{svg}");
        assert!(
            svg.contains("<svg") && svg.contains("add") && svg.contains("&lt;const&gt;"),
            "{svg}"
        );
        let bad = json!({"nodes": [{"op": "a", "name": "a", "inputs": [5]}]});
        assert!(render(&bad, &HashMap::new(), GraphFormat::Dot, None).is_err());
        assert!(render(&json!(null), &HashMap::new(), GraphFormat::Dot, None).is_err());
    }
}
