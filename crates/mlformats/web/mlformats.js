// Loads the viewer's WebAssembly module (the mlformats library) and speaks
// its plain C ABI (crates/mlformats-web/src/abi.rs): the page copies bytes
// into an input buffer the module hands out, calls a function, and reads
// the answer (or the error message) from the output buffer. No generated
// glue: WebAssembly.instantiate and the module's memory only.

import { RangeReader } from './remote.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

let compiled = null;

// JSON.parse, keeping integers past 2^53 exact (a 64-bit attribute such as
// 9223372036854775813 would otherwise round to 9223372036854776000): they
// become BigInts, read from the number's own text.
export function parseJSON(text) {
  if (!/\d{16}/.test(text)) return JSON.parse(text);
  return JSON.parse(text, (k, v, ctx) =>
    (typeof v === 'number' && !Number.isSafeInteger(v) && ctx && /^-?\d+$/.test(ctx.source) ? BigInt(ctx.source) : v));
}

// The module's imports: ours are mlformats.mlf_read (a big file read by
// slices, see Library.readAt) and mlformats.mlf_write (a converted file
// handed over in pieces, see Library.writeAt). A dependency (zip's random numbers, for
// encrypting and for extracting to disk) links wasm-bindgen's placeholders,
// which nothing the viewer calls reaches; each gets a function that says so
// if it ever is called.
function imports(module, lib) {
  const out = {};
  for (const imp of WebAssembly.Module.imports(module)) {
    if (imp.kind !== 'function') throw new Error(`the module needs ${imp.module}.${imp.name} (a ${imp.kind})`);
    (out[imp.module] ||= {})[imp.name] = () => {
      throw new Error(`the module called ${imp.module}.${imp.name}, which the viewer does not provide`);
    };
  }
  if (out.mlformats && out.mlformats.mlf_read) out.mlformats.mlf_read = (off, ptr, len) => lib.readAt(off, ptr, len);
  if (out.mlformats && out.mlformats.mlf_write) out.mlformats.mlf_write = (off, ptr, len) => lib.writeAt(off, ptr, len);
  return out;
}

// Compiles the module once (from `url`); every Library is a fresh instance.
// The module compiles as it downloads where the server says it is
// application/wasm (`mlformats view` and static hosts do); callers that come
// while it compiles wait for the same compilation.
export function compile(url) {
  compiled ||= (async () => {
    const r = await fetch(url);
    if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
    const type = r.headers.get('Content-Type') || '';
    if (WebAssembly.compileStreaming && /^application\/wasm\b/i.test(type)) return WebAssembly.compileStreaming(r);
    return WebAssembly.compile(await r.arrayBuffer());
  })().catch((e) => {
    compiled = null; // tried again by the next caller
    throw e;
  });
  return compiled;
}

export class Library {
  constructor(module) {
    this.x = new WebAssembly.Instance(module, imports(module, this)).exports;
    this.failed = null;
    this.file = null; // the Blob (or remote file, see remote.js) a file opened by slices is read from
    this.reader = null; // FileReaderSync or RangeReader over this.file
    this.readError = null; // why the last read failed
    this.out = null; // the pieces of a streamed conversion: {parts: [{at, bytes}], len}
    this.x.mlf_init();
  }

  static async load(url) {
    return new Library(await compile(url));
  }

  // Copies `parts` (Uint8Arrays) one after another into the input buffer.
  put(parts) {
    const len = parts.reduce((n, p) => n + p.length, 0);
    const ptr = this.x.mlf_input(len) >>> 0;
    if (ptr === 0) throw new Error(`the file (${len} bytes) does not fit in the viewer's memory`);
    const mem = new Uint8Array(this.x.memory.buffer);
    let at = ptr;
    for (const p of parts) { mem.set(p, at); at += p.length; }
  }

  output() {
    const ptr = this.x.mlf_output_ptr() >>> 0;
    const len = this.x.mlf_output_len() >>> 0;
    return new Uint8Array(this.x.memory.buffer, ptr, len).slice();
  }

  // Runs `f` (a call into the module); 0: its answer's bytes; 1: throws
  // the module's message; a trap (a panic): throws the panic's message and
  // the instance is not used again.
  call(f, maybeWhole = false) {
    if (this.failed) throw new Error(this.failed);
    let rc;
    try {
      rc = f();
    } catch (e) {
      if (!(e instanceof WebAssembly.RuntimeError)) throw e;
      let msg = e.message;
      try { if (this.x.mlf_last_panic()) msg = decoder.decode(this.output()); } catch (_) { /* the trap's own message */ }
      this.failed = 'internal error (a panic in the library): ' + msg;
      throw new Error(this.failed);
    }
    if (maybeWhole && rc === 2) return null;
    const out = this.output();
    const why = this.readError;
    this.readError = null;
    if (rc !== 0) throw new Error(decoder.decode(out) + (why ? ` (${why})` : ''));
    return out;
  }

  // The module's memory, in bytes (it only grows).
  memoryBytes() {
    return this.x.memory.buffer.byteLength;
  }

  // The import mlformats.mlf_read: copies `len` bytes of the open file from
  // `off` into the module's memory at `ptr`, synchronously (FileReaderSync
  // over Blob.slice, or range requests for a remote file: web workers
  // only); 0 when done, 1 when not (the reason kept for the message).
  readAt(off, ptr, len) {
    try {
      if (!this.file) return 1;
      let bytes;
      if (this.file.remote) {
        this.reader ||= new RangeReader(this.file);
        bytes = this.reader.read(off, len);
      } else {
        this.reader ||= new FileReaderSync();
        bytes = new Uint8Array(this.reader.readAsArrayBuffer(this.file.slice(off, off + len)));
      }
      if (bytes.length !== len) return 1;
      new Uint8Array(this.x.memory.buffer, ptr >>> 0, len).set(bytes);
      return 0;
    } catch (e) {
      this.readError = (e && e.message) || String(e);
      return 1;
    }
  }

  // The import mlformats.mlf_write: the module hands over `len` bytes at
  // `ptr` for `off` (offsets are f64: exact past 4 GiB) of the converted
  // file: appended at its end, or over bytes already had (a writer seeks
  // back to patch a header). The pieces stay here, in JavaScript's memory,
  // never the module's; 0 when done, 1 when not.
  writeAt(off, ptr, len) {
    try {
      const o = this.out;
      if (!o) return 1;
      const src = new Uint8Array(this.x.memory.buffer, ptr >>> 0, len >>> 0);
      const end = off + src.length;
      // over the parts it overlaps (the latest first: patches are near the end)
      for (let i = o.parts.length - 1; i >= 0; i--) {
        const p = o.parts[i];
        const pEnd = p.at + p.bytes.length;
        if (pEnd <= off) break;
        const a = Math.max(off, p.at), b = Math.min(end, pEnd);
        if (a < b) p.bytes.set(src.subarray(a - off, b - off), a - p.at);
      }
      if (off > o.len) { o.parts.push({ at: o.len, bytes: new Uint8Array(off - o.len) }); o.len = off; }
      if (end > o.len) {
        o.parts.push({ at: o.len, bytes: src.slice(o.len - off) });
        o.len = end;
      }
      return 0;
    } catch (_) {
      return 1;
    }
  }

  // Converts the open file with the convert request `req` ({to, ...options},
  // see abi.rs) streamed a piece at a time (a file opened by slices:
  // neither the file nor the output is ever whole in the module's memory);
  // answers the converted file as a Blob, or {whole: reason} when the
  // conversion needs the whole model in memory (nothing was written).
  convertStream(req) {
    this.out = { parts: [], len: 0 };
    try {
      const answer = this.request({ ...req, op: 'convert_stream' });
      if (answer.whole !== undefined) return { whole: answer.whole };
      const o = this.out;
      if (o.len !== answer.bytes) throw new Error(`the converted file has ${o.len} bytes, the module wrote ${answer.bytes}`);
      return new Blob(o.parts.map((p) => p.bytes), { type: 'application/octet-stream' });
    } finally {
      this.out = null;
    }
  }

  // Loads a parameter file (a File's bytes and name) for convert's --params.
  loadParams(bytes, name) {
    const n = encoder.encode(name);
    return parseJSON(decoder.decode(this.call(() => { this.put([n, bytes]); return this.x.mlf_params(n.length); })));
  }

  // Opens a big file (a Blob) by slices, in a web worker: the library reads
  // its structure only and each tensor's bytes when asked. Answers the
  // summary, or null when the library reads this format whole only.
  openSliced(file, name) {
    this.file = file;
    this.reader = null;
    const out = this.call(() => { this.put([encoder.encode(name)]); return this.x.mlf_open_sliced(file.size, file.remote ? 4096 : 0); }, true);
    return out === null ? null : parseJSON(decoder.decode(out));
  }

  // Opens a file from its bytes; answers its summary.
  open(bytes, name) {
    const n = encoder.encode(name);
    return parseJSON(decoder.decode(this.call(() => { this.put([n, bytes]); return this.x.mlf_open(n.length); })));
  }

  // A JSON request on the open file (see abi.rs): answers the answer's bytes.
  bytes(req) {
    return this.call(() => { this.put([encoder.encode(JSON.stringify(req))]); return this.x.mlf_request(); });
  }

  // A JSON request on the open file (see abi.rs): answers the parsed JSON.
  request(req) {
    return parseJSON(decoder.decode(this.bytes(req)));
  }
}
