// The browser side shared by the page's tests (page_test.mjs) and its benchmark (bench/web/page_bench.mjs):
// a static server for the web build and Debian's Chromium driven by puppeteer-core (found through NODE_PATH).
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const puppeteer = require('puppeteer-core');

const types = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm',
  '.data': 'application/octet-stream', '.json': 'application/json', '.png': 'image/png', '.css': 'text/css' };

/// The headers that make a page cross-origin isolated, which a module with threads needs (SharedArrayBuffer):
/// scripts/serve-web.py sends the same (docs/web.md, "Threads").
export const ISOLATION_HEADERS = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };

/// Serves `dir` on 127.0.0.1 (a free port), cross-origin isolated when `isolated` (the page then loads eddy-mt.js);
/// returns { server, base: the page's address }.
export async function startServer(dir, { isolated = false } = {}) {
  const root = path.resolve(dir);
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://localhost');
    const file = path.join(root, decodeURIComponent(url.pathname === '/' ? '/index.html' : url.pathname));
    if (!file.startsWith(root) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': types[path.extname(file)] || 'application/octet-stream', ...(isolated ? ISOLATION_HEADERS : {}) });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise(r => server.listen(0, '127.0.0.1', r));
  return { server, base: `http://127.0.0.1:${server.address().port}/index.html` };
}

/// Debian's Chromium, headless: no sandbox (root), no network chatter (the machine's network is closed),
/// SwiftShader's WebGL2 (no GPU), a fresh profile.
export function launchChromium(executablePath) {
  return puppeteer.launch({
    executablePath,
    headless: true,
    userDataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'eddy-chromium-')),
    args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic', '--window-size=1280,800'],
    defaultViewport: { width: 1280, height: 800 },
    protocolTimeout: 240000,
  });
}

/// Opens the page at `url` and waits for its first frame (window.eddyPage.ready); page errors are printed.
export async function openEddyPage(browser, url) {
  const page = await browser.newPage();
  page.on('pageerror', e => console.log(`page error: ${e.message}`));
  page.on('console', m => { if (m.type() === 'error') console.log(`console: ${m.text()}`); });
  await page.goto(url);
  await page.waitForFunction(() => !!(window.eddyPage && window.eddyPage.ready), { timeout: 120000 });  // a timeout only
  await page.evaluate(() => window.eddyPage.ready.then(() => true));
  return page;
}
