// Files on web servers, read by byte ranges: the file `mlformats view`
// serves, and any URL given as `?url=` whose server answers range requests.
//
// A remote file is plain data, {remote: true, url, size, etag, name, head, walk, blocks},
// so that it crosses postMessage to a worker like a Blob does; there
// RangeReader reads it a slice at a time, as FileReaderSync reads a picked
// file. `head` is the file's first bytes (up to 64 KiB), which the request
// that learns its size and ETag fetches: most formats' headers (all of a
// safetensors header, an ONNX model's graph, detection's look at the
// start) are there, so a header walk begins without a request of its own.
// `mlformats view` also says where the blocks its header walk reads are
// (`X-Mlformats-Walk`, see crates/mlformats/src/view.rs): addWalk fetches
// them in one request into `blocks`, [[offset, bytes], ...], so that a
// walk that jumps from header to header (a `.params`, `.tsm` or ONNX
// file: one header before each tensor) finds them here instead of making
// a round trip for each.
// Reads are rounded to small blocks and the last blocks are kept; a
// read that goes on where the last one ended, past the blocks kept,
// fetches ahead, twice as far each time (up to 1 MiB), so a header walk of many small reads costs a
// handful of requests, and reads scattered over the file (one small
// header per tensor) cost a block each; a read bigger than the read-ahead
// is one request of its own. The server's ETag
// (when it sends one) is compared on every answer: a file that changes
// while it is read is an error, never a mix of two files.

const BLOCK = 8 << 10;
const AHEAD = 128; // the most blocks fetched ahead: 1 MiB
const KEEP = 1024; // blocks kept: 8 MiB
const DIRECT = AHEAD * BLOCK; // reads this big skip the blocks
const HEAD = 64 << 10; // the first bytes, fetched with the size

// Content-Range `bytes A-B/TOTAL` -> TOTAL (null when absent or unknown).
function totalOf(contentRange) {
  const m = /\/(\d+)\s*$/.exec(contentRange || '');
  const n = m ? Number(m[1]) : NaN;
  return Number.isSafeInteger(n) ? n : null;
}

function unreachable(url) {
  return new Error(`${url} could not be read: the server is unreachable, or it does not let this page read it ` +
    '(a page on another origin needs the server to send Access-Control-Allow-Origin, and to allow the Range header ' +
    'for reading by ranges)');
}

// Whether a 206 answer's Content-Range starts at byte 0 (a server that
// does not expose it: taken as asked).
function startOf(contentRange) {
  const m = /^\s*bytes\s+(\d+)-/.exec(contentRange || '');
  return !contentRange || (m && Number(m[1]) === 0);
}

// Asks `url` for its first bytes (up to 64 KiB): {src, name} (a file to
// read by ranges, those bytes its `head`), or {blob, name, note} when the
// server sent the whole file instead (it does not answer range requests:
// the note says so). Throws a message a person understands when the
// server cannot be read.
export async function probeURL(url) {
  let r;
  try {
    r = await fetch(url, { headers: { Range: `bytes=0-${HEAD - 1}` }, cache: 'no-store' });
  } catch (_) {
    throw unreachable(url);
  }
  const name = decodeURIComponent(new URL(url, location.href).pathname.split('/').pop() || 'model');
  if (r.status === 206) {
    const range = r.headers.get('Content-Range');
    let size = totalOf(range);
    const etag = r.headers.get('ETag');
    let head = new Uint8Array(await r.arrayBuffer());
    if (!startOf(range) || head.length > HEAD) head = null;
    if (size === null) {
      // another origin that does not expose Content-Range: its length
      const h = await fetch(url, { method: 'HEAD', cache: 'no-store' }).catch(() => null);
      const n = h && h.ok ? Number(h.headers.get('Content-Length')) : NaN;
      if (Number.isSafeInteger(n) && n > 0) size = n;
    }
    // the first bytes, if they are all of the file's first HEAD bytes
    if (size !== null && head && head.length !== Math.min(HEAD, size)) head = null;
    const walk = r.headers.get('X-Mlformats-Walk');
    if (size !== null) return { src: { remote: true, url, size, etag, name, head, walk, blocks: null }, name };
    r = await fetch(url, { cache: 'no-store' }).catch(() => { throw unreachable(url); });
  }
  if (r.status === 416) {
    // an empty file has no first byte
    return { blob: new Blob([]), name, note: '' };
  }
  if (!r.ok) throw new Error(`${url}: the server answered HTTP ${r.status} ${r.statusText}`.trim());
  return { blob: await r.blob(), name, note: 'the server does not answer range requests: the whole file was downloaded' };
}

// The blocks of the header walk of `src` (a remote file whose server says
// where they are: `mlformats view`'s), into `src.blocks`, in one request:
// [offset (8 bytes, little-endian), length (4 bytes), bytes] records, the
// blocks `src.head` holds left out. Anything amiss (another version of the
// file, a bad answer) leaves `src.blocks` empty: the walk then asks for
// what it reads, as on any server.
export async function addWalk(src) {
  if (!src.walk) return;
  try {
    const u = new URL(src.walk, new URL(src.url, location.href));
    u.search = `?block=${BLOCK}&have=${src.head ? src.head.length : 0}`;
    const r = await fetch(u, { cache: 'no-store' });
    if (!r.ok || (src.etag && r.headers.get('ETag') !== src.etag)) return;
    const body = new Uint8Array(await r.arrayBuffer());
    const v = new DataView(body.buffer);
    const runs = [];
    for (let at = 0; at < body.length;) {
      if (at + 12 > body.length) return;
      const off = Number(v.getBigUint64(at, true));
      const len = v.getUint32(at + 8, true);
      if (at + 12 + len > body.length || off + len > src.size) return;
      runs.push([off, body.subarray(at + 12, at + 12 + len)]);
      at += 12 + len;
    }
    src.blocks = runs;
  } catch (_) {
    // read as on any server
  }
}

// The bytes of a Blob or of a remote file, whole (a conversion that needs
// the whole model, a small file).
export async function wholeBytes(file) {
  if (!file.remote) return new Uint8Array(await file.arrayBuffer());
  let r;
  try {
    r = await fetch(file.url, { cache: 'no-store' });
  } catch (_) {
    throw unreachable(file.url);
  }
  if (!r.ok) throw new Error(`${file.url}: the server answered HTTP ${r.status}`);
  const etag = r.headers.get('ETag');
  if (file.etag && etag && etag !== file.etag) throw changed(file, etag);
  const bytes = new Uint8Array(await r.arrayBuffer());
  if (bytes.length !== file.size) throw new Error(`${file.url} has ${bytes.length} bytes now, ${file.size} when it was opened`);
  return bytes;
}

function changed(file, etag) {
  return new Error(`${file.url} changed on the server while it was read (ETag ${file.etag} when opened, ${etag} now)`);
}

// Reads a remote file by ranges, synchronously (XMLHttpRequest in a
// worker): what Library.readAt calls for a remote file.
export class RangeReader {
  constructor(file) {
    this.file = file;
    this.blocks = new Map(); // block number -> bytes, least recently used first
    this.next = -1; // where the last read ended
    this.ahead = 0; // blocks fetched past a read that goes on from the last
    this.requests = 0;
    this.fetched = 0;
    // the first bytes, fetched with the size (see probeURL), and the
    // header walk's blocks (see addWalk)
    if (file.head) this.keep(0, file.head);
    for (const [at, bytes] of file.blocks || []) this.keep(at, bytes);
  }

  // Bytes from `at` (a block's start) into the blocks kept: their whole
  // blocks, and the file's last one, short.
  keep(at, bytes) {
    if (at % BLOCK) return;
    for (let i = 0; i * BLOCK < bytes.length; i++) {
      const block = bytes.subarray(i * BLOCK, (i + 1) * BLOCK);
      if (block.length === BLOCK || at + i * BLOCK + block.length === this.file.size) this.blocks.set(at / BLOCK + i, block);
    }
  }

  // Bytes [a, b) in one request.
  get(a, b) {
    const x = new XMLHttpRequest();
    x.open('GET', this.file.url, false);
    x.responseType = 'arraybuffer';
    x.setRequestHeader('Range', `bytes=${a}-${b - 1}`);
    try {
      x.send();
    } catch (_) {
      throw unreachable(this.file.url);
    }
    if (x.status !== 206) throw new Error(`${this.file.url}: the server answered HTTP ${x.status} to a range request for bytes ${a}-${b - 1}`);
    const etag = x.getResponseHeader('ETag');
    if (this.file.etag && etag && etag !== this.file.etag) throw changed(this.file, etag);
    const bytes = new Uint8Array(x.response);
    if (bytes.length !== b - a) throw new Error(`${this.file.url}: asked for ${b - a} bytes at ${a}, the server sent ${bytes.length}`);
    this.requests += 1;
    this.fetched += bytes.length;
    return bytes;
  }

  // `len` bytes from `off`.
  read(off, len) {
    const end = off + len;
    if (end > this.file.size) throw new Error(`read past the end of ${this.file.url} (${end} > ${this.file.size} bytes)`);
    if (len === 0) return new Uint8Array(0);
    const sequential = off === this.next;
    this.next = end;
    if (len >= DIRECT) return this.get(off, end);
    const first = Math.floor(off / BLOCK);
    const last = Math.floor((end - 1) / BLOCK);
    let missing = false;
    for (let i = first; i <= last && !missing; i++) missing = !this.blocks.has(i);
    if (missing) {
      // reading on where the last read ended, past what is kept: further ahead
      this.ahead = sequential ? Math.min(AHEAD, Math.max(1, 2 * this.ahead)) : 0;
      const stop = Math.min(last + this.ahead, Math.floor((this.file.size - 1) / BLOCK));
      // each run of missing blocks in one request (the last run goes on ahead)
      for (let i = first; i <= last; i++) {
        if (this.blocks.has(i)) continue;
        let j = i;
        while (j < stop && !this.blocks.has(j + 1)) j++;
        const bytes = this.get(i * BLOCK, Math.min((j + 1) * BLOCK, this.file.size));
        for (let k = i; k <= j; k++) this.blocks.set(k, bytes.subarray((k - i) * BLOCK, (k - i + 1) * BLOCK));
        i = j;
      }
    }
    const out = new Uint8Array(len);
    for (let k = first; k <= last; k++) {
      const block = this.blocks.get(k);
      this.blocks.delete(k); // most recently used: to the end
      this.blocks.set(k, block);
      const at = k * BLOCK;
      const from = Math.max(off, at);
      const to = Math.min(end, at + block.length);
      out.set(block.subarray(from - at, to - at), from - off);
    }
    while (this.blocks.size > KEEP) this.blocks.delete(this.blocks.keys().next().value);
    return out;
  }
}
