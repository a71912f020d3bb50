// The mlformats viewer: the library (compiled to WebAssembly) reads the
// file in this page; this script only presents what it answers.
import { Library, compile } from './mlformats.js';
import { download, drawLayout, drawingSVG, pngOf } from './drawing.js';
import { panZoom, resizable } from './graphview.js';
import { addWalk, probeURL, wholeBytes } from './remote.js';

const $ = (id) => document.getElementById(id);
const WASM = 'mlformats_web.wasm';
// From this size on, a file is opened by slices in a worker (the library
// reads its structure only; tensors are read a slice at a time) when the
// library can read its format that way; smaller files are read whole.
const SLICED_FROM = 64 << 20;
// A conversion of a file opened by slices that needs the whole model in
// memory (a graph exported to ONNX, an ONNX graph imported, an NNabla
// model kept, --params) reads the file whole, up to this size: the
// module's memory (4 GiB at most) then holds the file, its model and the
// output. Measured (tests/browser.py --bench): an NNabla network of 2048 x
// 2048 Affine layers exported to ONNX took 3078 MiB of module memory at
// 768 MiB and 4039 MiB at 1008 MiB; its ONNX imported back to .nnp took
// 3627 MiB at 768 MiB and ran out of the 4 GiB at 1008 MiB.
const WHOLE_CONVERT_MAX = 768 << 20;
const state = {
  lib: null, model: null, summary: null, tensors: [], graph: null, stats: {}, worker: null, server: null, view: null,
  direction: 'tb', // the graph's layers: 'tb' top to bottom, 'lr' left to right
  labels: { names: true, weights: true, attributes: false }, // what the boxes show (keys n, w, a)
  bytes: null, // a file read whole: its bytes, which the converting worker gets a copy of
  converter: null, // the worker converting the open file
  note: '', // said after the status (a server that does not answer range requests)

  memory: {}, // the workers' module memory sizes, in bytes (for tests)
  timing: {}, // performance.now() when the open began and when the table was shown
};
window.mlformatsViewer = state; // for tests and the console

const fmtInt = (n) => (n == null ? '' : (typeof n === 'bigint' ? n : Number(n)).toLocaleString('en-US'));
const fmtNum = (x) => (x == null ? '' : typeof x === 'number' ? (Number.isSafeInteger(x) ? String(x) : x.toPrecision(5)) : String(x));
// JSON text of a value whose integers may be BigInts (exact 64-bit ones)
const showJSON = (v, indent) => JSON.stringify(v, (k, x) => (typeof x === 'bigint' ? `\u0000${x}\u0000` : x), indent)
  .replace(/"\\u0000(-?\d+)\\u0000"/g, '$1');
// a statistic's extreme: the exact text of a 64-bit integer tensor's
const extreme = (s, k) => fmtNum(s.exact ? s.exact[k] : s[k]);
const fmtShape = (s) => (s == null ? '?' : '[' + s.join(', ') + ']');
// A declared shape with its open dimensions by the names the file gives
// them (ONNX dim_param: `batch` rather than -1).
const namedShape = (v) => (v == null || v.shape == null ? null
  : v.dim_names ? v.shape.map((d, i) => (d < 0 && v.dim_names[i] != null ? v.dim_names[i] : d)) : v.shape);
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);

function setStatus(text) { $('status').textContent = text; $('status').title = text; }

function showError(message) {
  $('convert').hidden = true;
  $('error').classList.remove('converting');
  $('error-title').textContent = 'This file cannot be opened';
  $('error-close').hidden = true;
  $('error-message').textContent = message;
  $('error').hidden = false;
  $('drop').hidden = true;
  for (const t of document.querySelectorAll('.tab')) t.hidden = true;
  $('tabs').hidden = true;
  setStatus('error');
  document.body.dataset.state = 'error';
}

function selectTab(name) {
  for (const b of document.querySelectorAll('#tabs button')) b.classList.toggle('active', b.dataset.tab === name);
  for (const t of document.querySelectorAll('.tab')) t.hidden = t.id !== name;
  if (name === 'graph' && state.view) state.view.home();
}

function beginOpen(name) {
  document.body.dataset.state = 'loading';
  delete document.body.dataset.stats;
  setStatus('opening…');
  $('stats-go').hidden = true;
  $('filename').textContent = name;
  $('error').hidden = true;
  if (state.worker) state.worker.terminate();
  if (state.server) state.server.terminate();
  if (state.converter) state.converter.terminate();
  state.worker = state.server = state.converter = null;
  state.bytes = null;
  delete document.body.dataset.convert;
  state.stats = {};
  state.memory = {};
  state.collapsed = new Map();
  state.model = null;
}

// Shows the open file: summary, tensor table, graph (drawn before the
// page says it is ready).
async function present() {
  renderSummary();
  renderTensors();
  await renderGraphTab();
  $('drop').hidden = true;
  $('tabs').hidden = false;
  $('convert').hidden = false;
  // a file of tensors alone (an ONNX of initializers) opens at its summary
  selectTab(state.graph && state.graph.graphs.some((n) => n.nodes.length) ? 'graph' : 'summary');
  setStatus(statusLine());
  state.timing.ready = performance.now();
  document.body.dataset.state = 'ready';
}

function statusLine() {
  const s = state.summary;
  const remote = state.model && state.model.file && state.model.file.remote;
  return `${s.format} · ${fmtInt(s.file_size)} bytes` + (s.sliced ? (remote ? ' · read by range requests' : ' · read by slices') : '') +
    (state.note ? ' · ' + state.note : '');
}

async function openBytes(bytes, name) {
  beginOpen(name);
  try {
    // after a panic the instance is not used again: a fresh one
    if (!state.lib || state.lib.failed) state.lib = await Library.load(WASM);
    const lib = state.lib;
    state.summary = lib.open(bytes, name);
    state.model = lib;
    state.bytes = bytes;
    state.tensors = lib.request({ op: 'tensors' });
    state.graph = lib.request({ op: 'graph' });
    await present();
    startStats({ bytes, name });
  } catch (e) {
    state.model = null;
    showError(e.message || String(e));
  }
}

// A worker started before it is needed (main starts one for the file of
// `?url=` while the module compiles): the next openSliced or startStats
// takes it.
let spareWorker = null;
function newWorker() {
  const w = spareWorker || new Worker('worker.js', { type: 'module' });
  spareWorker = null;
  return w;
}

// A big file: a worker opens it by slices (FileReaderSync over Blob.slice,
// which only workers have) and answers the page's requests; the file is
// never copied into the module's memory whole. Formats the library reads
// whole only are read whole.
async function openSliced(blob, name) {
  beginOpen(name);
  const w = newWorker();
  state.server = w;
  const pending = new Map();
  let nextId = 1;
  const first = new Promise((resolve) => pending.set(0, resolve));
  w.onmessage = (ev) => {
    const m = ev.data;
    if (m.memory) state.memory.model = m.memory;
    const f = pending.get(m.id);
    if (f) { pending.delete(m.id); f(m); }
  };
  w.onerror = (ev) => {
    for (const f of pending.values()) f({ error: ev.message || "the viewer's worker failed" });
    pending.clear();
  };
  // the module compiled once, here: the worker instantiates it
  w.postMessage({ serve: true, file: blob, name, module: await compile(WASM) });
  const m = await first;
  if (state.server !== w) return; // another file was opened meanwhile
  if (m.fallback) {
    w.terminate();
    state.server = null;
    await openBytes(await wholeBytes(blob), name);
    return;
  }
  if (m.error !== undefined) { showError(m.error); return; }
  const ask = (req) => new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, (r) => (r.error !== undefined ? reject(new Error(r.error)) : resolve(r.answer)));
    w.postMessage({ id, req });
  });
  state.model = { request: ask, bytes: ask, sliced: true, file: blob };
  state.summary = m.summary;
  state.tensors = m.tensors;
  state.graph = m.graph;
  await present();
  // a remote file's statistics read all of it: on request
  if (blob.remote) offerStats({ file: blob, name }); else startStats({ file: blob, name });
}

// Opens a File, Blob or remote file: whole, or by slices when it is big.
async function openBlob(blob, name) {
  state.timing = { start: performance.now() };
  if (blob.size >= SLICED_FROM) await openSliced(blob, name);
  else await openBytes(await wholeBytes(blob), name);
}

function offerStats(src) {
  const b = $('stats-go');
  b.textContent = `Statistics (reads all ${fmtInt(src.file.size)} bytes)`;
  b.hidden = false;
  b.onclick = () => { b.hidden = true; startStats(src); };
}

// Statistics of every tensor, computed in a worker and streamed into the
// table; `src` is {bytes, name} (a copy of a small file) or {file, name}
// (a big file, read by slices).
function startStats(src) {
  if (!state.tensors.length) return;
  const w = newWorker();
  state.worker = w;
  w.onmessage = (ev) => {
    const m = ev.data;
    if (m.memory) state.memory.stats = m.memory;
    if (m.name !== undefined) {
      state.stats[m.name] = m.stats;
      const row = document.querySelector(`#tensor-table tr[data-name="${CSS.escape(m.name)}"]`);
      if (row) fillStatsRow(row, m.stats);
    }
    if (m.done) { state.timing.stats = performance.now(); document.body.dataset.stats = 'done'; setStatus(statusLine() + ' · statistics done'); }
    if (m.error) setStatus('statistics: ' + m.error);
  };
  compile(WASM).then((module) => w.postMessage({ ...src, module, names: state.tensors.map((t) => t.name) }));
}

function fillStatsRow(row, s) {
  const c = row.children;
  c[5].textContent = extreme(s, 'min'); c[6].textContent = extreme(s, 'max');
  c[7].textContent = fmtNum(s.mean); c[8].textContent = fmtNum(s.std);
}

function renderSummary() {
  const s = state.summary;
  const rows = [
    ['file', s.file], ['format', s.format], ['kind', s.kind], ['file size', fmtInt(s.file_size) + ' bytes'],
    ['tensors', fmtInt(s.tensor_count)], ['parameters', fmtInt(s.parameters)], ['tensor bytes', fmtInt(s.bytes)],
  ].filter(([, v]) => v != null);
  let h = '<h2>Summary</h2><table class="kv">' + rows.map(([k, v]) => `<tr><td>${k}</td><td>${esc(v)}</td></tr>`).join('') + '</table>';
  if (Object.keys(s.metadata).length) h += properties(s.metadata);
  if (s.executors.length) {
    h += '<h2>Executors</h2><table><tr><th>name</th><th>network</th><th>data</th><th>outputs</th></tr>' +
      s.executors.map((e) => `<tr><td>${esc(e.name)}</td><td>${esc(e.network)}</td><td>${esc(e.data.join(', '))}</td><td>${esc(e.outputs.join(', '))}</td></tr>`).join('') + '</table>';
  }
  for (const n of s.networks) {
    h += `<h2>Network ${esc(n.name)}</h2><p>${fmtInt(n.nodes)} nodes${n.batch_size != null ? ', batch size ' + n.batch_size : ''}</p>`;
    h += '<table><tr><th>inputs</th><th>shape</th></tr>' + n.inputs.map((i) => `<tr><td class="name">${esc(i.name)}</td><td>${fmtShape(namedShape(i))}</td></tr>`).join('') + '</table>';
    h += '<table><tr><th>outputs</th><th>shape</th></tr>' + n.outputs.map((i) => `<tr><td class="name">${esc(i.name)}</td><td>${fmtShape(namedShape(i))}</td></tr>`).join('') + '</table>';
    h += '<table class="ops"><tr><th>operator</th><th>count</th></tr>' + Object.entries(n.operators).map(([k, v]) => `<tr><td>${esc(k)}</td><td class="num">${v}</td></tr>`).join('') + '</table>';
  }
  $('summary').innerHTML = h;
}

// The model's properties, every entry the library reads from the file
// (ONNX: opset, producer, ir_version, ..., each metadata_props entry;
// NNabla: the optimizer configs; safetensors: __metadata__), as rows.
function properties(meta) {
  const text = (v) => (typeof v === 'string' ? v : showJSON(v));
  const row = (k, v, cls = '') => `<tr${cls}><td>${esc(k)}</td><td class="value">${esc(text(v))}</td></tr>`;
  let h = '<h2>Model properties</h2><table id="properties" class="kv">';
  for (const [k, v] of Object.entries(meta)) {
    if (v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length) {
      h += `<tr class="group"><td colspan="2">${esc(k)}</td></tr>` + Object.entries(v).map(([a, b]) => row(a, b, ' class="sub"')).join('');
    } else {
      h += row(k, v);
    }
  }
  return h + '</table>';
}

function renderTensors() {
  const body = document.querySelector('#tensor-table tbody');
  body.innerHTML = state.tensors.map((t) =>
    `<tr data-name="${esc(t.name)}"><td class="name">${esc(t.name)}</td><td>${esc(t.dtype)}</td><td>${fmtShape(t.shape)}</td>` +
    `<td class="num">${fmtInt(t.numel)}</td><td class="num">${fmtInt(t.bytes)}</td><td class="num"></td><td class="num"></td><td class="num"></td><td class="num"></td></tr>`).join('');
  for (const row of body.children) row.onclick = () => showValues(row.dataset.name);
  applyFilter();
}

function applyFilter() {
  const q = $('filter').value.toLowerCase();
  let n = 0, params = 0, bytes = 0;
  const rows = document.querySelectorAll('#tensor-table tbody tr');
  state.tensors.forEach((t, i) => {
    const show = !q || t.name.toLowerCase().includes(q);
    rows[i].hidden = !show;
    if (show) { n += 1; params += t.numel || 0; bytes += t.bytes || 0; }
  });
  $('totals').textContent = `${fmtInt(n)} tensors · ${fmtInt(params)} parameters · ${fmtInt(bytes)} bytes`;
  $('totals').dataset.count = n;
}

async function showValues(key, start = 0, count = 100) {
  const box = $('values');
  box.hidden = false;
  let v;
  try { v = await state.model.request({ op: 'values', name: key, start, count }); } catch (e) { box.textContent = e.message; return; }
  box.innerHTML = `<div><b class="mono">${esc(key)}</b> ${esc(v.dtype)} ${fmtShape(v.shape)} (${esc(v.order)}, ${fmtInt(v.numel)} elements)</div>` +
    `<div>from flat index <input id="v-start" type="number" min="0" value="${start}" style="width:8em"> count <input id="v-count" type="number" min="1" value="${count}" style="width:6em"> <button id="v-go">Show</button></div>` +
    (v.numeric ? `<pre id="values-text">${esc(v.text.join(' '))}</pre>` : '<p>not a numeric dtype</p>');
  $('v-go').onclick = () => showValues(key, Number($('v-start').value) || 0, Number($('v-count').value) || 100);
}

// ---- graph ----

function renderGraphTab() {
  const g = state.graph;
  const sel = $('network');
  sel.innerHTML = '';
  if (!g || !g.graphs.length) { $('graph-count').textContent = 'no graph in this file'; $('graph-svg').querySelector('#viewport').innerHTML = ''; $('minimap').hidden = true; state.view = null; return; }
  const execNet = g.executors.length ? g.executors[0].network : null;
  g.graphs.forEach((n, i) => {
    const o = document.createElement('option');
    // (a TenniS module names no network: its place in the file instead)
    o.value = i; o.textContent = `network ${n.name || `#${i + 1} (unnamed)`}` + (g.executors.filter((e) => e.network === n.name).map((e) => ` (executor ${e.name})`).join(''));
    sel.appendChild(o);
  });
  const first = Math.max(0, g.graphs.findIndex((n) => n.name === execNet));
  sel.value = first;
  sel.onchange = () => drawGraph(Number(sel.value));
  return drawGraph(first);
}

// A network with no operator (an ONNX file of initializers alone): said
// in words, nothing drawn.
function noOperators(net) {
  $('viewport').setAttribute('transform', '');
  $('viewport').innerHTML = '<text x="24" y="40" class="empty-note">No operators in this network: its tensors are in the Tensors tab.</text>';
  $('minimap').hidden = true;
  $('details').hidden = true;
  state.view = null;
  state.layout = null;
  const n = state.tensors.length;
  $('graph-count').textContent = `${net.name ? `network ${net.name}: ` : ''}no operators, nothing to draw: ` +
    `the file holds ${fmtInt(n)} tensor${n === 1 ? '' : 's'} (Tensors tab)`;
  $('graph-count').dataset.nodes = 0;
}

// The groups of network `index` drawn against their default (ids of the
// layout's groups): repeat blocks and bodies closed, subgraphs open;
// kept while the file is open.
function togglesOf(index) {
  state.collapsed = state.collapsed || new Map();
  if (!state.collapsed.has(index)) state.collapsed.set(index, { collapsed: new Set(), expanded: new Set() });
  return state.collapsed.get(index);
}

// Opens group `g` of network `index` if it is closed, else closes it, and
// draws the network again where the reader was.
function toggleGroup(index, g) {
  const t = togglesOf(index);
  if (g.kind === 'subgraph') {
    if (g.collapsed) t.expanded.add(g.id); else t.expanded.delete(g.id);
  } else if (g.collapsed) t.collapsed.delete(g.id); else t.collapsed.add(g.id);
  return drawGraph(index, true);
}

// What the details panel shows of box `b` of the library's layout of
// `net`: the graph node it draws (attributes, inputs, outputs, the
// weights folded into it, with the stored tensor of each) or the port.
function boxInfo(net, b) {
  const values = new Map(net.values.map((v) => [v.name, v]));
  const byName = new Map(state.tensors.map((t) => [t.name, t]));
  // a graph may name a tensor as the file stores it (TenniS `<node>/value`)
  const byStored = new Map(state.tensors.filter((t) => t.stored_name != null).map((t) => [t.stored_name, t]));
  const tensorOf = (name) => {
    const v = values.get(name);
    for (const n of [v && v.tensor, name]) {
      if (n == null) continue;
      if (byName.has(n)) return byName.get(n);
      if (byStored.has(n)) return byStored.get(n);
    }
    return null;
  };
  const shapeOf = (name) => {
    const v = values.get(name);
    if (v && v.shape) return namedShape(v);
    const t = tensorOf(name);
    return t ? t.shape : null;
  };
  if (b.node == null) {
    const port = [{ name: b.name, shape: shapeOf(b.name) }];
    return { op: b.op, name: b.name, attributes: [], inputs: b.kind === 'output' ? port : [], outputs: b.kind === 'output' ? [] : port, weights: [] };
  }
  const n = net.nodes[b.node];
  const inputSet = new Set(net.inputs);
  // the constants the library's layout folds into their readers (layout/build.rs)
  const outputSet = new Set(net.outputs);
  const read = new Set(net.nodes.flatMap((m) => m.inputs));
  const folded = new Set();
  for (const m of net.nodes) {
    const fed = m.outputs.some((o) => inputSet.has(o));
    const constant = m.op === 'Constant' && !m.inputs.length && m.outputs.length &&
      m.outputs.every((o) => read.has(o) && !outputSet.has(o));
    if ((m.op === '<const>' && !fed) || (constant && !fed)) m.outputs.forEach((o) => folded.add(o));
  }
  const weights = [], inputs = [];
  for (const name of n.inputs) {
    const v = values.get(name);
    if (folded.has(name) || (!inputSet.has(name) && v && v.stored)) {
      const t = tensorOf(name);
      weights.push({ name, key: t ? t.name : null, shape: t ? t.shape : shapeOf(name) });
    } else {
      inputs.push({ name, shape: shapeOf(name) });
    }
  }
  // (TenniS's internal `#op` and `#name` fields are not attributes)
  const attributes = n.attributes.filter(([k]) => !k.startsWith('#'));
  return { op: n.op, name: n.name, attributes, inputs, outputs: n.outputs.map((o) => ({ name: o, shape: shapeOf(o) })), weights };
}

// Draws the network at `index` as the library lays it out (the `layout`
// request: boxes with their place and size, every edge a polyline routed
// around the boxes; docs/LAYOUT_JSON.md).
async function drawGraph(index, keepView = false) {
  const net = state.graph.graphs[index];
  const model = state.model;
  if (!net.nodes.length) return noOperators(net);
  let L;
  try {
    const t = togglesOf(index);
    L = await model.request({ op: 'layout', network: index, direction: state.direction, collapsed: [...t.collapsed], expanded: [...t.expanded], ...state.labels });
  } catch (e) {
    $('viewport').innerHTML = '';
    $('graph-count').textContent = e.message || String(e);
    $('minimap').hidden = true;
    state.view = null;
    return;
  }
  if (state.model !== model) return; // another file was opened meanwhile
  state.layout = L;
  state.network = net;
  const shapes = new Map(net.values.map((v) => [v.name, namedShape(v)]));
  state.networkIndex = index;
  // a group's title closes it, a closed group's box opens it (a closed
  // subgraph's box: on a double click, or from its details)
  drawLayout($('viewport'), L, shapes, { node: (id) => selectNode(id), group: (g) => toggleGroup(index, g) });
  const vp = $('viewport');
  const ops = L.nodes.filter((n) => n.kind === 'op').length;
  const groups = L.groups || [], shut = groups.filter((g) => g.collapsed).length;
  $('graph-count').textContent = `${net.nodes.length} nodes (${ops} shown, ${L.folded} folded into their users) · ${L.edges.length} edges` +
    (groups.length ? ` · ${groups.length} group${groups.length === 1 ? '' : 's'} (${shut} closed)` : '');
  $('graph-count').dataset.groups = groups.length;
  $('graph-count').dataset.nodes = net.nodes.length;
  $('graph-count').dataset.shown = ops;
  $('graph-count').dataset.edges = L.edges.length;
  $('details').hidden = true;
  $('direction').classList.toggle('on', L.direction === 'lr');
  for (const [k, on] of Object.entries(state.labels)) $(`show-${k}`).classList.toggle('on', on);
  $('graph-view').dataset.direction = L.direction;
  const before = keepView && state.view ? { ...state.view.state } : null;
  state.view = panZoom($('graph-svg'), vp, L, $('minimap'));
  if (before) state.view.restore(before); else state.view.home();
  doSearch();
}

function exportName(ext) {
  const stem = state.summary.file.replace(/\.[^.]*$/, '') || 'graph';
  const net = state.network && state.graph.graphs.length > 1 ? `-${state.network.name}` : '';
  return `${stem}${net}.${ext}`;
}

function exportSVG() {
  if (!state.layout) return;
  download(new Blob([drawingSVG($('viewport'), state.layout)], { type: 'image/svg+xml' }), exportName('svg'));
}

async function exportPNG() {
  if (!state.layout) return;
  const blob = await pngOf(drawingSVG($('viewport'), state.layout));
  if (blob) download(blob, exportName('png'));
  else setStatus('PNG export: the drawing is too large for a canvas');
}

// Keys on the graph tab (not while typing in a field): / or Ctrl+F find,
// f fit, + and - zoom, l left to right, n names, w weights, a attributes
// shown in the boxes, Escape closes the details.
function onKey(ev) {
  if ($('graph').hidden || !state.view) return;
  const typing = ev.target.closest && ev.target.closest('input, select, textarea');
  if ((ev.key === 'f' && (ev.ctrlKey || ev.metaKey)) || (ev.key === '/' && !typing)) {
    ev.preventDefault();
    $('search').focus(); $('search').select();
    return;
  }
  if (typing || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if (ev.key === 'f') state.view.fit();
  else if (ev.key === 'l') toggleDirection();
  else if (LABEL_KEYS[ev.key]) toggleLabels(LABEL_KEYS[ev.key]);
  else if (ev.key === '+' || ev.key === '=') state.view.zoom(1.25);
  else if (ev.key === '-' || ev.key === '_') state.view.zoom(0.8);
  else if (ev.key === 'Escape') { $('details').hidden = true; $('search-results').hidden = true; }
  else return;
  ev.preventDefault();
}

// Lays the network out again with its layers the other way (top to bottom,
// left to right).
function toggleDirection() {
  state.direction = state.direction === 'lr' ? 'tb' : 'lr';
  return drawGraph(Number($('network').value) || 0);
}

// Shows or hides a part of the boxes' labels (`names`, `weights` or
// `attributes`), drawing the network again where the reader was.
const LABEL_KEYS = { n: 'names', w: 'weights', a: 'attributes' };
function toggleLabels(part) {
  state.labels[part] = !state.labels[part];
  return drawGraph(Number($('network').value) || 0, true);
}

let hits = [], hitPos = -1;
function doSearch(next = false) {
  const q = $('search').value.trim().toLowerCase();
  const all = document.querySelectorAll('#viewport .node');
  if (!next) {
    hits = [];
    all.forEach((g) => {
      const on = q && (g.dataset.name.toLowerCase().includes(q) || g.dataset.op.toLowerCase().includes(q));
      g.classList.toggle('hit', !!on);
      if (on) hits.push(Number(g.dataset.index));
    });
    hitPos = -1;
    $('search-count').textContent = q ? `${hits.length} found` : '';
    $('search-count').dataset.count = hits.length;
    listHits(q);
  }
  if (hits.length && (next || q)) {
    hitPos = (hitPos + 1) % hits.length;
    state.view.center(state.layout.nodes[hits[hitPos]], $('details'));
  }
}

// The search's hits as a list (the first 500): a click centres the box
// and shows its details.
function listHits(q) {
  const list = $('search-results');
  list.hidden = !q || !hits.length;
  list.innerHTML = hits.slice(0, 500).map((i) => {
    const n = state.layout.nodes[i];
    return `<li data-index="${i}"><b>${esc(n.op)}</b> <span class="mono">${esc(n.name === n.op ? '' : n.name)}</span></li>`;
  }).join('') + (hits.length > 500 ? `<li class="muted">${fmtInt(hits.length - 500)} more</li>` : '');
  for (const li of list.querySelectorAll('li[data-index]')) {
    li.onclick = () => {
      const i = Number(li.dataset.index);
      hitPos = hits.indexOf(i);
      state.view.center(state.layout.nodes[i]);
      selectNode(i);
    };
  }
}

async function selectNode(i) {
  document.querySelectorAll('#viewport .node.selected').forEach((g) => g.classList.remove('selected'));
  const el = document.querySelector(`#viewport .node[data-index="${i}"]`);
  if (el) el.classList.add('selected');
  const n = boxInfo(state.network, state.layout.nodes[i]);
  const d = $('details');
  d.hidden = false;
  // never behind the panel: moved into the part of the view left of it
  state.view.reveal(state.layout.nodes[i], d);
  const io = (list) => list.map((v) => `<tr><td class="mono">${esc(v.name)}</td><td>${fmtShape(v.shape)}</td></tr>`).join('');
  const doc = state.layout.nodes[i].doc;
  let h = `<h3>${esc(n.op)}</h3>`;
  // a one-line description from the support tables (mlformats::layout::describe)
  const description = state.layout.nodes[i].description;
  if (description) h += `<div id="op-description" class="op-desc">${esc(description)}</div>`;
  h += `<div class="mono">${esc(n.name)}</div>`;
  const sub = (state.layout.groups || []).find((g) => g.node === i && g.kind === 'subgraph');
  if (sub) h += `<div><button id="open-bodies">Draw its subgraphs (${fmtInt(sub.operators)} nodes)</button></div>`;
  // the operator's reference (mlformats::layout::doc_url)
  if (doc) h += `<div><a id="doc-link" href="${esc(doc)}" target="_blank" rel="noopener noreferrer">${esc(n.op)} reference ↗</a></div>`;
  // what our conversions do with it (the support tables: mlformats::layout::op_support)
  const support = (state.layout.operators || {})[state.layout.nodes[i].op];
  if (support && state.layout.nodes[i].kind === 'op') {
    h += '<h4>Conversions</h4><table class="kv support">' + support.map((c) =>
      `<tr><td>${esc(c.direction)}</td><td class="${c.lowered ? '' : 'muted'}">${esc(c.text)}</td></tr>`).join('') + '</table>';
  }
  if (n.attributes && n.attributes.length) {
    h += '<h4>Attributes</h4><table class="kv attrs">' + n.attributes.map(([k, v]) => `<tr><td>${esc(k)}</td><td class="mono">${attrValue(v)}</td></tr>`).join('') + '</table>';
  }
  if (n.inputs.length) h += '<h4>Inputs</h4><table>' + io(n.inputs) + '</table>';
  if (n.outputs.length) h += '<h4>Outputs</h4><table>' + io(n.outputs) + '</table>';
  for (const w of n.weights) {
    h += `<h4>Weight <span class="mono">${esc(w.name)}</span></h4>`;
    const key = w.key;
    if (key == null) { h += '<p class="muted">no stored tensor</p>'; continue; }
    try {
      const s = await state.model.request({ op: 'stats', name: key, bins: 40 });
      const v = await state.model.request({ op: 'values', name: key, start: 0, count: 16 });
      h += `<div>${esc(s.dtype)} ${fmtShape(s.shape)}, ${fmtInt(s.count)} elements</div>`;
      h += `<div class="stats">min ${extreme(s, 'min')} · max ${extreme(s, 'max')} · mean ${fmtNum(s.mean)} · std ${fmtNum(s.std)}` +
        (s.nan ? ` · NaN ${s.nan}` : '') + (s.inf ? ` · Inf ${s.inf}` : '') + ` · zeros ${fmtInt(s.zeros)}</div>`;
      if (s.histogram) h += histogram(s.histogram, s.exact);
      if (v.numeric) h += `<pre class="first-values">${esc(v.text.join(' '))}${v.numel > 16 ? ' …' : ''}</pre>`;
    } catch (e) { h += `<p>${esc(e.message)}</p>`; }
  }
  d.innerHTML = h;
  if (sub) $('open-bodies').onclick = () => toggleGroup(state.networkIndex, sub);
}

// An attribute's value: a subgraph (an ONNX If, Loop or Scan body: its
// name, node count and node list) as a list that expands, anything else
// as JSON text.
function attrValue(v) {
  const bodies = Array.isArray(v) ? v : [v];
  if (!bodies.length || !bodies.every((b) => b && typeof b === 'object' && Array.isArray(b.body))) return esc(showJSON(v));
  return bodies.map((b) => `<details class="body"><summary>${esc(b.name || 'graph')}: ${fmtInt(b.nodes)} nodes</summary><ol>` +
    b.body.map((x) => `<li>${esc(x)}</li>`).join('') +
    (b.nodes > b.body.length ? `<li class="muted">${fmtInt(b.nodes - b.body.length)} more</li>` : '') + '</ol></details>').join('');
}

function histogram(hg, exact) {
  const W = 340, H = 60, max = Math.max(1, ...hg.counts), bw = W / hg.counts.length;
  const bars = hg.counts.map((c, i) => `<rect x="${i * bw}" y="${H - (c / max) * H}" width="${Math.max(1, bw - 1)}" height="${(c / max) * H}"><title>${c}</title></rect>`).join('');
  return `<svg class="hist" width="${W}" height="${H + 14}">${bars}<text x="0" y="${H + 12}" font-size="10">${exact ? exact.min : fmtNum(hg.lo)}</text><text x="${W}" y="${H + 12}" font-size="10" text-anchor="end">${exact ? exact.max : fmtNum(hg.hi)}</text></svg>`;
}

// The convert panel's options as a convert request's fields (abi.rs,
// `convert_options`): the values as typed; the library parses and checks
// them, so a value it refuses gets the CLI's message.
function convertOptions() {
  const words = (id) => $(id).value.split(/\s+/).filter((w) => w);
  const req = {};
  if ($('convert-dtype').value) req.dtype = $('convert-dtype').value;
  for (const [key, id] of [['only', 'convert-only'], ['exclude', 'convert-exclude'], ['rename', 'convert-rename']]) {
    if (words(id).length) req[key] = words(id);
  }
  if ($('convert-opset').value.trim()) req.opset = $('convert-opset').value.trim();
  if ($('convert-network').value.trim()) req.network = $('convert-network').value.trim();
  if (words('convert-input-shape').length) req.input_shape = words('convert-input-shape');
  if ($('convert-params').files.length) req.params = true;
  for (const [key, id] of [['skip_unsupported', 'convert-skip-unsupported'], ['weights_only', 'convert-weights-only'], ['keep_order', 'convert-keep-order']]) {
    if ($(id).checked) req[key] = true;
  }
  return req;
}

// Converts a file read whole in a worker of its own (a copy of the bytes,
// or `file`, a big file's Blob, which the worker reads whole): the page
// stays responsive while the library converts.
function convertInWorker(req, file) {
  return new Promise((resolve, reject) => {
    if (state.converter) state.converter.terminate(); // the previous click's
    const w = new Worker('worker.js', { type: 'module' });
    state.converter = w;
    const done = () => { w.terminate(); if (state.converter === w) state.converter = null; };
    w.onmessage = (ev) => {
      const m = ev.data;
      if (m.memory) state.memory.convert = m.memory;
      if (m.converted) { done(); resolve(m.converted); } else if (m.error !== undefined) { done(); reject(new Error(m.error)); }
    };
    w.onerror = (ev) => { done(); reject(new Error(ev.message || "the viewer's worker failed")); };
    const pf = $('convert-params').files[0];
    const params = pf ? pf.arrayBuffer().then((b) => ({ bytes: new Uint8Array(b), name: pf.name })) : null;
    Promise.all([compile(WASM), params]).then(([module, p]) =>
      w.postMessage({ convert: req, ...(file ? { file } : { bytes: state.bytes }), name: state.summary.file, params: p, module }), (e) => { done(); reject(e); });
  });
}

// A conversion refused: the library's message (the CLI's) in the error
// panel, over the open file, which stays open.
function showConvertError(message) {
  setStatus('convert: ' + message);
  $('error-title').textContent = 'This file cannot be converted with these options';
  $('error-message').textContent = message;
  $('error').classList.add('converting');
  $('error-close').hidden = false;
  $('error').hidden = false;
  document.body.dataset.convert = 'error';
}

function hideConvertError() {
  if (!$('error').classList.contains('converting')) return;
  $('error').hidden = true;
  $('error').classList.remove('converting');
}

// Converts the open file in the library, in a worker, with the options of
// the convert panel (the bytes `mlformats convert` writes with the same
// options) and downloads it as the input's stem + the target's extension.
async function convert() {
  const opt = $('convert-to').selectedOptions[0];
  if (!state.model || !opt) return;
  const stem = state.summary.file.replace(/\.[^.]*$/, '') || 'converted';
  const name = `${stem}.${opt.dataset.ext}`;
  const req = { op: 'convert', to: opt.value, ...convertOptions() };
  const model = state.model;
  hideConvertError();
  setStatus(`converting to ${opt.value}…`);
  document.body.dataset.convert = 'busy';
  let blob;
  try {
    // a file opened by slices: its worker converts it a slice at a time and
    // answers a Blob of the pieces; a file read whole: a worker of its own
    blob = model.sliced ? await model.bytes(req) : null;
    document.body.dataset.convertPath = model.sliced ? 'sliced' : 'whole';
    if (blob && !(blob instanceof Blob)) {
      // a conversion that needs the whole model (a graph exported or
      // imported, an NNabla model kept, --params): the file read whole in
      // a worker of its own, when it fits in the module's memory
      if (model.file.size > WHOLE_CONVERT_MAX) {
        throw new Error(`${blob.whole}; the page reads a file whole for it up to ${fmtInt(WHOLE_CONVERT_MAX)} bytes, and this one has ${fmtInt(model.file.size)}`);
      }
      setStatus(`converting to ${opt.value}: reading the file whole…`);
      document.body.dataset.convertPath = 'whole';
      blob = new Blob([await convertInWorker(req, model.file)], { type: 'application/octet-stream' });
    }
    blob ||= new Blob([await convertInWorker(req)], { type: 'application/octet-stream' });
  } catch (e) {
    if (state.model === model) showConvertError(e.message || String(e));
    return;
  }
  if (state.model !== model) return; // another file was opened meanwhile
  download(blob, name);
  setStatus(`${name} · ${fmtInt(blob.size)} bytes`);
  document.body.dataset.convert = 'done';
}

// ---- wiring ----

async function openFile(file) {
  state.note = '';
  await openBlob(file, file.name);
}

async function main() {
  const url = new URLSearchParams(location.search).get('url');
  // While the module downloads and compiles, the file of `?url=` is asked
  // for its size and first bytes (and the blocks of its header walk) and a
  // worker starts: the first view waits for the slowest of the three, not
  // for their sum.
  const compiling = compile(WASM);
  const probing = url ? probeURL(url).then(async (got) => {
    // a file read by slices: its header walk's blocks, where the server has them
    if (got.src && got.src.size >= SLICED_FROM) await addWalk(got.src);
    return got;
  }) : null;
  if (probing) {
    probing.catch(() => {}); // said below, once the page can show it
    spareWorker = new Worker('worker.js', { type: 'module' });
  }
  try {
    state.lib = new Library(await compiling);
  } catch (e) {
    showError('the viewer could not start: ' + e.message);
    return;
  }
  for (const b of document.querySelectorAll('#tabs button')) b.onclick = () => selectTab(b.dataset.tab);
  $('convert-to').innerHTML = state.lib.request({ op: 'formats' }).map((f) =>
    `<option value="${esc(f.name)}" data-ext="${esc(f.extension)}">${esc(f.name)} (.${esc(f.extension)})</option>`).join('');
  $('convert-go').onclick = convert;
  $('error-close').onclick = hideConvertError;
  $('file').onchange = (ev) => { if (ev.target.files[0]) openFile(ev.target.files[0]); };
  $('filter').oninput = applyFilter;
  $('search').oninput = () => doSearch(false);
  $('search').onkeydown = (ev) => {
    if (ev.key === 'Enter') doSearch(true);
    if (ev.key === 'Escape') { $('search-results').hidden = true; $('search').blur(); }
  };
  $('fit').onclick = () => state.view && state.view.fit();
  $('direction').onclick = () => state.layout && toggleDirection();
  for (const part of Object.values(LABEL_KEYS)) $(`show-${part}`).onclick = () => state.layout && toggleLabels(part);
  window.addEventListener('resize', () => state.view && state.view.resize());
  $('zoom-in').onclick = () => state.view && state.view.zoom(1.25);
  $('zoom-out').onclick = () => state.view && state.view.zoom(0.8);
  $('export-svg').onclick = exportSVG;
  $('export-png').onclick = () => exportPNG().catch((e) => setStatus('PNG export: ' + e.message));
  document.addEventListener('keydown', onKey);
  $('graph-svg').onclick = () => { $('details').hidden = true; };
  resizable($('details'), $('details-grip'));
  document.addEventListener('dragover', (ev) => { ev.preventDefault(); $('drop').classList.add('over'); });
  document.addEventListener('dragleave', () => $('drop').classList.remove('over'));
  document.addEventListener('drop', (ev) => {
    ev.preventDefault();
    $('drop').classList.remove('over');
    const f = ev.dataTransfer.files[0];
    if (f) openFile(f);
  });
  window.mlformatsOpenBytes = openBytes;
  if (url) {
    // read by ranges when the server answers them (mlformats view's does)
    setStatus('fetching ' + url);
    try {
      const got = await probing;
      state.note = got.note || '';
      await openBlob(got.src || got.blob, got.name);
    } catch (e) {
      showError(e.message);
    }
  } else {
    document.body.dataset.state = 'empty';
  }
}

main();
