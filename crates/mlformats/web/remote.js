// Files on web servers, read by byte ranges: the file `mlformats view`
// serves, and any URL given as `?url=` whose server answers range requests.
//
// A remote file is plain data, {remote: true, url, size, etag, name}, so
// that it crosses postMessage to a worker like a Blob does; there
// RangeReader reads it a slice at a time, as FileReaderSync reads a picked
// file. Reads are rounded to small blocks and the last blocks are kept; a
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

// Asks `url` for its first byte: {src, name} (a file to read by ranges),
// or {blob, name, note} when the server sent the whole file instead (it does not
// answer range requests: the note says so). Throws a message a person
// understands when the server cannot be read.
export async function probeURL(url) {
  let r;
  try {
    r = await fetch(url, { headers: { Range: 'bytes=0-0' }, cache: 'no-store' });
  } catch (_) {
    throw unreachable(url);
  }
  const name = decodeURIComponent(new URL(url, location.href).pathname.split('/').pop() || 'model');
  if (r.status === 206) {
    let size = totalOf(r.headers.get('Content-Range'));
    const etag = r.headers.get('ETag');
    await r.arrayBuffer();
    if (size === null) {
      // another origin that does not expose Content-Range: its length
      const h = await fetch(url, { method: 'HEAD', cache: 'no-store' }).catch(() => null);
      const n = h && h.ok ? Number(h.headers.get('Content-Length')) : NaN;
      if (Number.isSafeInteger(n) && n > 0) size = n;
    }
    if (size !== null) return { src: { remote: true, url, size, etag, name }, name };
    r = await fetch(url, { cache: 'no-store' }).catch(() => { throw unreachable(url); });
  }
  if (r.status === 416) {
    // an empty file has no first byte
    return { blob: new Blob([]), name, note: '' };
  }
  if (!r.ok) throw new Error(`${url}: the server answered HTTP ${r.status} ${r.statusText}`.trim());
  return { blob: await r.blob(), name, note: 'the server does not answer range requests: the whole file was downloaded' };
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
