// The page's speed in headless Chromium against the native build on one thread (issue 33; figures in
// docs/performance.md, "Issue 33"). For each scene:
//   compute   ms per step of session.step(N) inside the page (no drawing), and of `eddy run --steps N
//             --threads 1` (summary.json's mean_ms_per_step, the steps alone): their ratio
//   live      the page playing for a few seconds: frames drawn per second (each advances the simulation),
//             steps per second and simulated seconds per wall second
// and once: the first frame after load, and the .wasm's size gzipped.
//
//   NODE_PATH=build-web/node_modules node bench/web/page_bench.mjs build-web build/bin/eddy /usr/bin/chromium
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';

import { launchChromium, openEddyPage, startServer } from '../../tests/web/browser.mjs';

const [webDir, eddy, chromium] = process.argv.slice(2);
if (!webDir || !eddy || !chromium) {
  console.error('usage: page_bench.mjs WEB_BUILD EDDY CHROMIUM');
  process.exit(2);
}
const cases = [
  // scene, method ("" = the scene's), steps timed, seconds of live play
  ['clavet_dam_break_2d', '', 300, 5],
  ['dam_break_2d', '', 300, 5],
  ['dfsph_dam_break_2d', '', 150, 5],
  ['pbf_dam_break_2d', '', 150, 5],
  ['shallow_valley', '', 200, 5],
  ['dam_break_3d', '', 20, 5],
];
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'eddy-web-bench-'));
const { server, base } = await startServer(webDir);
const browser = await launchChromium(chromium);

const wasm = fs.readFileSync(path.join(webDir, 'eddy.wasm'));
const gz = zlib.gzipSync(wasm, { level: 9 }).length;
console.log(`eddy.wasm: ${(wasm.length / 1048576).toFixed(2)} MiB, ${(gz / 1048576).toFixed(2)} MiB gzipped -9`);

const first = [];
for (let k = 0; k < 3; k++) {
  const page = await openEddyPage(browser, `${base}?scene=clavet_dam_break_2d`);
  first.push(await page.evaluate(() => window.eddyPage.firstFrameMs));
  await page.close();
}
console.log(`first frame after navigation (clavet_dam_break_2d): ${first.map(x => `${Math.round(x)} ms`).join(', ')}`);

console.log('\n| scene | particles/cells | page ms/step | native ms/step (1 thread) | page/native | live fps | live steps/s | simulated s per wall s |');
console.log('|---|---|---|---|---|---|---|---|');
for (const [scene, method, n, seconds] of cases) {
  const out = path.join(work, scene);
  const r = spawnSync(eddy, ['run', scene, '--steps', String(n), '--threads', '1', '--format', 'csv', '--out', out,
    ...(method ? ['--set', `method=${method}`] : [])], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`eddy run ${scene}: ${r.stderr}`);
  const nativeMs = JSON.parse(fs.readFileSync(path.join(out, 'summary.json'), 'utf8')).mean_ms_per_step;

  const query = `scene=${scene}${method ? `&method=${method}` : ''}`;
  const page = await openEddyPage(browser, `${base}?${query}&paused=1`);
  const { ms, count } = await page.evaluate(k => {
    const s = window.eddyPage.session;
    const t0 = performance.now();
    s.step(k, 0);
    return { ms: (performance.now() - t0) / k, count: s.count() };
  }, n);
  await page.close();

  const live = await openEddyPage(browser, `${base}?${query}`);
  const a = await live.evaluate(() => ({ t: performance.now(), steps: window.eddyPage.session.steps(), time: window.eddyPage.session.time() }));
  await new Promise(res => setTimeout(res, seconds * 1000));
  const b = await live.evaluate(() => ({ t: performance.now(), steps: window.eddyPage.session.steps(), time: window.eddyPage.session.time(),
    status: document.querySelector('#status').textContent }));
  await live.close();
  const wall = (b.t - a.t) / 1000, fps = /(\d+) fps$/.exec(b.status)?.[1];
  console.log(`| ${scene}${method ? ` (${method})` : ''} | ${count} | ${ms.toFixed(2)} | ${nativeMs.toFixed(2)} | ${(ms / nativeMs).toFixed(2)}x | ${fps} | ` +
    `${((b.steps - a.steps) / wall).toFixed(0)} | ${((b.time - a.time) / wall).toFixed(3)} |`);
}
await browser.close();
server.close();
