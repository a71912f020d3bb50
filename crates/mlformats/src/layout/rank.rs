//! Layers: cycles broken by reversing back edges, then longest path from
//! the sources, sources moved down next to their first reader. O(V + E).

/// The layer of every box and which edges were reversed.
pub(crate) struct Ranked {
    /// Layer of each box, 0 at the top.
    pub layer: Vec<usize>,
    /// Per edge: laid out from `to` to `from`.
    pub reversed: Vec<bool>,
}

/// Outgoing edge indices per node, as one flat array (CSR).
pub(crate) struct Adjacency {
    start: Vec<usize>,
    items: Vec<usize>,
}

impl Adjacency {
    /// Groups `keys[i]` (each < n) by key, keeping each group in index order.
    pub(crate) fn group(n: usize, keys: impl Iterator<Item = usize> + Clone) -> Adjacency {
        let mut start = vec![0usize; n + 1];
        for k in keys.clone() {
            start[k + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut items = vec![0usize; start[n]];
        for (i, k) in keys.enumerate() {
            items[fill[k]] = i;
            fill[k] += 1;
        }
        Adjacency { start, items }
    }

    /// The items of group `k`.
    pub(crate) fn of(&self, k: usize) -> &[usize] {
        &self.items[self.start[k]..self.start[k + 1]]
    }
}

/// Ranks `n` boxes joined by `edges` (from, to), none a self-loop; with
/// `pins`, the boxes its first list marks stay in layer 0 and those its
/// second marks go to the last layer.
pub(crate) fn rank(
    n: usize,
    edges: &[(usize, usize)],
    pins: Option<&(Vec<bool>, Vec<bool>)>,
) -> Ranked {
    let out = Adjacency::group(n, edges.iter().map(|e| e.0));
    let reversed = back_edges(n, edges, &out);
    let dag = |i: usize| -> (usize, usize) {
        let (a, b) = edges[i];
        if reversed[i] { (b, a) } else { (a, b) }
    };
    let dag_out = Adjacency::group(n, (0..edges.len()).map(|i| dag(i).0));
    // Kahn's order: longest path from the sources
    let mut indegree = vec![0usize; n];
    for i in 0..edges.len() {
        indegree[dag(i).1] += 1;
    }
    let mut queue: Vec<usize> = (0..n).filter(|&v| indegree[v] == 0).collect();
    let mut layer = vec![0usize; n];
    let mut head = 0;
    while head < queue.len() {
        let v = queue[head];
        head += 1;
        for &e in dag_out.of(v) {
            let w = dag(e).1;
            layer[w] = layer[w].max(layer[v] + 1);
            indegree[w] -= 1;
            if indegree[w] == 0 {
                queue.push(w);
            }
        }
    }
    // a source sits right above its first reader
    let mut has_in = vec![false; n];
    for i in 0..edges.len() {
        has_in[dag(i).1] = true;
    }
    let pinned_first = |v: usize| pins.is_some_and(|p| p.0.get(v) == Some(&true));
    for v in 0..n {
        if has_in[v] || pinned_first(v) {
            continue;
        }
        if let Some(min) = dag_out.of(v).iter().map(|&e| layer[dag(e).1]).min() {
            layer[v] = min.saturating_sub(1);
        }
    }
    if let Some((first, last)) = pins {
        let bottom = (0..n)
            .filter(|&v| last.get(v) != Some(&true))
            .map(|v| layer[v] + 1)
            .max()
            .unwrap_or(0);
        for (v, l) in layer.iter_mut().enumerate() {
            if first.get(v) == Some(&true) {
                *l = 0;
            } else if last.get(v) == Some(&true) {
                *l = bottom.max(*l);
            }
        }
    }
    Ranked { layer, reversed }
}

/// The edges an iterative depth-first search finds pointing to a node on
/// its stack: reversing them leaves no cycle.
fn back_edges(n: usize, edges: &[(usize, usize)], out: &Adjacency) -> Vec<bool> {
    const NEW: u8 = 0;
    const ON_STACK: u8 = 1;
    const DONE: u8 = 2;
    let mut state = vec![NEW; n];
    let mut reversed = vec![false; edges.len()];
    // (node, next outgoing edge to look at)
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for root in 0..n {
        if state[root] != NEW {
            continue;
        }
        state[root] = ON_STACK;
        stack.push((root, 0));
        while let Some(top) = stack.last_mut() {
            let (v, k) = *top;
            let Some(&e) = out.of(v).get(k) else {
                state[v] = DONE;
                stack.pop();
                continue;
            };
            top.1 += 1;
            let w = edges[e].1;
            match state[w] {
                NEW => {
                    state[w] = ON_STACK;
                    stack.push((w, 0));
                }
                ON_STACK => reversed[e] = true,
                _ => {}
            }
        }
    }
    reversed
}
