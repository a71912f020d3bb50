//! The layered graph (boxes and routing points, every edge between adjacent
//! layers) and the order within each layer (barycenter sweeps).

use super::rank::{Adjacency, Ranked};

/// Boxes and routing points in ordered layers.
pub(crate) struct Layered {
    /// Boxes are `0..real`; routing points ("dummies") follow.
    pub real: usize,
    /// Layer of every point.
    pub layer_of: Vec<usize>,
    /// Each layer's points, left to right.
    pub layers: Vec<Vec<usize>>,
    /// Index of every point in its layer.
    pub pos: Vec<usize>,
    /// Edges between adjacent layers, (upper, lower), each once.
    pub links: Vec<(usize, usize)>,
    /// Links by upper point.
    pub down: Adjacency,
    /// Links by lower point.
    pub up: Adjacency,
    /// Per original edge: upper box, lower box, span in layers, reversed.
    pub paths: Vec<(usize, usize, usize, bool)>,
    /// First routing point of each box's column (meaningful when it has one).
    pub chain: Vec<usize>,
}

impl Layered {
    /// The layered graph of ranked boxes; `None` when the long edges would
    /// need more than `max_points` routing points.
    pub(crate) fn build(
        r: &Ranked,
        edges: &[(usize, usize)],
        max_points: usize,
    ) -> Option<Layered> {
        let real = r.layer.len();
        let mut paths = Vec::with_capacity(edges.len());
        // the longest span leaving each box sets the length of its column
        let mut column = vec![0usize; real];
        for (i, &(a, b)) in edges.iter().enumerate() {
            let (s, t) = if r.reversed[i] { (b, a) } else { (a, b) };
            let span = r.layer[t].checked_sub(r.layer[s]).filter(|&d| d > 0)?;
            column[s] = column[s].max(span - 1);
            paths.push((s, t, span, r.reversed[i]));
        }
        // the polylines' points, bounded too (edges share columns)
        let mut drawn = 0usize;
        for &(_, _, span, _) in &paths {
            drawn = drawn.checked_add(span - 1).filter(|&t| t <= max_points)?;
        }
        let mut total = 0usize;
        let mut chain = vec![0usize; real];
        for s in 0..real {
            chain[s] = real + total;
            total = total.checked_add(column[s]).filter(|&t| t <= max_points)?;
        }
        let count = real + total;
        let mut layer_of = r.layer.clone();
        layer_of.resize(count, 0);
        for s in 0..real {
            for k in 0..column[s] {
                layer_of[chain[s] + k] = r.layer[s] + 1 + k;
            }
        }
        let mut links = Vec::with_capacity(edges.len() + total);
        for &(s, t, span, _) in &paths {
            if span == 1 {
                links.push((s, t));
            } else {
                links.push((chain[s] + span - 2, t));
            }
        }
        for s in 0..real {
            if column[s] > 0 {
                links.push((s, chain[s]));
            }
            for k in 1..column[s] {
                links.push((chain[s] + k - 1, chain[s] + k));
            }
        }
        links.sort_unstable();
        links.dedup();
        let down = Adjacency::group(count, links.iter().map(|l| l.0));
        let up = Adjacency::group(count, links.iter().map(|l| l.1));
        let layer_count = layer_of.iter().max().map_or(0, |&m| m + 1);
        let mut layers = vec![Vec::new(); layer_count];
        let mut pos = vec![0usize; count];
        for (v, &l) in layer_of.iter().enumerate() {
            pos[v] = layers[l].len();
            layers[l].push(v);
        }
        Some(Layered {
            real,
            layer_of,
            layers,
            pos,
            links,
            down,
            up,
            paths,
            chain,
        })
    }

    /// Whether original edge `i` was laid out upwards.
    pub(crate) fn edge_reversed(&self, i: usize) -> bool {
        self.paths[i].3
    }

    /// The points of original edge `i`, from its upper box to its lower one.
    pub(crate) fn path(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        let (s, t, span, _) = self.paths[i];
        let c = self.chain[s];
        std::iter::once(s)
            .chain((0..span - 1).map(move |k| c + k))
            .chain(std::iter::once(t))
    }

    /// Neighbours of `v` in the layer below.
    pub(crate) fn below(&self, v: usize) -> impl Iterator<Item = usize> + '_ {
        self.down.of(v).iter().map(|&e| self.links[e].1)
    }

    /// Neighbours of `v` in the layer above.
    pub(crate) fn above(&self, v: usize) -> impl Iterator<Item = usize> + '_ {
        self.up.of(v).iter().map(|&e| self.links[e].0)
    }

    fn sweep_layer(&mut self, l: usize, downwards: bool, key: &mut [f64]) {
        let layer = std::mem::take(&mut self.layers[l]);
        for &v in &layer {
            let (sum, n) = if downwards {
                self.above(v)
                    .fold((0.0, 0usize), |(s, n), u| (s + self.pos[u] as f64, n + 1))
            } else {
                self.below(v)
                    .fold((0.0, 0usize), |(s, n), u| (s + self.pos[u] as f64, n + 1))
            };
            key[v] = if n == 0 {
                self.pos[v] as f64
            } else {
                sum / n as f64
            };
        }
        let mut layer = layer;
        layer.sort_by(|a, b| key[*a].total_cmp(&key[*b]));
        for (i, &v) in layer.iter().enumerate() {
            self.pos[v] = i;
        }
        self.layers[l] = layer;
    }

    /// Reorders the layers by `rounds` of barycenter sweeps (down then up),
    /// keeping the order with the fewest crossings; returns that count.
    pub(crate) fn reduce_crossings(&mut self, rounds: usize) -> u64 {
        let mut key = vec![0.0f64; self.layer_of.len()];
        let mut best = self.crossings();
        let mut best_layers = self.layers.clone();
        for _ in 0..rounds {
            if best == 0 {
                break;
            }
            for l in 1..self.layers.len() {
                self.sweep_layer(l, true, &mut key);
            }
            for l in (0..self.layers.len().saturating_sub(1)).rev() {
                self.sweep_layer(l, false, &mut key);
            }
            let c = self.crossings();
            if c < best {
                best = c;
                best_layers.clone_from(&self.layers);
            }
        }
        self.layers = best_layers;
        for layer in &self.layers {
            for (i, &v) in layer.iter().enumerate() {
                self.pos[v] = i;
            }
        }
        best
    }

    /// Crossings between adjacent layers: inversions of the lower ends of
    /// the links taken in upper order, counted with a Fenwick tree.
    pub(crate) fn crossings(&self) -> u64 {
        let mut total = 0u64;
        let mut tree: Vec<u64> = Vec::new();
        let mut ends: Vec<usize> = Vec::new();
        for l in 0..self.layers.len().saturating_sub(1) {
            let width = self.layers[l + 1].len();
            tree.clear();
            tree.resize(width + 1, 0);
            let mut seen = 0u64;
            for &u in &self.layers[l] {
                ends.clear();
                ends.extend(self.below(u).map(|w| self.pos[w]));
                ends.sort_unstable();
                for &p in &ends {
                    // links seen so far ending right of p cross this one
                    let mut at_or_left = 0u64;
                    let mut i = p + 1;
                    while i > 0 {
                        at_or_left += tree[i];
                        i -= i & i.wrapping_neg();
                    }
                    total += seen - at_or_left;
                }
                for &p in &ends {
                    let mut i = p + 1;
                    while i <= width {
                        tree[i] += 1;
                        i += i & i.wrapping_neg();
                    }
                    seen += 1;
                }
            }
        }
        total
    }
}
