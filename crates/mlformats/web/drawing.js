// The graph's drawing: the library's layout drawn in the page's SVG, and
// as files (a standalone SVG document and a PNG of it, downloaded).

const SVG_NS = 'http://www.w3.org/2000/svg';

function el(tag, attrs) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}

// Draws layout `L` (the library's `layout` request, docs/LAYOUT_JSON.md)
// into `vp`, the SVG group of the view: open groups' frames behind, then
// the edges with the shape of their value (`shapes`: value name → dims)
// beside where they enter their reader, then the boxes. `on.node(id)` is
// called when a box is clicked, `on.group(groupId)` when an open group's
// title or a closed group's box is.
export function drawLayout(vp, L, shapes, on) {
  vp.innerHTML = '';
  const frames = el('g', { class: 'groups' });
  for (const g of L.groups || []) {
    if (g.collapsed) continue;
    const f = el('g', { class: 'group', transform: `translate(${g.x},${g.y})` });
    f.dataset.id = g.id;
    f.appendChild(el('rect', { width: g.width, height: g.height, rx: 6, ry: 6 }));
    const title = el('text', { x: 8, y: 16, class: 'group-title' });
    title.textContent = `▾ ${g.label}`;
    const t = el('title', {});
    t.textContent = `${g.operators} operators: click the title to close`;
    f.appendChild(t);
    title.onclick = (ev) => { ev.stopPropagation(); on.group(g); };
    f.appendChild(title);
    frames.appendChild(f);
  }
  const edges = el('g', { class: 'edges' });
  const labels = el('g', { class: 'edge-labels' });
  // labels already placed above each box: [left, right, row]; a label that
  // would overlap one of them goes a row higher (9 px monospace: under 6 px a
  // character, rows 10 px apart)
  const placed = new Map();
  const labelRow = (box, x0, x1) => {
    const here = placed.get(box) || [];
    let row = 0;
    while (here.some(([a, b, r]) => r === row && x0 < b && a < x1)) row++;
    here.push([x0, x1, row]);
    placed.set(box, here);
    return row;
  };
  for (const e of L.edges) {
    const p = el('polyline', { class: 'edge', 'marker-end': 'url(#arrow)', points: e.points.map((q) => q.join(',')).join(' ') });
    p.dataset.from = e.from; p.dataset.to = e.to; p.dataset.tensor = e.tensor;
    const title = el('title', {});
    title.textContent = e.tensor;
    p.appendChild(title);
    edges.appendChild(p);
    const s = shapes.get(e.tensor);
    if (s) {
      // beside the edge where it enters its reader (left of it when the
      // layers run left to right)
      // (an edge into a group's port: where it meets the group's frame,
      // above the group's title)
      const into = !e.reversed && L.nodes[e.to].kind === 'port' && e.points.length > 2;
      const [ex, y] = e.points[e.reversed ? 0 : e.points.length - (into ? 2 : 1)];
      const text = s.join('×');
      // (left to right: just above the edge, left of the box; the ports
      // along the box's side keep labels apart)
      const lr = L.direction === 'lr' && !e.reversed;
      const x = lr ? ex - 6 - text.length * 6 : ex;
      const row = lr ? 0 : labelRow(e.reversed ? e.from : e.to, x + 3, x + 3 + text.length * 6 + 4);
      const t = el('text', { x: x + 3, y: lr ? y - 2 : y - 4 - 10 * row, class: 'edge-label' });
      t.textContent = text;
      labels.appendChild(t);
    }
  }
  const closed = new Map((L.groups || []).filter((g) => g.collapsed).map((g) => [g.node, g]));
  const nodes = el('g', { class: 'nodes' });
  for (const n of L.nodes) {
    const kind = { op: '', group: ' closed', port: ' io port' }[n.kind];
    const g = el('g', { class: 'node' + (kind == null ? ' io' : kind), transform: `translate(${n.x},${n.y})` });
    g.dataset.index = n.id; g.dataset.name = n.name; g.dataset.op = n.op;
    if (n.family) g.dataset.family = n.family;
    const r = el('rect', { width: n.width, height: n.height, rx: 4, ry: 4 });
    if (n.fill) { r.setAttribute('fill', n.fill); r.setAttribute('stroke', n.stroke); }
    g.appendChild(r);
    n.label.split('\n').forEach((text, k) => {
      const t = el('text', { x: 7, y: 15 + k * 13, class: ({ op: 'op', weight: 'w', attr: 'a' })[n.label_styles[k]] || 'name' });
      t.textContent = (k === 0 && closed.has(n.id) ? '▸ ' : '') + text;
      g.appendChild(t);
    });
    // a closed group's box opens it; a closed subgraph is its node's box:
    // a click shows the node, a double click opens it
    const group = closed.get(n.id);
    const sub = group && group.kind === 'subgraph';
    if (group) g.dataset.group = group.id;
    // the tooltip: the operator's description (mlformats::layout::describe)
    // and, for a closed subgraph, how to open it
    const tips = [];
    if (n.description) tips.push(n.description);
    if (sub) {
      g.classList.add('subgraph');
      tips.push(`${group.operators} nodes in its subgraphs: double-click to draw them`);
      g.ondblclick = (ev) => { ev.stopPropagation(); on.group(group); };
    }
    if (tips.length) {
      const tip = el('title', {});
      tip.textContent = tips.join('\n');
      g.appendChild(tip);
    }
    g.onclick = (ev) => { ev.stopPropagation(); if (group && !sub) on.group(group); else on.node(n.id); };
    nodes.appendChild(g);
  }
  const defs = el('defs', {});
  defs.innerHTML = '<marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#8a9aab"/></marker>';
  vp.append(defs, frames, edges, labels, nodes);
}

// The drawing (`viewport`, the page's <g> of boxes and edges, laid out as
// `layout` says) as a standalone SVG document at scale 1, with the page's
// styles inlined.
export function drawingSVG(viewport, layout) {
  const m = 20, w = Math.ceil(layout.width + 2 * m), h = Math.ceil(layout.height + 2 * m);
  const g = viewport.cloneNode(true);
  g.removeAttribute('id');
  g.setAttribute('transform', `translate(${m},${m})`);
  for (const e of g.querySelectorAll('.hit, .selected')) e.classList.remove('hit', 'selected');
  const style = '.node rect{stroke-width:1.2}text{font-family:system-ui,sans-serif;font-size:11px;fill:#222}' +
    '.op{font-weight:bold;font-size:12px}.w{fill:#666;font-family:monospace;font-size:10px}' +
    '.a{fill:#4a5a8a;font-family:monospace;font-size:10px}' +
    '.edge{fill:none;stroke:#8a9aab;stroke-width:1.2}.edge-label{font-size:9px;fill:#557;font-family:monospace}' +
    '.group rect{fill:#f3f1fb;fill-opacity:0.55;stroke:#8a7fc0;stroke-dasharray:5 3}.group-title{font-weight:bold;fill:#5a4f96}' +
    '.closed rect{stroke-dasharray:5 2;stroke-width:2}';
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}">` +
    `<style>${style}</style><rect width="100%" height="100%" fill="#fafafa"/>${g.outerHTML}</svg>`;
}

// A PNG of an SVG document, drawn on a canvas (at most 16384 px a side,
// scaled down to fit: the browser's canvas limit); null when the canvas
// cannot hold it.
export async function pngOf(svg) {
  const img = new Image();
  const url = URL.createObjectURL(new Blob([svg], { type: 'image/svg+xml' }));
  try {
    img.src = url;
    await img.decode();
    const k = Math.min(2, 16384 / img.width, 16384 / img.height);
    const c = document.createElement('canvas');
    c.width = Math.max(1, Math.floor(img.width * k)); c.height = Math.max(1, Math.floor(img.height * k));
    const ctx = c.getContext('2d');
    ctx.scale(k, k);
    ctx.drawImage(img, 0, 0);
    return await new Promise((resolve) => c.toBlob(resolve, 'image/png'));
  } finally {
    URL.revokeObjectURL(url);
  }
}

// Saves `blob` as `name` (the browser's download).
export function download(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url; a.download = name;
  document.body.append(a); a.click(); a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}
