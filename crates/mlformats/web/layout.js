// A layered (top to bottom) layout of one network of the typed graph.
// Weights and constants are folded into the nodes that use them; graph
// inputs and outputs get their own boxes; edges carry the shapes the
// format declares.

const CHAR_W = 6.6;
const LAYER_GAP = 46;
const NODE_GAP = 22;
const MAX_WEIGHT_LINES = 4;

function shapeText(s) {
  return s == null ? null : s.join('×');
}

// `net`: one graph of the `graph` JSON; `tensors`: the tensor table (to
// find the stored tensor of a folded weight).
export function layout(net, tensors) {
  const values = new Map(net.values.map((v) => [v.name, v]));
  const byName = new Map(tensors.map((t) => [t.name, t]));
  // a graph may name a tensor as the file stores it (TenniS `<node>/value`)
  const byStored = new Map(tensors.filter((t) => t.stored_name != null).map((t) => [t.stored_name, t]));
  const tensorOf = (v) => {
    const names = [v && v.tensor, v && v.name].filter((x) => x != null);
    for (const n of names) {
      if (byName.has(n)) return byName.get(n);
      if (byStored.has(n)) return byStored.get(n);
    }
    return null;
  };
  const shapeOf = (name) => {
    const v = values.get(name);
    if (v && v.shape) return v.shape;
    const t = tensorOf(v || { name });
    return t ? t.shape : null;
  };
  const isConstNode = (n) => n.op === '<const>';
  const inputSet = new Set(net.inputs);
  const stored = (name) => {
    if (inputSet.has(name)) return false;
    const v = values.get(name);
    return !!(v && v.stored);
  };

  const nodes = [];
  const producer = new Map(); // value name -> node index
  let folded = 0;
  for (const name of net.inputs) {
    const i = nodes.length;
    nodes.push({ io: true, op: 'input', name, attributes: [], inputs: [], outputs: [{ name, shape: shapeOf(name) }], weights: [] });
    producer.set(name, i);
  }
  const foldedValues = new Set();
  for (const n of net.nodes) {
    if (isConstNode(n) && !n.outputs.some((o) => inputSet.has(o))) {
      n.outputs.forEach((o) => foldedValues.add(o));
      folded += 1;
    }
  }
  for (const n of net.nodes) {
    if (isConstNode(n) && n.outputs.every((o) => foldedValues.has(o))) continue;
    if (n.op === '<param>' && n.outputs.every((o) => producer.has(o))) continue; // shown as an input box
    const i = nodes.length;
    const weights = [];
    const inputs = [];
    for (const name of n.inputs) {
      if (foldedValues.has(name) || stored(name)) {
        const t = tensorOf(values.get(name) || { name });
        weights.push({ name, key: t ? t.name : null, shape: t ? t.shape : shapeOf(name), dtype: t ? t.dtype : null });
      } else {
        inputs.push({ name, shape: shapeOf(name) });
      }
    }
    nodes.push({
      op: n.op, name: n.name, attributes: n.attributes, inputs,
      outputs: n.outputs.map((o) => ({ name: o, shape: shapeOf(o) })), weights,
    });
    for (const o of n.outputs) if (!producer.has(o)) producer.set(o, i);
  }
  for (const name of net.outputs) {
    nodes.push({ io: true, op: 'output', name, attributes: [], inputs: [{ name, shape: shapeOf(name) }], outputs: [], weights: [] });
  }

  // edges
  const edges = [];
  const preds = nodes.map(() => []);
  const succs = nodes.map(() => []);
  nodes.forEach((n, to) => {
    for (const inp of n.inputs) {
      const from = producer.get(inp.name);
      if (from === undefined || from === to) continue;
      const s = inp.shape ? shapeText(inp.shape) : null;
      edges.push({ from, to, label: s });
      preds[to].push(from);
      succs[from].push(to);
    }
  });

  // layers: longest path from the sources, in an order that ignores back edges
  const layer = new Array(nodes.length).fill(0);
  const indeg = preds.map((p) => p.length);
  const queue = [];
  indeg.forEach((d, i) => { if (d === 0) queue.push(i); });
  const seen = new Array(nodes.length).fill(false);
  let head = 0;
  let placed = 0;
  let firstUnseen = 0; // every node before it is placed: linear overall
  while (placed < nodes.length) {
    if (head >= queue.length) {
      // a cycle (recurrent networks): release the first node not yet placed
      while (seen[firstUnseen]) firstUnseen += 1;
      indeg[firstUnseen] = 0;
      queue.push(firstUnseen);
    }
    const i = queue[head++];
    if (seen[i]) continue;
    seen[i] = true;
    placed += 1;
    for (const j of succs[i]) {
      if (seen[j]) continue;
      layer[j] = Math.max(layer[j], layer[i] + 1);
      if (--indeg[j] === 0) queue.push(j);
    }
  }
  // outputs sit right under their producer
  // (no spread: a call's arguments are bounded, a graph is not)
  const nLayers = layer.reduce((a, b) => (a > b ? a : b), 0) + 1;
  const layers = Array.from({ length: nLayers }, () => []);
  layer.forEach((l, i) => layers[l].push(i));

  // sizes
  for (const n of nodes) {
    n.lines = [{ text: n.op, cls: 'op' }];
    if (n.name && n.name !== n.op) n.lines.push({ text: n.name.length > 40 ? n.name.slice(0, 38) + '…' : n.name, cls: 'name' });
    n.weights.slice(0, MAX_WEIGHT_LINES).forEach((w) => {
      const short = w.name.split('/').pop();
      n.lines.push({ text: `${short.length > 24 ? short.slice(0, 22) + '…' : short} ⟨${shapeText(w.shape) || '?'}⟩`, cls: 'w' });
    });
    if (n.weights.length > MAX_WEIGHT_LINES) n.lines.push({ text: `+${n.weights.length - MAX_WEIGHT_LINES} more`, cls: 'w' });
    const longest = Math.max(...n.lines.map((l) => l.text.length));
    n.w = Math.max(70, Math.min(300, longest * CHAR_W + 14));
    n.h = 8 + n.lines.length * 13;
  }

  // order within layers: barycenter sweeps
  const pos = new Array(nodes.length).fill(0);
  layers.forEach((ls) => ls.forEach((i, k) => { pos[i] = k; }));
  const bary = (i, nb) => (nb[i].length ? nb[i].reduce((a, j) => a + pos[j], 0) / nb[i].length : pos[i]);
  for (let sweep = 0; sweep < 6; sweep++) {
    const down = sweep % 2 === 0;
    const order = down ? layers : [...layers].reverse();
    for (const ls of order) {
      const b = new Map(ls.map((i) => [i, bary(i, down ? preds : succs)]));
      ls.sort((x, y) => b.get(x) - b.get(y));
      ls.forEach((i, k) => { pos[i] = k; });
    }
  }

  // x: each node wants the mean x of its predecessors; overlaps pushed apart
  const y = [];
  let yy = 0;
  for (const ls of layers) {
    const h = ls.reduce((a, i) => Math.max(a, nodes[i].h), 0);
    y.push(yy + h / 2);
    yy += h + LAYER_GAP;
  }
  const place = (ls, want) => {
    const xs = ls.map((i) => want(i));
    // left to right, then shift the row so its mean stays where it wanted
    const placed = [];
    let prevRight = -Infinity;
    ls.forEach((i, k) => {
      const w = nodes[i].w;
      const x = Math.max(xs[k], prevRight + NODE_GAP + w / 2);
      placed.push(x);
      prevRight = x + w / 2;
    });
    const shift = (xs.reduce((a, b) => a + b, 0) - placed.reduce((a, b) => a + b, 0)) / Math.max(1, ls.length);
    ls.forEach((i, k) => { nodes[i].x = placed[k] + shift; });
  };
  layers.forEach((ls, l) => {
    ls.forEach((i) => { nodes[i].y = y[l]; });
    if (l === 0) {
      let x = 0;
      ls.forEach((i) => { nodes[i].x = x + nodes[i].w / 2; x += nodes[i].w + NODE_GAP; });
      return;
    }
    let fallback = 0;
    place(ls, (i) => {
      const p = preds[i].filter((j) => nodes[j].x !== undefined);
      if (!p.length) { fallback += 1; return fallback * 100; }
      return p.reduce((a, j) => a + nodes[j].x, 0) / p.length;
    });
  });

  let minX = Infinity, maxX = -Infinity, minY = Infinity, maxY = -Infinity;
  for (const n of nodes) {
    minX = Math.min(minX, n.x - n.w / 2); maxX = Math.max(maxX, n.x + n.w / 2);
    minY = Math.min(minY, n.y - n.h / 2); maxY = Math.max(maxY, n.y + n.h / 2);
  }
  if (!nodes.length) { minX = minY = 0; maxX = maxY = 1; }
  return { nodes, edges, folded, minX, minY, width: maxX - minX, height: maxY - minY };
}
