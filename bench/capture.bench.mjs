// Step screenshots: what one capture costs the browser (issue 30, point 1), by size and JPEG quality.
// A TodoMVC page (corpus app todomvc, served on 127.0.0.1) in one Chromium with flowctl's launch flags;
// each sample types into the page (so there is a new frame to draw) and takes one CDP
// Page.captureScreenshot as the step screenshots do (optimizeForSpeed), the variants interleaved
// sample by sample so the machine's load falls on all alike. Measured: the CPU time of Chromium's
// processes (/proc, user + system) per sample, less the same without a capture; and the JPEG's size.
// BENCH_QUICK=1: fewer samples. Writes its section of RESULTS.md.
import os from 'node:os';
import { chromium } from 'playwright-core';
import { LAUNCH_FLAGS, resolveBrowser } from '../dist/adapters/executor-playwright.js';
import { startApps } from './hosted-browser-apps.mjs';
import { median, processCpuMs, processTree, writeSection } from './results.mjs';

const ROUNDS = process.env.BENCH_QUICK === '1' ? 8 : 30;
const PER_ROUND = 3;
const VARIANTS = [
  { name: 'no capture (the page work alone)' },
  { name: 'viewport, quality 50 (what steps take)', quality: 50 },
  { name: 'viewport, quality 70', quality: 70 },
  { name: '0.75 of the viewport, quality 70 (before)', quality: 70, scale: 0.75 },
  { name: 'half the viewport, quality 70', quality: 70, scale: 0.5 },
  { name: 'screencast frames instead (a live view streaming, quality 50)', quality: 50, screencast: true },
];

/** The next screencast frame of `cdp` (acknowledged at once, as a live view does); undefined after `capMs`. */
function nextFrame(cdp, capMs) {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      cdp.off('Page.screencastFrame', on);
      resolve(undefined);
    }, capMs);
    function on(frame) {
      clearTimeout(timer);
      cdp.off('Page.screencastFrame', on);
      cdp.send('Page.screencastFrameAck', { sessionId: frame.sessionId }).catch(() => {});
      resolve(frame);
    }
    cdp.on('Page.screencastFrame', on);
  });
}

/** CPU milliseconds used so far by the processes below `root` (Chromium's, here). */
function treeCpuMs(root) {
  return processTree(root)
    .slice(1)
    .reduce((sum, pid) => sum + processCpuMs(pid), 0);
}

const repo = new URL('../', import.meta.url).pathname;
const { origin, close } = await startApps(repo);
const { executablePath } = await resolveBrowser();
const browser = await chromium.launch({ executablePath, args: [...LAUNCH_FLAGS] });
const loadAtStart = os.loadavg()[0];
const stats = VARIANTS.map(() => ({ cpu: [], bytes: [] }));
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const page = await context.newPage();
  await page.goto(`${origin}/todomvc/examples/vanillajs/index.html`, { waitUntil: 'load' });
  const cdp = await context.newCDPSession(page);
  const input = page.locator('#new-todo');
  for (let round = -1; round < ROUNDS; round++) {
    for (const [i, v] of VARIANTS.entries()) {
      const before = treeCpuMs(process.pid);
      let bytes = 0;
      if (v.screencast) {
        const first = nextFrame(cdp, 5000);
        await cdp.send('Page.startScreencast', { format: 'jpeg', quality: v.quality, everyNthFrame: 1 });
        await first;
      }
      for (let k = 0; k < PER_ROUND; k++) {
        // Screencasting, every frame the fill makes is encoded and sent: wait for the first (bounded: a hang, not a budget).
        const frame = v.screencast ? nextFrame(cdp, 5000) : undefined;
        await input.fill(`item ${round} ${i} ${k}`);
        if (frame) bytes += Buffer.byteLength((await frame)?.data ?? '', 'base64');
        if (frame || v.quality === undefined) continue;
        const clip = v.scale ? { clip: { x: 0, y: 0, width: 1280, height: 720, scale: v.scale } } : {};
        const { data } = await cdp.send('Page.captureScreenshot', { format: 'jpeg', quality: v.quality, optimizeForSpeed: true, ...clip });
        bytes += Buffer.byteLength(data, 'base64');
      }
      if (v.screencast) await cdp.send('Page.stopScreencast');
      if (round < 0) continue; // one unmeasured round first
      stats[i].cpu.push((treeCpuMs(process.pid) - before) / PER_ROUND);
      stats[i].bytes.push(bytes / PER_ROUND);
    }
  }
} finally {
  await browser.close();
  close();
}

const base = median(stats[0].cpu);
const rows = VARIANTS.map((v, i) => {
  const cpu = median(stats[i].cpu);
  return `| ${v.name} | ${cpu.toFixed(1)} | ${i === 0 ? '' : (cpu - base).toFixed(1)} | ${i === 0 ? '' : (median(stats[i].bytes) / 1024).toFixed(0)} |`;
});
const body = `Chromium's CPU per sample (a \`fill\` on TodoMVC, then one \`Page.captureScreenshot\` of the 1280 x 720 viewport as
a JPEG, \`optimizeForSpeed\`), median of ${ROUNDS} rounds of ${PER_ROUND} samples per variant, interleaved. The CPU is
that of Chromium's processes (/proc, user + system, 10 ms ticks: medians of sums over 3 samples). 1-minute load
average ${loadAtStart.toFixed(1)} at the start, ${os.loadavg()[0].toFixed(1)} at the end (2 cores).

| variant | Chromium CPU ms per sample | capture ms (over no capture) | JPEG KB |
|---|---|---|---|
${rows.join('\n')}

In these runs a capture scaled to 0.75 costs the browser more than an unscaled one, and only half size
costs less (its text is hard to read); JPEG quality changes the size, hardly the CPU. Taking the pictures
from a screencast instead (frames acknowledged at once, the first frame after each fill) costs as much
as a capture or more: each frame is drawn, read back and encoded the same way, and a page that keeps
changing (a caret, an animation) sends frames between steps too. Step screenshots are the viewport at
its own size, quality 50 (docs/browser.md, "Screenshots").
`;
writeSection('capture', 'Step screenshots: what one capture costs the browser', body);
process.stdout.write(body);
