// The page's speed in headless Chromium against the native build on one thread (issue 33; figures in
// docs/performance.md, "Issue 33"). For each scene:
//   compute   ms per step of session.step(N) inside the page (no drawing; the second of two runs of the
//             same N steps, the scene loaded again between them: the first lets the browser optimise the
//             code), and of `eddy run --steps N --threads 1` (summary.json's mean_ms_per_step, the steps
//             alone): their ratio; then, per
//             scene, each named pass's ms per step on the page (session.passes()) and natively
//             (summary.json's "passes"): which pass the page loses most on (issue 42)
//   live      the page playing for a few seconds: frames drawn and steps taken per second of wall time,
//             with the page's default 12 ms of steps a frame, and with one step a frame (&budget=1: seed
//             000's demo, one simulation step per animation frame)
//   surface   3D scenes playing with no surface, the surface rebuilt in the worker (issue 43) and on the page's
//             thread (?surface=sync): frames and steps per second and the longest frame (ms)
//   threads   eddy-mt.js on a cross-origin isolated page (issue 43) at 1 and 2 threads: ms per step (as compute)
//             against the native build's at 1 and 2 threads, and fps playing, 3D with the surface too
// and once: the first frame after load, and the .wasm's size gzipped.
//
//   NODE_PATH=build-web/npm/node_modules node bench/web/page_bench.mjs build-web build/bin/eddy /usr/bin/chromium [surface|threads]
// (a fourth argument "surface" or "threads": that table only)
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';

import { launchChromium, openEddyPage, startServer } from '../../tests/web/browser.mjs';

const [webDir, eddy, chromium, only] = process.argv.slice(2);
if (!webDir || !eddy || !chromium) {
  console.error('usage: page_bench.mjs WEB_BUILD EDDY CHROMIUM');
  process.exit(2);
}
const here = path.dirname(new URL(import.meta.url).pathname);
const cases = [
  // scene (a bundled name, or a file whose text the page loads), method ("" = the scene's), steps timed
  [path.join(here, '../scenes/clavet_seed_2d.json'), '', 300],
  ['clavet_dam_break_2d', '', 300],
  ['dam_break_2d', '', 300],
  ['dfsph_dam_break_2d', '', 150],
  ['pbf_dam_break_2d', '', 150],
  ['shallow_valley', '', 200],
  ['dam_break_3d', '', 20],
  // Bullet's bodies and assimp's models on the page (issue 43)
  ['dam_break_debris_3d', '', 40],
  ['ducks_3d', '', 60],
  ['mixer_3d', '', 100],
];
const liveSeconds = 5;
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

// Opens the scene on the page (paused; `extra` adds to the query): a bundled one by name, a file by its text.
async function open(scene, method, extra, at = base) {
  const file = scene.endsWith('.json');
  const q = `scene=${file ? 'clavet_dam_break_2d' : scene}${method ? `&method=${method}` : ''}&paused=1${extra}`;
  const page = await openEddyPage(browser, `${at}?${q}`);
  if (file) {
    const err = await page.evaluate((t, n) => window.eddyPage.loadText(t, n), fs.readFileSync(scene, 'utf8'), path.basename(scene));
    if (err) throw new Error(err);
  }
  return page;
}
// Frames drawn and steps taken per second of wall time while playing, and the longest frame (ms); `extra`
// adds to the page's query, `surface` ticks the surface.
async function live(scene, method, budget, extra = '', surface = false, at = base) {
  const page = await open(scene, method, `${budget ? `&budget=${budget}` : ''}${extra}`, at);
  if (surface) await page.click('#surface');
  await page.evaluate(() => window.eddyPage.play(true));
  await new Promise(res => setTimeout(res, 1000));
  const a = await page.evaluate(() => {
    const g = window.benchGaps = { last: 0, max: 0 };
    const tick = (t) => { if (g.last) g.max = Math.max(g.max, t - g.last); g.last = t; requestAnimationFrame(tick); };
    requestAnimationFrame(tick);
    return { t: performance.now(), steps: window.eddyPage.session.steps(), frames: window.eddyPage.frames };
  });
  await new Promise(res => setTimeout(res, liveSeconds * 1000));
  const b = await page.evaluate(() => ({ t: performance.now(), steps: window.eddyPage.session.steps(), frames: window.eddyPage.frames,
    gap: window.benchGaps.max }));
  await page.close();
  const wall = (b.t - a.t) / 1000;
  return { fps: (b.frames - a.frames) / wall, steps: (b.steps - a.steps) / wall, gap: b.gap };
}
// The 3D surface while playing: none, in the worker, on the page's thread.
async function surfaceTable() {
  console.log('\n| 3D scene | particles | no surface: fps, steps/s, longest frame | surface in the worker | surface on the page\'s thread (?surface=sync) |');
  console.log('|---|---|---|---|---|');
  for (const scene of ['clavet_dam_break_3d', 'pbf_drop_3d', 'dam_break_3d']) {
    const cells = [];
    for (const [extra, on] of [['', false], ['', true], ['&surface=sync', true]]) {
      const r = await live(scene, '', 0, extra, on);
      cells.push(`${r.fps.toFixed(0)}, ${r.steps.toFixed(0)}, ${Math.round(r.gap)} ms`);
    }
    const page = await open(scene, '', '');
    const count = await page.evaluate(() => window.eddyPage.session.count());
    await page.close();
    console.log(`| ${scene} | ${count} | ${cells.join(' | ')} |`);
  }
}
// ms per step of `eddy run SCENE --steps N --threads T` (summary.json's mean_ms_per_step).
function nativeMsPerStep(scene, method, n, threads) {
  const out = path.join(work, `${path.basename(scene, '.json')}_t${threads}`);
  const r = spawnSync(eddy, ['run', scene, '--steps', String(n), '--threads', String(threads), '--format', 'csv', '--out', out,
    ...(method ? ['--set', `method=${method}`] : [])], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`eddy run ${scene}: ${r.stderr}`);
  return JSON.parse(fs.readFileSync(path.join(out, 'summary.json'), 'utf8')).mean_ms_per_step;
}
// ms per step on the page (the second of two runs of N steps, as the compute table), and the particles.
async function pageMsPerStep(scene, method, n, extra, at) {
  const page = await open(scene, method, extra, at);
  const r = await page.evaluate((k, bundled, method) => {
    const s = window.eddyPage.session;
    s.step(k, 0);
    const err = s.loadBundled(bundled, method, '');
    if (err) throw new Error(err);
    const t0 = performance.now();
    s.step(k, 0);
    return { ms: (performance.now() - t0) / k, count: s.count(), threads: s.threads() };
  }, n, scene, method);
  await page.close();
  return r;
}
// eddy-mt.js at 1 and 2 threads (a cross-origin isolated server) against the native build at 1 and 2 threads.
async function threadsTable() {
  const isolated = await startServer(webDir, { isolated: true });
  console.log('\n| scene | particles/cells | page ms/step, 1 / 2 threads (speed-up) | native ms/step, 1 / 2 threads (speed-up) | ' +
    'live fps, 1 / 2 threads | with the surface (worker): fps, 1 / 2 threads |');
  console.log('|---|---|---|---|---|---|');
  for (const [scene, method, n] of [['clavet_dam_break_2d', '', 300], ['dam_break_2d', '', 300], ['dfsph_dam_break_2d', '', 150],
    ['shallow_valley', '', 200], ['dam_break_3d', '', 20], ['pbf_drop_3d', '', 20], ['dam_break_debris_3d', '', 40]]) {
    const p1 = await pageMsPerStep(scene, method, n, '&threads=1', isolated.base);
    const p2 = await pageMsPerStep(scene, method, n, '&threads=2', isolated.base);
    if (p1.threads !== 1 || p2.threads !== 2) throw new Error(`${scene}: the page ran on ${p1.threads} and ${p2.threads} threads`);
    const n1 = nativeMsPerStep(scene, method, n, 1), n2 = nativeMsPerStep(scene, method, n, 2);
    const f1 = await live(scene, method, 0, '&threads=1', false, isolated.base), f2 = await live(scene, method, 0, '&threads=2', false, isolated.base);
    let surf = '-';
    if (scene.endsWith('_3d')) {
      const s1 = await live(scene, method, 0, '&threads=1', true, isolated.base), s2 = await live(scene, method, 0, '&threads=2', true, isolated.base);
      surf = `${s1.fps.toFixed(0)} / ${s2.fps.toFixed(0)}`;
    }
    console.log(`| ${scene} | ${p1.count} | ${p1.ms.toFixed(2)} / ${p2.ms.toFixed(2)} (${(p1.ms / p2.ms).toFixed(2)}x) | ` +
      `${n1.toFixed(2)} / ${n2.toFixed(2)} (${(n1 / n2).toFixed(2)}x) | ${f1.fps.toFixed(0)} / ${f2.fps.toFixed(0)} | ${surf} |`);
  }
  isolated.server.close();
}
if (only === 'threads') {
  await threadsTable();
  await browser.close();
  server.close();
  process.exit(0);
}
if (only === 'surface') {
  await surfaceTable();
  await browser.close();
  server.close();
  process.exit(0);
}
console.log('\n| scene | particles/cells | page ms/step | native ms/step (1 thread) | page/native | live: fps, steps/s (12 ms of steps a frame) | live: fps (one step a frame) |');
console.log('|---|---|---|---|---|---|---|');
const passRows = [];
for (const [scene, method, n] of cases) {
  const name = path.basename(scene, '.json');
  const out = path.join(work, name);
  const r = spawnSync(eddy, ['run', scene, '--steps', String(n), '--threads', '1', '--format', 'csv', '--out', out,
    ...(method ? ['--set', `method=${method}`] : [])], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`eddy run ${scene}: ${r.stderr}`);
  const summary = JSON.parse(fs.readFileSync(path.join(out, 'summary.json'), 'utf8'));
  const nativeMs = summary.mean_ms_per_step;

  const page = await open(scene, method, '');
  // The same N steps twice: the first run lets the browser finish compiling the module's hot code (it starts
  // on a baseline compiler and optimises in the background), the scene is loaded again, the second is timed.
  const text = scene.endsWith('.json') ? fs.readFileSync(scene, 'utf8') : '';
  const { ms, count, passes } = await page.evaluate((k, bundled, text, method) => {
    const s = window.eddyPage.session;
    s.step(k, 0);
    const err = text ? s.loadText(text, 'scene.json', method, '') : s.loadBundled(bundled, method, '');
    if (err) throw new Error(err);
    const t0 = performance.now();
    s.step(k, 0);
    return { ms: (performance.now() - t0) / k, count: s.count(), passes: JSON.parse(s.passes()).passes };
  }, n, scene, text, method);
  const native = new Map((summary.passes || []).map(p => [p.name, p.ms_per_step]));
  passRows.push(`| ${name}${method ? ` (${method})` : ''} | ` + passes.map(p => {
    const nat = native.get(p.name);
    return `${p.name} ${p.ms_per_step.toFixed(3)} / ${nat === undefined ? '-' : nat.toFixed(3)}` +
      (nat > 0 ? ` (${(p.ms_per_step / nat).toFixed(1)}x)` : '');
  }).join(', ') + ' |');
  await page.close();
  const busy = await live(scene, method, 0), paced = await live(scene, method, 1);
  console.log(`| ${name}${method ? ` (${method})` : ''} | ${count} | ${ms.toFixed(2)} | ${nativeMs.toFixed(2)} | ${(ms / nativeMs).toFixed(2)}x | ` +
    `${busy.fps.toFixed(0)}, ${busy.steps.toFixed(0)} | ${paced.fps.toFixed(0)} |`);
}
await surfaceTable();
console.log('\n| scene | each pass: page / native ms per step (ratio); the browser clock is coarse, read over the steps |');
console.log('|---|---|');
for (const row of passRows) console.log(row);
await browser.close();
server.close();
