// The viewer's workers, each with its own instance of the module.
//
// Every message may carry `module`, the page's compiled module.
//
// - {bytes, name, names}: per-tensor statistics of a small file (its own
//   copy of the bytes), one message per tensor as soon as it is computed;
// - {file, name, names}: the same for a big file (a Blob, or a remote file:
//   see remote.js) opened by slices: the module reads each tensor a slice
//   at a time (FileReaderSync over Blob.slice, or range requests), never
//   the whole file;
// - {serve: true, file, name}: opens a big file by slices and answers the
//   page's requests ({id, req}) on it: the summary, table and graph first
//   ({id: 0, ...}), or {fallback: true} when the library reads the format
//   whole only. Every answer carries the module's memory size. A convert
//   request ({op: 'convert', ...}) is streamed: the answer is a Blob, or
//   {whole: reason} when it needs the whole model in memory;
// - {convert: req, bytes, name, params} (or {convert, file, ...}: a Blob
//   or a remote file, read whole here): converts a file read whole (its own
//   copy of the bytes; `params`: {bytes, name} of --params' file) with the
//   request `req` ({op: 'convert', to, dtype, only, ...},
//   see abi.rs) and answers {converted: bytes} (transferred) or {error}, so
//   the page stays responsive while the library converts.
import { Library } from './mlformats.js';
import { wholeBytes } from './remote.js';

let served = null;

const pause = () => new Promise((r) => setTimeout(r, 0));

// The page sends the module it compiled (a WebAssembly.Module); compiling
// it again here would cost most of the time to the first paint.
const load = (m) => (m.module ? new Library(m.module) : Library.load('mlformats_web.wasm'));

async function stats(m) {
  const lib = await load(m);
  if (m.file) {
    if (!lib.openSliced(m.file, m.name)) throw new Error('the file cannot be read by slices');
  } else {
    lib.open(m.bytes, m.name);
  }
  for (const n of m.names) {
    self.postMessage({ name: n, stats: lib.request({ op: 'stats', name: n, bins: 40 }), memory: lib.memoryBytes() });
    if (m.file) await pause(); // lets a terminate() in
  }
  lib.request({ op: 'close' });
  self.postMessage({ done: true, memory: lib.memoryBytes() });
}

async function convert(m) {
  const lib = await load(m);
  // a big file read whole here, for a conversion that needs the whole model
  if (m.file) m.bytes = await wholeBytes(m.file);
  lib.open(m.bytes, m.name);
  m.bytes = null; // the module holds its own copy
  if (m.params) lib.loadParams(m.params.bytes, m.params.name);
  const out = lib.bytes(m.convert);
  self.postMessage({ converted: out, memory: lib.memoryBytes() }, [out.buffer]);
}

async function serve(m) {
  served = await load(m);
  const summary = served.openSliced(m.file, m.name);
  if (!summary) {
    self.postMessage({ id: 0, fallback: true });
    return;
  }
  const tensors = served.request({ op: 'tensors' });
  const graph = served.request({ op: 'graph' });
  self.postMessage({ id: 0, summary, tensors, graph, memory: served.memoryBytes() });
}

self.onmessage = async (ev) => {
  const m = ev.data;
  if (m.req) {
    try {
      const answer = m.req.op === 'convert' ? served.convertStream(m.req) : served.request(m.req);
      self.postMessage({ id: m.id, answer, memory: served.memoryBytes() });
    } catch (e) {
      self.postMessage({ id: m.id, error: (e && e.message) || String(e) });
    }
    return;
  }
  try {
    await (m.convert ? convert(m) : m.serve ? serve(m) : stats(m));
  } catch (e) {
    self.postMessage({ id: 0, error: (e && e.message) || String(e), done: true });
  }
};
