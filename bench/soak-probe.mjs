// Preloaded into each soak process (`node --expose-gc --import bench/soak-probe.mjs main.mjs`); bench
// only, never shipped. Every SOAK_PROBE_MS (default 10 s) it runs a full garbage collection and writes
// the heap that survives it to SOAK_PROBE_FILE: RSS alone cannot tell a leak from a heap V8 has not
// given back yet, the live heap after a full collection can.
import { writeFileSync } from 'node:fs';

const file = process.env.SOAK_PROBE_FILE;
const every = Number(process.env.SOAK_PROBE_MS ?? 10_000);
if (file && typeof globalThis.gc === 'function') {
  const probe = () => {
    globalThis.gc();
    const m = process.memoryUsage();
    const mb = (n) => Math.round((n / 1048576) * 10) / 10;
    writeFileSync(file, JSON.stringify({ at: Date.now(), heapUsedMb: mb(m.heapUsed), externalMb: mb(m.external), arrayBuffersMb: mb(m.arrayBuffers) }));
  };
  setInterval(probe, every).unref();
}
