// Per-tensor statistics, off the page's thread: opens its own copy of the
// file in its own instance of the module and posts one message per tensor
// as soon as it is computed.
import { Library } from './mlformats.js';

self.onmessage = async (ev) => {
  const { bytes, name, names } = ev.data;
  try {
    const lib = await Library.load('mlformats_web.wasm');
    lib.open(bytes, name);
    for (const n of names) {
      self.postMessage({ name: n, stats: lib.request({ op: 'stats', name: n, bins: 40 }) });
    }
    lib.request({ op: 'close' });
    self.postMessage({ done: true });
  } catch (e) {
    self.postMessage({ error: (e && e.message) || String(e), done: true });
  }
};
