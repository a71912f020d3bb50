// Moving about the drawing of a network: pan and zoom of the SVG, and a
// minimap (an overview of the whole drawing with the visible area as a
// rectangle; a click or a drag in it moves the view there).

// The minimap's largest size, in CSS pixels.
const MINI_W = 180, MINI_H = 220, MINI_LEAST = 60;

// Pan and zoom of `vp` (the drawing's group) in `svg`, for the layout `L`;
// `mini` is the minimap's element (a div holding a canvas and a div for the
// visible area). Returns the view's controls.
export function panZoom(svg, vp, L, mini) {
  const v = { x: 0, y: 0, k: 1 };
  const map = minimap(mini, L, v, svg, () => apply());
  const apply = () => {
    vp.setAttribute('transform', `translate(${v.x},${v.y}) scale(${v.k})`);
    map.update();
  };
  const zoomAt = (k, px, py) => {
    k = Math.min(4, Math.max(0.02, k));
    v.x = px - (px - v.x) * (k / v.k); v.y = py - (py - v.y) * (k / v.k); v.k = k;
    apply();
  };
  const lr = L.direction === 'lr';
  const view = {
    state: v,
    // the place and scale of another view (`state` of it): the drawing
    // redrawn (a group opened or closed) stays where the reader was
    restore(s) {
      v.x = s.x; v.y = s.y; v.k = s.k;
      apply();
    },
    // the whole drawing in the view (a tall graph gets small: on demand)
    fit() {
      const r = svg.getBoundingClientRect();
      if (!r.width) return;
      v.k = Math.min(r.width / (L.width + 40), r.height / (L.height + 40), 1.5);
      v.x = (r.width - L.width * v.k) / 2;
      v.y = (r.height - L.height * v.k) / 2;
      apply();
    },
    // readable, where the graph begins: scale 1 with the inputs (the first
    // layer) in view, at the top (at the left when laid out left to right)
    home() {
      const r = svg.getBoundingClientRect();
      if (!r.width) return;
      v.k = 1;
      const first = L.nodes.filter((n) => n.layer === 0);
      // across the layers: centred when the drawing fits, else on the inputs
      const [pos, size, room, whole] = lr ? ['y', 'height', r.height, L.height] : ['x', 'width', r.width, L.width];
      const lo = Math.min(...first.map((n) => n[pos])), hi = Math.max(...first.map((n) => n[pos] + n[size]));
      const mid = first.length ? (lo + hi) / 2 : whole / 2;
      const across = whole + 40 <= room ? (room - whole) / 2 : room / 2 - mid;
      if (lr) { v.x = 20; v.y = across; } else { v.x = across; v.y = 20; }
      apply();
    },
    // box `n` in the middle of the view, at a readable scale; of the part
    // left of `panel` (the details) when it is open
    center(n, panel) {
      const r = svg.getBoundingClientRect();
      v.k = Math.max(v.k, 0.8);
      v.x = room(r, panel) / 2 - (n.x + n.width / 2) * v.k; v.y = r.height / 2 - (n.y + n.height / 2) * v.k;
      apply();
    },
    // box `n` wholly in view, not behind `panel` (the details, docked at
    // the right): when it is not, moved to the middle of the part of the
    // view left of the panel (across, along or both), at the same scale
    reveal(n, panel) {
      const r = svg.getBoundingClientRect();
      if (!r.width) return;
      const right = room(r, panel), m = 12, x0 = n.x * v.k + v.x, y0 = n.y * v.k + v.y;
      const x1 = x0 + n.width * v.k, y1 = y0 + n.height * v.k;
      const across = x0 < m || x1 > right - m, along = y0 < m || y1 > r.height - m;
      if (!across && !along) return;
      // (a box wider than the room left of the panel: its left side in view)
      if (across) v.x = Math.max(m, (right - n.width * v.k) / 2) - n.x * v.k;
      if (along) v.y = r.height / 2 - (n.y + n.height / 2) * v.k;
      apply();
    },
    zoom(f) {
      const r = svg.getBoundingClientRect();
      zoomAt(v.k * f, r.width / 2, r.height / 2);
    },
    // the minimap shown again or hidden when the view's size changed
    resize() { map.update(); },
  };
  svg.onwheel = (ev) => {
    ev.preventDefault();
    const r = svg.getBoundingClientRect();
    zoomAt(v.k * Math.exp(-ev.deltaY * 0.0015), ev.clientX - r.left, ev.clientY - r.top);
  };
  let drag = null;
  svg.onpointerdown = (ev) => { drag = { x: ev.clientX - v.x, y: ev.clientY - v.y }; };
  svg.onpointermove = (ev) => { if (drag) { v.x = ev.clientX - drag.x; v.y = ev.clientY - drag.y; apply(); } };
  svg.onpointerup = svg.onpointerleave = () => { drag = null; };
  return view;
}

// The width of the view `r` (its client rectangle) left of `panel` (the
// details, docked at the right), or all of it when the panel is closed.
function room(r, panel) {
  const p = panel && !panel.hidden ? panel.getBoundingClientRect() : null;
  return p && p.left < r.right ? Math.max(0, p.left - r.left) : r.width;
}

// The minimap of layout `L` in element `mini`: every box as a rectangle of
// its colour, the view `v` of `svg` as a frame. Hidden when the whole
// drawing fits the view at scale 1.
function minimap(mini, L, v, svg, moved) {
  const none = { update() {} };
  if (!mini) return none;
  const canvas = mini.querySelector('canvas'), frame = mini.querySelector('.frame');
  // one scale when the drawing's shape allows; a very tall or wide one is
  // squeezed less across, to stay MINI_LEAST pixels there
  const s = Math.min(MINI_W / Math.max(1, L.width), MINI_H / Math.max(1, L.height));
  const sx = Math.min(MINI_W / Math.max(1, L.width), Math.max(s, MINI_LEAST / Math.max(1, L.width)));
  const sy = Math.min(MINI_H / Math.max(1, L.height), Math.max(s, MINI_LEAST / Math.max(1, L.height)));
  const w = Math.max(8, Math.round(L.width * sx)), h = Math.max(8, Math.round(L.height * sy));
  const ratio = window.devicePixelRatio || 1;
  canvas.width = Math.round(w * ratio); canvas.height = Math.round(h * ratio);
  canvas.style.width = `${w}px`; canvas.style.height = `${h}px`;
  const c = canvas.getContext('2d');
  c.setTransform(ratio * sx, 0, 0, ratio * sy, 0, 0);
  c.fillStyle = '#fff';
  c.fillRect(0, 0, L.width, L.height);
  // edges only where they stay visible (a few thousand)
  if (L.edges.length <= 5000) {
    c.strokeStyle = '#b8c2cc'; c.lineWidth = 1 / Math.max(sx, sy);
    c.beginPath();
    for (const e of L.edges) e.points.forEach(([x, y], i) => (i ? c.lineTo(x, y) : c.moveTo(x, y)));
    c.stroke();
  }
  for (const n of L.nodes) {
    c.fillStyle = n.stroke || '#587a9c';
    c.fillRect(n.x, n.y, Math.max(1 / sx, n.width), Math.max(1 / sy, n.height)); // a pixel at least
  }
  const update = () => {
    const r = svg.getBoundingClientRect();
    mini.hidden = !r.width || (L.width * v.k <= r.width && L.height * v.k <= r.height);
    if (mini.hidden) return;
    // the visible area, in the drawing's frame, clipped to the minimap
    const x0 = Math.max(0, -v.x / v.k), y0 = Math.max(0, -v.y / v.k);
    const x1 = Math.min(L.width, (r.width - v.x) / v.k), y1 = Math.min(L.height, (r.height - v.y) / v.k);
    Object.assign(frame.style, {
      left: `${x0 * sx}px`, top: `${y0 * sy}px`,
      width: `${Math.max(2, (x1 - x0) * sx)}px`, height: `${Math.max(2, (y1 - y0) * sy)}px`,
    });
  };
  // a click or drag centres the view on that point of the drawing
  const go = (ev) => {
    const b = canvas.getBoundingClientRect(), r = svg.getBoundingClientRect();
    const px = (ev.clientX - b.left) / sx, py = (ev.clientY - b.top) / sy;
    v.x = r.width / 2 - px * v.k; v.y = r.height / 2 - py * v.k;
    moved();
  };
  let dragging = false;
  mini.onpointerdown = (ev) => { ev.preventDefault(); ev.stopPropagation(); dragging = true; mini.setPointerCapture?.(ev.pointerId); go(ev); };
  mini.onpointermove = (ev) => { if (dragging) go(ev); };
  mini.onpointerup = mini.onpointercancel = () => { dragging = false; };
  mini.onwheel = (ev) => ev.stopPropagation();
  return { update };
}

// The details panel `panel` (docked at the right) made as wide as its left
// edge `grip` is dragged to: between 240 px and 90% of the page, kept for
// the next visit. The grip follows the panel's edge and shows with it.
export function resizable(panel, grip) {
  const KEY = 'mlformats.detailsWidth';
  const follow = () => {
    grip.hidden = panel.hidden;
    grip.style.right = `${panel.offsetWidth}px`;
  };
  const setWidth = (w) => {
    const max = Math.max(240, window.innerWidth * 0.9);
    panel.style.width = `${Math.round(Math.min(max, Math.max(240, w)))}px`;
    follow();
  };
  try {
    const saved = Number(localStorage.getItem(KEY));
    if (saved) setWidth(saved);
  } catch { /* storage may be off */ }
  new MutationObserver(follow).observe(panel, { attributes: true, attributeFilter: ['hidden'] });
  grip.addEventListener('pointerdown', (ev) => {
    ev.preventDefault();
    grip.setPointerCapture(ev.pointerId);
    grip.classList.add('dragging');
    const right = panel.getBoundingClientRect().right;
    const move = (e) => setWidth(right - e.clientX);
    const up = () => {
      grip.classList.remove('dragging');
      grip.removeEventListener('pointermove', move);
      grip.removeEventListener('pointerup', up);
      try { localStorage.setItem(KEY, String(panel.offsetWidth)); } catch { /* storage may be off */ }
    };
    grip.addEventListener('pointermove', move);
    grip.addEventListener('pointerup', up);
  });
  window.addEventListener('resize', follow);
}
