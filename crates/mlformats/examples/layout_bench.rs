//! Times `mlformats::layout` (a measure, not a test):
//!
//! ```sh
//! cargo run --release -p mlformats --example layout_bench [--svg DIR] [FILE...]
//! ```
//!
//! lays out generated chains of 1,000, 10,000 and 100,000 nodes, a
//! generated branching network, and every graph of each FILE given, and
//! prints the boxes, edges, layers, crossings and the time of each (with
//! `--svg DIR`, writes each drawing of fewer than 2,000 boxes there too).

use std::time::Instant;

use mlformats::graph::{Graph, Node};
use mlformats::layout::{Layout, LayoutOptions};

fn chain(n: usize) -> Graph {
    let mut g = Graph::new(format!("chain{n}"));
    for i in 0..n {
        g.nodes.push(Node::new(
            "Relu",
            format!("layer{i}"),
            [format!("x{i}")],
            [format!("x{}", i + 1)],
        ));
    }
    g.infer_inputs_outputs();
    g
}

/// Residual blocks of Conv→ReLU→Conv→Add, with a Split→Concat bypass
/// every fourth block.
fn branching(blocks: usize) -> Graph {
    let mut g = Graph::new(format!("branching{blocks}"));
    let mut x = "x".to_string();
    for b in 0..blocks {
        let n = |s: &str| format!("b{b}/{s}");
        g.nodes
            .push(Node::new("Conv", n("conv1"), [x.clone()], [n("c1")]));
        g.nodes
            .push(Node::new("Relu", n("relu"), [n("c1")], [n("r")]));
        g.nodes
            .push(Node::new("Conv", n("conv2"), [n("r")], [n("c2")]));
        g.nodes
            .push(Node::new("Add", n("add"), [x.clone(), n("c2")], [n("y")]));
        x = n("y");
        if b % 4 == 3 {
            g.nodes.push(Node::new(
                "Split",
                n("split"),
                [x.clone()],
                [n("s0"), n("s1")],
            ));
            g.nodes
                .push(Node::new("Relu", n("a"), [n("s1")], [n("a1")]));
            g.nodes
                .push(Node::new("Concat", n("cat"), [n("s0"), n("a1")], [n("z")]));
            x = n("z");
        }
    }
    g.infer_inputs_outputs();
    g
}

fn time(what: &str, g: &Graph, svg_dir: Option<&str>) {
    let t = Instant::now();
    match Layout::of_graph(g, &LayoutOptions::default()) {
        Ok(l) => {
            let laid = t.elapsed();
            let drawing = l.to_svg();
            let svg = drawing.len();
            if let Some(dir) = svg_dir.filter(|_| l.nodes.len() < 2_000) {
                let name: String = what
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                    .collect();
                let path = std::path::Path::new(dir).join(format!("{name}.svg"));
                if let Err(e) = std::fs::write(&path, &drawing) {
                    println!("{}: {e}", path.display());
                }
            }
            let json = l.to_json().to_string().len();
            println!(
                "{what}: {} boxes, {} edges, {} layers, {} crossings: layout {:.3} s, with JSON and SVG {:.3} s ({} + {} bytes)",
                l.nodes.len(),
                l.edges.len(),
                l.layers,
                l.crossings,
                laid.as_secs_f64(),
                t.elapsed().as_secs_f64(),
                json,
                svg
            );
        }
        Err(e) => println!("{what}: {e}"),
    }
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let svg_dir = match args.iter().position(|a| a == "--svg") {
        Some(i) if i + 1 < args.len() => {
            let dir = args.remove(i + 1);
            args.remove(i);
            Some(dir)
        }
        _ => None,
    };
    let svg_dir = svg_dir.as_deref();
    for n in [1_000, 10_000, 100_000] {
        time(&format!("chain of {n}"), &chain(n), svg_dir);
    }
    for b in [25, 250, 2_500] {
        time(&format!("{b} residual blocks"), &branching(b), svg_dir);
    }
    for f in args {
        match mlformats::open(&f) {
            Ok(doc) => match doc.graph() {
                Some(m) => {
                    for g in &m.graphs {
                        time(
                            &format!("{f} ({}, {} nodes)", g.name, g.nodes.len()),
                            g,
                            svg_dir,
                        );
                    }
                }
                None => println!("{f}: no graph"),
            },
            Err(e) => println!("{f}: {e}"),
        }
    }
}
