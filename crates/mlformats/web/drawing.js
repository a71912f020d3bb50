// The graph's drawing as files: a standalone SVG document and a PNG of it,
// and the download of a Blob.

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
    '.edge{fill:none;stroke:#8a9aab;stroke-width:1.2}.edge-label{font-size:9px;fill:#557;font-family:monospace}';
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
