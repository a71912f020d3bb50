// Per-tensor statistics, off the page's thread: opens its own copy of the
// file and posts one message per tensor as soon as it is computed.
import init, { Model, install_panic_hook, last_panic } from './pkg/mlformats_web.js';

self.onmessage = async (ev) => {
  const { bytes, name, keys } = ev.data;
  try {
    await init();
    install_panic_hook();
    const model = new Model(bytes, name);
    for (const key of keys) {
      const s = JSON.parse(model.stats(key, 40));
      self.postMessage({ key, stats: s });
    }
    model.free();
    self.postMessage({ done: true });
  } catch (e) {
    const p = e instanceof WebAssembly.RuntimeError ? last_panic() : null;
    self.postMessage({ error: p || (e && e.message) || String(e), done: true });
  }
};
