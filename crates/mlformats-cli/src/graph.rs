//! `mlformats graph`: a network as Graphviz DOT, Mermaid, or laid out
//! in-process by the library's layered layout (`mlformats::layout`, near
//! linear time, no Graphviz install) as SVG or as the layout's JSON.
//!
//! The picture is drawn from the library's typed graph, so every format
//! that has one is drawn the same way. DOT and Mermaid are written in one
//! pass over the nodes and edges.

use std::collections::HashMap;
use std::fmt::Write;

use anyhow::{Result, anyhow, bail};
use mlformats::Document;
use mlformats::graph::Graph;
use mlformats::layout::{Direction, Layout, LayoutOptions, OpSet};
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::failure::{AtPath, Failure};
use crate::{Durability, FormatArg, open_structure, print, stdout};

/// Output syntax.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GraphFormat {
    /// Graphviz DOT text.
    Dot,
    /// SVG, laid out in-process (operators as boxes, weights folded in).
    Svg,
    /// Mermaid flowchart text.
    Mermaid,
    /// The layout behind `svg` as JSON: boxes with coordinates, edges as
    /// polylines (docs/LAYOUT_JSON.md).
    Layout,
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

fn shape_text(dims: &[i64]) -> String {
    let d: Vec<String> = dims.iter().map(|x| x.to_string()).collect();
    format!("[{}]", d.join(", "))
}

/// The picture of one typed graph: NNabla variables are drawn as values
/// and functions as operators; TenniS nodes are drawn as they are (each
/// node one box, constants labelled with their tensor's shape).
fn picture(g: &Graph, doc: &Document, per_node_values: bool) -> Picture {
    let mut pic = Picture {
        nodes: Vec::new(),
        edges: Vec::new(),
    };
    let values: HashMap<&str, &mlformats::graph::ValueInfo> =
        g.values.iter().map(|v| (v.name.as_str(), v)).collect();
    if per_node_values {
        let index: HashMap<&str, usize> = g
            .nodes
            .iter()
            .enumerate()
            .flat_map(|(i, n)| n.outputs.iter().map(move |o| (o.as_str(), i)))
            .collect();
        for n in &g.nodes {
            let shape = match n.op.as_str() {
                "<const>" => Shape::Param,
                "<param>" | "<var>" => Shape::Var,
                _ => Shape::Op,
            };
            let mut label = vec![n.op.clone(), n.name.clone()];
            let dims = n
                .outputs
                .first()
                .and_then(|o| values.get(o.as_str()))
                .and_then(|v| v.tensor.as_deref())
                .and_then(|t| doc.entry(t));
            if let Some(t) = dims.filter(|_| shape == Shape::Param) {
                label.push(format!("{:?}", t.dims()));
            }
            pic.nodes.push(Node { label, shape });
        }
        for (j, n) in g.nodes.iter().enumerate() {
            for i in n.inputs.iter().filter_map(|i| index.get(i.as_str())) {
                pic.edges.push((*i, j));
            }
        }
        return pic;
    }
    let mut var_index = HashMap::new();
    for v in &g.values {
        let mut label = vec![v.name.clone()];
        if let Some(s) = &v.shape {
            label.push(shape_text(s));
        }
        var_index.insert(v.name.clone(), pic.nodes.len());
        pic.nodes.push(Node {
            label,
            shape: if v.kind.is_stored() {
                Shape::Param
            } else {
                Shape::Var
            },
        });
    }
    for f in &g.nodes {
        let id = pic.nodes.len();
        pic.nodes.push(Node {
            label: vec![f.op.clone(), f.name.clone()],
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
        for i in &f.inputs {
            let v = var(i, &mut pic);
            pic.edges.push((v, id));
        }
        for o in &f.outputs {
            let v = var(o, &mut pic);
            pic.edges.push((id, v));
        }
    }
    pic
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

/// Which way `--to svg` and `--to layout` run the layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum GraphDirection {
    /// Top to bottom: inputs at the top.
    #[default]
    Tb,
    /// Left to right: inputs on the left.
    Lr,
}

/// How `--to svg` and `--to layout` draw: which way the layers run, the
/// groups drawn closed (`--collapse`), the subgraphs drawn open
/// (`--expand`) and what the boxes show (`--hide-names`, `--hide-weights`,
/// `--attributes`).
#[derive(Debug, Default)]
pub struct Drawing {
    /// Which way the layers run.
    pub direction: GraphDirection,
    /// Groups drawn closed.
    pub collapse: Vec<String>,
    /// Nodes whose subgraphs are drawn open.
    pub expand: Vec<String>,
    /// Boxes without their node's name.
    pub hide_names: bool,
    /// Boxes without their folded weights.
    pub hide_weights: bool,
    /// Boxes with up to four attributes with short values.
    pub attributes: bool,
}

/// The network laid out by the library (`mlformats::layout`, near-linear
/// time; its limits refuse graphs too large to draw).
fn laid_out(g: &Graph, doc: &Document, drawing: &Drawing) -> Result<Layout> {
    let shape_of = |name: &str| -> Option<Vec<i64>> {
        let t = doc.entry(name)?;
        t.dims().iter().map(|&d| i64::try_from(d).ok()).collect()
    };
    let mut options = LayoutOptions::default();
    options.direction = match drawing.direction {
        GraphDirection::Tb => Direction::TopToBottom,
        GraphDirection::Lr => Direction::LeftToRight,
    };
    options.op_set = OpSet::of_format(doc.format());
    options.collapsed = drawing.collapse.clone();
    options.expanded = drawing.expand.clone();
    options.labels.names = !drawing.hide_names;
    options.labels.weights = !drawing.hide_weights;
    options.labels.attributes = drawing.attributes;
    Layout::of_graph_with(g, &options, &shape_of).map_err(|e| {
        anyhow!(
            "{e}; draw one network with --network NAME, or write the graph as text with --to dot or --to mermaid"
        )
    })
}

/// Renders the network of `doc` (NNabla: the network named `network`, or
/// the first executor's, else the first; TenniS: the module), its layers
/// drawn as `drawing` says (SVG and layout only).
pub fn render(
    doc: &Document,
    format: GraphFormat,
    network: Option<&str>,
    drawing: &Drawing,
) -> Result<String> {
    let Some(model) = doc.graph() else {
        bail!("the file holds no graph");
    };
    let tennis = doc.format() == mlformats::Format::TennisModule;
    if tennis && network.is_some() {
        bail!("--network applies to NNabla files; a TenniS module has one graph");
    }
    let g = match network {
        Some(n) => model.graph(n).ok_or_else(|| {
            let names: Vec<&str> = model.graphs.iter().map(|g| g.name.as_str()).collect();
            anyhow!("no network named {n:?} (networks: {})", names.join(", "))
        })?,
        // the network `convert` exports: the first executor's, else the first
        None => model
            .executors
            .first()
            .and_then(|e| model.graph(&e.network))
            .or_else(|| model.graphs.first())
            .ok_or_else(|| anyhow!("the file holds no network"))?,
    };
    // DOT and Mermaid draw every value; the layout folds weights into
    // their users (as the viewer page does)
    Ok(match format {
        GraphFormat::Dot => to_dot(&picture(g, doc, tennis)),
        GraphFormat::Mermaid => to_mermaid(&picture(g, doc, tennis)),
        GraphFormat::Svg => laid_out(g, doc, drawing)?.to_svg(),
        GraphFormat::Layout => {
            let mut s = serde_json::to_string_pretty(&laid_out(g, doc, drawing)?.to_json())?;
            s.push('\n');
            s
        }
    })
}

/// Runs `graph`: draws the network to stdout or to a file.
pub fn command(
    file: PathBuf,
    format: GraphFormat,
    from: Option<FormatArg>,
    network: Option<String>,
    drawing: Drawing,
    output: Option<PathBuf>,
    durability: Durability,
) -> Result<ExitCode, Failure> {
    let doc = open_structure(&file, from.map(|f| f.0))?;
    let text = render(&doc, format, network.as_deref(), &drawing).at(&file)?;
    match output.filter(|o| !stdout::is_stdout(o)) {
        Some(out) => tensor_core::io::write_atomic_with(
            &out,
            &durability.options(),
            |w| -> anyhow::Result<()> {
                w.write_all(text.as_bytes())?;
                Ok(())
            },
        )
        .at(&out)?,
        None => print(text.as_bytes()),
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(name: &str) -> Document {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata")
            .join(name);
        Document::open(p).unwrap()
    }

    #[test]
    fn dot_and_mermaid_of_an_nnabla_network() {
        let d = doc("nnabla/mlp.nntxt");
        let dot = render(&d, GraphFormat::Dot, None, &Drawing::default()).unwrap();
        assert!(dot.contains("label=\"Affine\\n"), "{dot}");
        assert!(dot.contains("shape=box, fontsize=9"), "{dot}");
        let m = render(&d, GraphFormat::Mermaid, None, &Drawing::default()).unwrap();
        assert!(m.starts_with("flowchart TD\n") && m.contains("-->"), "{m}");
        let e = render(&d, GraphFormat::Dot, Some("other"), &Drawing::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("no network named \"other\""), "{e}");
    }

    #[test]
    fn svg_of_a_tennis_module() {
        let d = doc("tennis/py_add_const.tsm");
        let svg = render(&d, GraphFormat::Svg, None, &Drawing::default()).unwrap();
        // the constant is folded into `add`, which reads it
        assert!(svg.starts_with("<svg") && svg.contains("c ⟨3⟩"), "{svg}");
        assert_eq!(svg.matches(" rx=\"4\"").count(), 3, "x, add, y: {svg}");
        assert_eq!(svg.matches("<polyline").count(), 2, "{svg}");
        assert!(svg.contains("marker-end=\"url(#arrow)\""), "{svg}");
        assert!(render(&d, GraphFormat::Dot, Some("x"), &Drawing::default()).is_err());
        assert!(
            render(
                &doc("cvm/two_entry.params"),
                GraphFormat::Dot,
                None,
                &Drawing::default()
            )
            .is_err()
        );
    }

    #[test]
    fn layout_json_of_an_nnabla_network() {
        let d = doc("nnabla/convnet.nnp");
        let text = render(&d, GraphFormat::Layout, None, &Drawing::default()).unwrap();
        let j: serde_json::Value = serde_json::from_str(&text).unwrap();
        let ops: Vec<&str> = j["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["op"].as_str().unwrap())
            .collect();
        assert_eq!(ops.first(), Some(&"input"), "{ops:?}");
        assert!(ops.contains(&"Convolution") && ops.last() == Some(&"output"));
        let edges = j["edges"].as_array().unwrap();
        assert_eq!(edges.len(), ops.len() - 1, "a chain");
        for e in edges {
            assert!(e["points"].as_array().unwrap().len() >= 2, "{e}");
            assert!(e["tensor"].is_string() && e["from"].is_u64() && e["to"].is_u64());
        }
        assert_eq!(j["crossings"], 0);
    }
}
