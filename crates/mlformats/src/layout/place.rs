//! Coordinates: x by weighted-mean passes, each layer solved exactly as an
//! isotonic regression (pool adjacent violators, linear); y by layers;
//! edges routed through their routing points.

use super::order::Layered;

/// Space between two boxes of a layer.
const BOX_GAP: f64 = 24.0;
/// Space between a box and a routing point.
const POINT_GAP: f64 = 12.0;
/// Space between two routing points.
const POINTS_GAP: f64 = 8.0;
/// Space between layers (where edges run diagonally).
const LAYER_GAP: f64 = 44.0;

/// Where everything went.
pub(crate) struct Placed {
    /// Centre x of every point (boxes and routing points).
    pub x: Vec<f64>,
    /// Top of every box.
    pub top: Vec<f64>,
    /// Top of every layer's band of boxes.
    pub layer_top: Vec<f64>,
    /// Bottom of every layer's band of boxes.
    pub layer_bottom: Vec<f64>,
    /// Box sizes (width, height).
    pub sizes: Vec<(f64, f64)>,
    /// Per box: the layer positions of its neighbours below, sorted.
    pub below: Vec<Vec<usize>>,
    /// Per box: the layer positions of its neighbours above, sorted.
    pub above: Vec<Vec<usize>>,
    /// Width of the drawing.
    pub width: f64,
    /// Height of the drawing.
    pub height: f64,
}

fn half_width(l: &Layered, sizes: &[(f64, f64)], v: usize) -> f64 {
    if v < l.real { sizes[v].0 / 2.0 } else { 0.0 }
}

fn gap(l: &Layered, sizes: &[(f64, f64)], a: usize, b: usize) -> f64 {
    let sep = match (a < l.real, b < l.real) {
        (true, true) => BOX_GAP,
        (false, false) => POINTS_GAP,
        _ => POINT_GAP,
    };
    half_width(l, sizes, a) + half_width(l, sizes, b) + sep
}

/// How strongly a link pulls its two ends into line: long edges most.
fn weight(l: &Layered, a: usize, b: usize) -> f64 {
    match (a < l.real, b < l.real) {
        (true, true) => 1.0,
        (false, false) => 8.0,
        _ => 2.0,
    }
}

/// Places layer `layer` as close to `want` (weighted) as its gaps allow:
/// with offsets o (the summed gaps), y = x - o must not decrease, and the
/// best such y is the weighted isotonic regression of want - o.
fn fit(layer: &[usize], want: &[(f64, f64)], x: &mut [f64], sep: impl Fn(usize, usize) -> f64) {
    // blocks of pooled points: (weight, weighted sum, count)
    let mut blocks: Vec<(f64, f64, usize)> = Vec::with_capacity(layer.len());
    let mut offset = 0.0;
    for (i, &v) in layer.iter().enumerate() {
        if i > 0 {
            offset += sep(layer[i - 1], v);
        }
        let (target, w) = want[i];
        blocks.push((w, w * (target - offset), 1));
        while blocks.len() > 1 {
            let (w2, s2, n2) = blocks[blocks.len() - 1];
            let (w1, s1, n1) = blocks[blocks.len() - 2];
            if s1 / w1 <= s2 / w2 {
                break;
            }
            blocks.pop();
            let last = blocks.len() - 1;
            blocks[last] = (w1 + w2, s1 + s2, n1 + n2);
        }
    }
    let mut i = 0;
    let mut offset = 0.0;
    for (w, s, n) in blocks {
        let y = s / w;
        for _ in 0..n {
            let v = layer[i];
            if i > 0 {
                offset += sep(layer[i - 1], v);
            }
            x[v] = y + offset;
            i += 1;
        }
    }
}

/// One pass over the layers, each pulled towards its neighbours above
/// (`downwards`) or below.
fn pass(l: &Layered, sizes: &[(f64, f64)], x: &mut [f64], downwards: bool) {
    let order: Vec<usize> = if downwards {
        (1..l.layers.len()).collect()
    } else {
        (0..l.layers.len().saturating_sub(1)).rev().collect()
    };
    let mut want = Vec::new();
    for li in order {
        let layer = &l.layers[li];
        want.clear();
        for &v in layer {
            let (mut sum, mut total) = (0.0, 0.0);
            let mut add = |u: usize| {
                let w = weight(l, u, v);
                sum += w * x[u];
                total += w;
            };
            if downwards {
                l.above(v).for_each(&mut add);
            } else {
                l.below(v).for_each(&mut add);
            }
            want.push(if total > 0.0 {
                (sum / total, total)
            } else {
                (x[v], 0.25)
            });
        }
        fit(layer, &want, x, |a, b| gap(l, sizes, a, b));
    }
}

/// Places the layered graph; `sizes` are the boxes' (width, height).
pub(crate) fn place(l: &Layered, sizes: &[(f64, f64)], rounds: usize) -> Placed {
    let count = l.layer_of.len();
    let mut x = vec![0.0f64; count];
    for layer in &l.layers {
        let mut at = 0.0;
        for (i, &v) in layer.iter().enumerate() {
            if i > 0 {
                at += gap(l, sizes, layer[i - 1], v);
            }
            x[v] = at;
        }
    }
    for _ in 0..rounds {
        pass(l, sizes, &mut x, true);
        pass(l, sizes, &mut x, false);
    }
    let left = (0..count)
        .map(|v| x[v] - half_width(l, sizes, v))
        .fold(f64::INFINITY, f64::min);
    let right = (0..count)
        .map(|v| x[v] + half_width(l, sizes, v))
        .fold(f64::NEG_INFINITY, f64::max);
    let left = if left.is_finite() { left } else { 0.0 };
    for v in x.iter_mut() {
        *v -= left;
    }
    let mut layer_top = Vec::with_capacity(l.layers.len());
    let mut layer_bottom = Vec::with_capacity(l.layers.len());
    let mut top = vec![0.0f64; l.real];
    let mut y = 0.0;
    for layer in &l.layers {
        let h = layer
            .iter()
            .filter(|&&v| v < l.real)
            .map(|&v| sizes[v].1)
            .fold(0.0, f64::max);
        for &v in layer.iter().filter(|&&v| v < l.real) {
            top[v] = y + (h - sizes[v].1) / 2.0;
        }
        layer_top.push(y);
        layer_bottom.push(y + h);
        y += h + LAYER_GAP;
    }
    Placed {
        x,
        top,
        width: if right.is_finite() { right - left } else { 0.0 },
        height: layer_bottom.last().copied().unwrap_or(0.0),
        layer_top,
        layer_bottom,
        sizes: sizes.to_vec(),
        below: (0..l.real)
            .map(|v| sorted(l.below(v).map(|u| l.pos[u])))
            .collect(),
        above: (0..l.real)
            .map(|v| sorted(l.above(v).map(|u| l.pos[u])))
            .collect(),
    }
}

fn sorted(it: impl Iterator<Item = usize>) -> Vec<usize> {
    let mut v: Vec<usize> = it.collect();
    v.sort_unstable();
    v
}

/// Where an edge leaves (towards `other` below) or enters (from `other`
/// above) box `v`: spread along its border in the order of its neighbours.
fn port(l: &Layered, p: &Placed, v: usize, other: usize, downwards: bool) -> f64 {
    if v >= l.real {
        return p.x[v];
    }
    let ends = if downwards { &p.below[v] } else { &p.above[v] };
    let k = ends.len();
    let i = ends.partition_point(|&e| e < l.pos[other]);
    let w = p.sizes[v].0;
    p.x[v] - w / 2.0 + w * (i + 1) as f64 / (k + 1) as f64
}

/// Most a polyline is moved sideways to part it from the other edges
/// joining the same two boxes, which share its ports and routing points.
const PARALLEL_SPREAD: f64 = 3.0;

/// The polylines of all original edges ([`route`]), `ends[i]` the boxes
/// edge `i` joins: edges joining the same two boxes (either way round, as
/// a cycle's edge beside a forward one) would run on one line, so each is
/// moved sideways by up to [`PARALLEL_SPREAD`], its ends kept on its
/// boxes: every one of them is seen.
pub(crate) fn routes(l: &Layered, p: &Placed, ends: &[(usize, usize)]) -> Vec<Vec<(f64, f64)>> {
    let mut by_pair: std::collections::HashMap<(usize, usize), Vec<usize>> =
        std::collections::HashMap::new();
    for (i, &(a, b)) in ends.iter().enumerate() {
        by_pair.entry((a.min(b), a.max(b))).or_default().push(i);
    }
    let mut dx = vec![0.0; ends.len()];
    for same in by_pair.values().filter(|v| v.len() > 1) {
        let k = (same.len() - 1) as f64;
        let step = 2.0 * PARALLEL_SPREAD / k;
        for (j, &i) in same.iter().enumerate() {
            dx[i] = j as f64 * step - PARALLEL_SPREAD;
        }
    }
    (0..ends.len()).map(|i| route(l, p, i, dx[i])).collect()
}

/// The polyline of original edge `i`, from its `from` box to its `to` box,
/// moved `dx` sideways (its ends kept 2 px inside their boxes' sides).
fn route(l: &Layered, p: &Placed, i: usize, dx: f64) -> Vec<(f64, f64)> {
    let path: Vec<usize> = l.path(i).collect();
    let mut pts: Vec<(f64, f64)> = Vec::with_capacity(2 * path.len());
    // consecutive points on one vertical line become one segment
    let mut push = |pt: (f64, f64)| {
        let n = pts.len();
        if pts.last() == Some(&pt) {
            return;
        }
        if n >= 2 && pts[n - 1].0 == pt.0 && pts[n - 2].0 == pt.0 {
            pts[n - 1] = pt;
        } else {
            pts.push(pt);
        }
    };
    let (s, t) = (path[0], path[path.len() - 1]);
    let xs = port(l, p, s, path[1], true);
    push((xs, p.top[s] + p.sizes[s].1));
    push((xs, p.layer_bottom[l.layer_of[s]]));
    for &d in &path[1..path.len() - 1] {
        push((p.x[d], p.layer_top[l.layer_of[d]]));
        push((p.x[d], p.layer_bottom[l.layer_of[d]]));
    }
    let xt = port(l, p, t, path[path.len() - 2], false);
    push((xt, p.layer_top[l.layer_of[t]]));
    push((xt, p.top[t]));
    if dx != 0.0 {
        let inside = |v: usize, x: f64| {
            let half = (p.sizes[v].0 / 2.0 - 2.0).max(0.0);
            x.clamp(p.x[v] - half, p.x[v] + half)
        };
        for q in &mut pts {
            q.0 += dx;
        }
        let last = pts.len() - 1;
        pts[0].0 = inside(s, pts[0].0);
        pts[last].0 = inside(t, pts[last].0);
    }
    if l.edge_reversed(i) {
        pts.reverse();
    }
    pts
}
