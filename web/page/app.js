// eddy in the browser: the page (docs/web.md, "The page"). Loads the WebAssembly module (eddy.js,
// a classic script defining createEddy), drives one Module.Session on the page's thread: each
// animation frame steps it for a time budget, refreshes the particle buffers and draws them
// (render.js). The page's state is text in <output id="status"> and document.body.dataset.state, and
// window.eddyPage exposes the session for scripts and tests (tests/web/).
import { Renderer, Camera2D, OrbitCamera, intersectPlane, sub, norm, scale, mat4, DIFFUSE_RADII } from './render.js';
import { $, fillScenes, setSceneOption, buildSettings, showLegend, download, toBase64Url, fromBase64Url, methodName } from './ui.js';

const DEFAULT_SCENE = 'clavet_dam_break_2d';
const params = new URLSearchParams(location.search);
// The link's numbers: absent gives the default; outside [lo, hi] (or not a number, or not whole where it must
// be) gives the default too and one error line, shown once the page has loaded (issue 45: ?steps=1e12 ran one
// step, parseInt reading "1").
const linkErrors = [];
function linkNumber(key, lo, hi, fallback, whole, what) {
    const text = params.get(key);
    if (text === null || text === '') return fallback;
    const v = Number(text);
    if (Number.isFinite(v) && v >= lo && v <= hi && (!whole || Number.isInteger(v))) return v;
    linkErrors.push(`eddy: error: the link's ${key}=${text.slice(0, 40)}: allowed: ${what} from ${lo} to ${hi}`);
    return fallback;
}
// wall time for the simulation each frame (?budget=MS): the page stays responsive
const BUDGET_MS = linkNumber('budget', 1, 100, 12, false, 'milliseconds per frame');
const LINK_STEPS = linkNumber('steps', 0, 1e9, null, true, 'a whole number of steps');
// Threads (docs/web.md, "Threads"): a cross-origin isolated page (make serve-web sends the headers) loads
// eddy-mt.js, whose steps run on THREADS threads (?threads=N asks for N; the default is the machine's, at most
// MAX_THREADS); elsewhere it loads eddy.js, on one thread. Same bits either way.
const MAX_THREADS = 8;
const LINK_THREADS = linkNumber('threads', 1, MAX_THREADS, null, true, 'a whole number of threads');
const ISOLATED = self.crossOriginIsolated === true;
const THREADS = ISOLATED ? (LINK_THREADS || Math.max(1, Math.min(MAX_THREADS, navigator.hardwareConcurrency || 1))) : 1;
const SURFACE_EVERY_MS = 500;  // the reconstructed surface, at most this often while playing
const PARTICLE_METHODS = ['wcsph', 'dfsph', 'pbf', 'clavet'];

let Module = null, session = null, renderer = null;
let tables = {}, scenes = [];
let readyResolve;
const ready = new Promise((r) => { readyResolve = r; });

// What runs and how it is shown.
const st = {
    source: null,         // {kind: 'bundled', name, method} or {kind: 'text', text, where, method}
    loaded: false,        // a simulation is there (kind() != "")
    kind: '', dim: 2, bounds: [0, 0, 0, 1, 1, 0], radius: 0.01, gravity: [0, -9.81, 0],
    playing: params.get('paused') !== '1',
    stepsTarget: null,    // ?steps=N: run to exactly this many steps, then pause
    field: 'speed', colormap: 'classic', size: 1,
    speedMax: 1, range: [0, 1], smin: 0, smax: 1,
    dirty: true,          // the buffers need a refresh
    terrainDirty: true,
    surfaceAt: -1e9, surfaceStale: true,
    frames: 0, fps: 0, fpsFrames: 0, fpsSince: performance.now(),
    firstFrame: false,
    error: '',
};
const cam2 = new Camera2D(), cam3 = new OrbitCamera();
const is3d = () => st.kind === 'grid' || st.dim === 3;
const cam = () => (is3d() ? cam3 : cam2);

// ---- state, status, errors ------------------------------------------------------------------------------
function setState() {
    document.body.dataset.state = !Module ? 'loading' : st.error && !st.playing ? 'error' : !st.loaded ? 'error' : st.playing ? 'running' : 'paused';
    $('play').textContent = st.playing ? 'Pause' : 'Play';
}
function showError(text) {
    st.error = text || '';
    $('error').value = st.error;
    $('error').textContent = st.error;
    setState();
}
function note(text) { $('note').value = text || ''; $('note').textContent = text || ''; }
function statusText() {
    const t = session && st.loaded ? session.time() : 0, n = session && st.loaded ? session.steps() : 0, c = session && st.loaded ? session.count() : 0;
    return `t = ${t.toFixed(3)} s, ${n} steps, ${c} ${st.kind === 'grid' ? 'cells' : 'particles'}, ${st.fps} fps`;
}

// ---- loading ------------------------------------------------------------------------------------------
/// Loads a scene; "" or the one-line error (shown, and the page pauses; the old run is kept).
// A bundled scene, a pasted or dropped one's text, or one dropped with its files (read beside them).
function loadSource(src, method) {
    if (src.kind === 'bundled') return session.loadBundled(src.name, method, '[]');
    if (src.kind === 'dropped') return session.loadDropped(src.text, src.where, method, '[]');
    return session.loadText(src.text, src.where, method, '[]');
}

function load(src) {
    const method = src.method || '';
    const r = loadSource(src, method);
    if (r && r.startsWith('eddy: error')) {
        if (st.playing) st.resumeOnLoad = true;
        st.playing = false;
        st.stepsTarget = null;
        showError(r);
        return r;
    }
    if (st.resumeOnLoad) { st.playing = true; st.resumeOnLoad = false; }
    st.source = src;
    showError('');
    note(r || '');
    afterLoad();
    return '';
}

function afterLoad() {
    st.loadCount = (st.loadCount || 0) + 1;  // the probes' panel is read again
    st.loaded = session.kind() !== '';
    st.kind = session.kind();
    st.dim = session.dimension();
    st.bounds = Array.from(session.bounds());
    st.radius = session.particleRadius();
    let doc = {};
    try { doc = JSON.parse(session.sceneDocument()); } catch (e) { doc = {}; }
    const g = doc.gravity;
    st.gravity = Array.isArray(g) ? [g[0] || 0, g[1] || 0, g[2] || 0] : typeof g === 'number' ? [0, 0, -g] : [0, st.kind === 'grid' ? 0 : -9.81, st.kind === 'grid' ? -9.81 : 0];
    const b = st.bounds;
    const box = st.kind === 'particles' ? sceneBox(doc) : null;  // the tank rather than the padded bounds
    st.box = box;
    if (st.kind === 'grid') {  // the grid's x, y across; heights up (y in the picture)
        renderer.clearBox();
        cam3.yaw = 0.5; cam3.pitch = 0.75; cam3.fov = 40;
        const nx = session.gridNx(), ny = session.gridNy();
        if (Math.max(nx, ny) >= 8 * Math.min(nx, ny)) {  // a channel: from its side, the profile in view
            cam3.yaw = nx > ny ? 0 : Math.PI / 2;
            cam3.pitch = 0.2;
        }
        cam3.frame([b[0], b[2], b[1]], [b[3], b[5], b[4]], aspect());
    } else if (st.dim === 3) {
        renderer.setBox(box[0], box[1]);
        cam3.yaw = 0.6; cam3.pitch = 0.45; cam3.fov = 40;
        cam3.frame(box[0], box[1], aspect());
        const c = doc.camera;  // the scene's view direction, the whole box in view
        if (c && Array.isArray(c.eye) && Array.isArray(c.target)) {
            cam3.fromEye(c.eye, c.target, c.fov);
            cam3.frame(box[0], box[1], aspect());
        }
    } else {
        renderer.clearBox();
        cam2.frame(box[0], box[1]);
    }
    if (st.kind === 'particles' && st.dim === 2) renderer.setWalls(new Float32Array(session.walls()), new Int32Array(session.wallBodies()));
    else renderer.setWalls(new Float32Array(0));
    if (st.kind !== 'grid') renderer.clearGrid();
    renderer.clearSurface();
    renderer.setDiffuse(null);
    renderer.setSolids(null);
    $('ww-row').hidden = true;
    st.terrainDirty = true;
    st.surfaceStale = true;
    st.surfaceAt = -1e9;
    st.dirty = true;
    // speed's range: 0 to the free-fall speed over the fluid's height, sqrt(2 g H) (the viewer's auto
    // range: twice its speed scale)
    if (st.kind === 'particles') {
        session.refresh('speed');
        const p = session.positions();
        let lo = Infinity, hi = -Infinity;
        for (let i = 1; i < p.length; i += 3) { lo = Math.min(lo, p[i]); hi = Math.max(hi, p[i]); }
        const H = hi > lo ? hi - lo : 0.1 * (b[4] - b[1]), gm = Math.hypot(...st.gravity) || 9.81;
        st.speedMax = Math.max(Math.sqrt(2 * gm * H), 1e-3);
    }
    // the panel
    setSceneOption($('scene'), session.name());
    $('method').disabled = st.kind === 'grid';
    $('method').value = PARTICLE_METHODS.includes(st.source.method) ? st.source.method : '';
    $('field').disabled = st.kind === 'grid';
    for (const id of ['surface', 'anisotropic', 'decimate']) $(id).disabled = !(st.kind === 'particles' && st.dim === 3);
    $('whitewater').disabled = st.kind !== 'particles';
    $('title').textContent = `${session.name()} — ${methodName(session.method())}${st.kind === 'grid' ? ', grid' : ', ' + st.dim + 'D'}`;
    rebuildSettings();
    setState();
}

/// What the picture frames: the scene's box-shaped boundaries and the fluid as loaded (the bounds
/// the solver keeps are padded); the bounds when there is neither.
function sceneBox(doc) {
    const D = st.dim, lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
    const grow = (p) => { for (let a = 0; a < D; ++a) { lo[a] = Math.min(lo[a], p[a]); hi[a] = Math.max(hi[a], p[a]); } };
    for (const w of Array.isArray(doc.boundaries) ? doc.boundaries : [])
        if (w && w.shape === 'box' && Array.isArray(w.min) && Array.isArray(w.max)) { grow(w.min); grow(w.max); }
    session.refresh('speed');
    const p = session.positions();
    for (let i = 0; i + 2 < p.length; i += 3) grow([p[i], p[i + 1], p[i + 2]]);
    const b = st.bounds;
    for (let a = 0; a < 3; ++a)
        if (a >= D || !(hi[a] > lo[a])) { lo[a] = b[a]; hi[a] = b[3 + a]; }
        else { lo[a] = Math.max(lo[a], b[a]); hi[a] = Math.min(hi[a], b[3 + a]); }
    return [lo, hi];
}

// ---- settings ------------------------------------------------------------------------------------------
function rebuildSettings() {
    const m = session.method();
    $('settings-method').textContent = m ? '— ' + methodName(m) : '';
    let values = {};
    try { values = JSON.parse(session.settings()); } catch (e) { values = {}; }
    buildSettings($('settings'), tables[m] || [], values, applySetting);
}
/// A change in the table: the whole current settings object with that key changed, and the scene's gravity.
function applySetting(key, value, row) {
    let cur = {};
    try { cur = JSON.parse(session.settings()); } catch (e) { cur = {}; }
    cur[key] = value;
    const g = st.gravity;
    const r = session.applySettings(JSON.stringify(cur), g[0], g[1], g[2]);
    if (r) {
        showError(r);
        rebuildSettings();  // back to the values running
        return;
    }
    showError('');
    row.classList.add('changed');
    st.dirty = true;
}

// ---- the frame ------------------------------------------------------------------------------------------
function aspect() { const c = $('view'); return c.clientWidth / Math.max(c.clientHeight, 1); }

function refresh() {
    if (!st.loaded) return;
    session.refresh(st.field);
    if (st.kind === 'grid') {
        renderer.setGrid(session.gridNx(), session.gridNy(), session.gridDx(), session.terrain(), session.depth(), st.terrainDirty);
        st.terrainDirty = false;
        return;
    }
    renderer.setParticles(session.positions(), session.scalars());
    if (st.dim === 3) renderer.setSolids(session.solidVertices(), session.solidNormals(), session.solidColors(), session.solidTriangles(), session.solidOpaqueIndices());
    showWhitewater();
    if (st.dim === 2 && session.wallsMove()) renderer.setWalls(session.walls(), session.wallBodies());  // moving walls, bodies
    const lo = session.scalarMin(), hi = session.scalarMax();
    st.smin = lo; st.smax = hi;
    if (st.field === 'speed') st.range = [0, st.speedMax];
    else if (!(isFinite(lo) && isFinite(hi)) || hi < lo) st.range = [0, 1];
    else if (hi - lo <= 1e-6 * Math.max(Math.abs(lo), Math.abs(hi))) {  // a constant field: +-0.5% about it
        const d = lo !== 0 ? 0.005 * Math.abs(lo) : 1;
        st.range = [lo - d, hi + d];
    } else st.range = [lo, hi];
}

// The whitewater's points by type (session.refresh() read them) and their counts under the checkbox.
function showWhitewater() {
    const on = session.whitewater(), n = on ? [0, 1, 2].map(t => session.whitewaterCount(t)) : null;
    renderer.setDiffuse(on ? session.whitewaterPoints() : null, n);
    $('ww-row').hidden = !on;
    if (on) $('ww-counts').value = `spray ${n[0]}, foam ${n[1]}, bubbles ${n[2]}`;
}

// The surface worker (surface_worker.js): a second module instance that rebuilds the 3D surface off this
// thread; ?surface=sync, or a browser without workers, rebuilds it here (Session::reconstruct, the same mesh).
const surfaceWorker = { worker: null, busy: false, id: 0, results: 0, last: null, sync: 0 };
function startSurfaceWorker() {
    if (params.get('surface') === 'sync' || typeof Worker === 'undefined') return;
    try {
        const w = new Worker('surface_worker.js');
        w.onmessage = (e) => surfaceArrived(e.data);
        w.onerror = (e) => { console.warn('surface worker: ' + (e.message || e)); surfaceWorker.worker = null; surfaceWorker.busy = false; };
        surfaceWorker.worker = w;
    } catch (e) { surfaceWorker.worker = null; }
}
function surfaceArrived(m) {
    surfaceWorker.busy = false;
    if (m.load !== st.loadCount || !$('surface').checked) return;  // another scene since, or switched off
    if (m.error) { note(m.error); renderer.clearSurface(); return; }
    ++surfaceWorker.results;
    surfaceWorker.last = m;
    renderer.setSurface(m.vertices, m.normals, m.triangles);
}

function updateSurface(now) {
    const want = $('surface').checked && st.kind === 'particles' && st.dim === 3;
    if (!want) { renderer.clearSurface(); return; }
    if (!(st.surfaceStale && (!st.playing || now - st.surfaceAt >= SURFACE_EVERY_MS))) return;
    const sw = surfaceWorker;
    if (sw.worker) {
        if (sw.busy) return;  // the next one when this one is back
        const positions = new Float32Array(session.positions());
        sw.busy = true;
        sw.worker.postMessage({ id: ++sw.id, load: st.loadCount, positions, radius: st.radius, anisotropic: $('anisotropic').checked,
            decimate: +$('decimate').value }, [positions.buffer]);
        st.surfaceAt = performance.now();
        st.surfaceStale = false;
        return;
    }
    ++sw.sync;
    const r = session.reconstruct($('anisotropic').checked, +$('decimate').value);
    if (r) { note(r); renderer.clearSurface(); }
    else renderer.setSurface(session.meshVertices(), session.meshNormals(), session.meshTriangles());
    st.surfaceAt = performance.now();
    st.surfaceStale = false;
}

function unitOf(field) {
    if (field === 'density') return st.dim === 2 ? 'kg/m^2' : 'kg/m^3';
    if (field === 'pressure') return st.dim === 2 ? 'N/m' : 'Pa';
    return 'm/s';
}

// ---- probes ---------------------------------------------------------------------------------------------
/// The scene's probes (session.probes(): read_probes, as eddy run's probes.csv) in the panel: name, pressure,
/// speed; read again when the simulation has stepped, at most four times a second.
function showProbes(now) {
    const n = session && st.loaded ? session.steps() : -1;
    if (n === st.probesSteps && st.probesLoad === st.loadCount) return;
    if (now - (st.probesAt || 0) < 250 && st.probesLoad === st.loadCount) return;
    st.probesSteps = n; st.probesAt = now; st.probesLoad = st.loadCount;
    let probes = [];
    try { probes = n >= 0 ? JSON.parse(session.probes()) : []; } catch (e) { probes = []; }
    $('probes-section').hidden = probes.length === 0;
    const table = $('probes');
    table.textContent = '';
    for (const p of probes) {
        const row = table.insertRow(), speed = Math.hypot(...p.velocity);
        const cells = [p.name, `${p.pressure.toPrecision(4)} ${unitOf('pressure')}`, `${speed.toPrecision(3)} m/s`];
        cells.forEach((text, i) => { const c = row.insertCell(); c.textContent = text; if (i) c.className = 'num'; });
        row.title = `at (${p.position.slice(0, st.dim).map(x => x.toPrecision(4)).join(', ')}) m; velocity (${p.velocity.slice(0, st.dim).map(v => v.toPrecision(4)).join(', ')}) m/s`;
    }
}

// ---- loads ----------------------------------------------------------------------------------------------
/// The fluid's loads on the walls (session.loads(): the viewer's RecentLoads mean over the last 0.1 s) in the
/// panel's Loads section, read again when the simulation has stepped (at most four times a second), and the
/// selected object's arrow (session.loadArrow: eddy::load_arrow, a fluid weight a quarter of the scene long).
function showLoads(now) {
    const n = session && st.loaded ? session.steps() : -1;
    const fresh = n !== st.loadsSteps || st.loadsLoad !== st.loadCount;
    if (fresh && (now - (st.loadsAt || 0) >= 250 || st.loadsLoad !== st.loadCount)) {
        st.loadsSteps = n; st.loadsAt = now; st.loadsLoad = st.loadCount;
        let loads = { objects: [] };
        try { loads = st.kind === 'particles' ? JSON.parse(session.loads()) : loads; } catch (e) { loads = { objects: [] }; }
        st.loads = loads;
        $('loads-section').hidden = loads.objects.length === 0;
        const sel = $('load-object');
        if (sel.options.length !== loads.objects.length) {
            const keep = sel.selectedIndex;
            sel.textContent = '';
            for (const o of loads.objects) sel.add(new Option(o.label));
            sel.selectedIndex = Math.min(Math.max(keep, 0), loads.objects.length - 1);
        }
        $('loads-text').value = loadText(loads, sel.selectedIndex);
    }
    // The arrow again only when the loads were read again, or the object, the tick or the 2D zoom changed.
    const k = $('load-object').selectedIndex, on = $('load-arrow').checked && st.kind === 'particles' && k >= 0;
    const width = 3 * cam2.pixel(renderer.canvas.width, renderer.canvas.height);
    const key = on ? `${st.loadsAt},${st.loadsLoad},${k},${width},${extent()}` : '';
    if (key === st.arrowKey) return;
    st.arrowKey = key;
    renderer.setArrow(on ? session.loadArrow(k, 0.25 * extent(), width) : null, st.dim === 2);
}
function loadText(loads, k) {
    const o = loads.objects[k];
    if (!o) return '';
    const d2 = st.dim === 2, D = d2 ? 2 : 3, fmt = (v) => v.toPrecision(4);
    const f = Math.hypot(...o.force), w = loads.fluid_weight;
    return `force (${d2 ? 'N/m' : 'N'}): ${o.force.slice(0, D).map(fmt).join(', ')}\n` +
        `torque (${d2 ? 'N m/m' : 'N m'}): ${(d2 ? [o.torque[2]] : o.torque).map(fmt).join(', ')}\n` +
        `|F| ${fmt(f)} ${d2 ? 'N/m' : 'N'} = ${(w > 0 ? f / w : 0).toFixed(3)} x the fluid's weight`;
}

function frame(now) {
    requestAnimationFrame(frame);
    if (st.loaded && st.playing) {
        let r = '';
        if (st.stepsTarget !== null) {
            const left = st.stepsTarget - session.steps();
            if (left > 0) r = session.step(left, BUDGET_MS);
            if (session.steps() >= st.stepsTarget) { st.stepsTarget = null; st.playing = false; setState(); }
        } else {
            r = session.step(1 << 30, BUDGET_MS);
        }
        if (r) { st.playing = false; st.stepsTarget = null; showError(r); }
        st.dirty = true;
        st.surfaceStale = true;
    }
    mouseIdle(now);
    if (st.dirty) { refresh(); st.dirty = false; }
    if (st.loaded) updateSurface(now);
    renderer.resize();
    const c = renderer.canvas, pxWorld = st.dim === 2 && st.kind !== 'grid' ? cam2.pixel(c.width, c.height) : 0;
    const drawn = st.radius * st.size;
    renderer.draw({
        cam: cam(), is3d: is3d(),
        radius: st.dim === 2 ? Math.max(drawn, 1.5 * pxWorld) : drawn,
        wallRadius: Math.max(st.radius, 1.5 * pxWorld),
        diffuseRadius: Math.max(DIFFUSE_RADII * drawn, 1.5 * pxWorld),
        rim: st.dim === 2 && drawn > 4 * pxWorld ? 0.3 : 0,
        range: st.range, colormap: st.colormap,
        showParticles: $('particles').checked,
    });
    showLegend(st.loaded && st.kind === 'particles', st.field, unitOf(st.field), st.colormap, st.range[0], st.range[1]);
    // frames drawn over the last second
    ++st.frames; ++st.fpsFrames;
    if (now - st.fpsSince >= 1000) { st.fps = Math.round(st.fpsFrames * 1000 / (now - st.fpsSince)); st.fpsFrames = 0; st.fpsSince = now; }
    const s = statusText();
    if ($('status').value !== s) { $('status').value = s; }
    showProbes(now);
    showLoads(now);
    if (!st.firstFrame) { st.firstFrame = true; st.firstFrameMs = performance.now(); readyResolve(window.eddyPage); }
}

// ---- controls -------------------------------------------------------------------------------------------
function play(on) {
    st.playing = on;
    if (on && st.error) showError('');
    if (!on) st.stepsTarget = null;
    setState();
}
function stepOnce() {
    play(false);
    if (!st.loaded) return;
    const r = session.step(1, 0);
    if (r) showError(r);
    st.dirty = true; st.surfaceStale = true;
}
function reset() { if (st.source) load(st.source); }
function rememberInUrl() {
    if (!st.source || st.source.kind !== 'bundled') return;
    const q = new URLSearchParams({ scene: st.source.name });
    if (st.source.method) q.set('method', st.source.method);
    history.replaceState(null, '', location.pathname + '?' + q.toString());
}

function shareLink() {
    const url = location.origin + location.pathname + '#scene=' + toBase64Url(session.sceneDocument());
    const a = $('share-link');
    a.href = url;
    a.textContent = url;
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(url).catch(() => {});
    return url;
}
function loadFromHash() {
    const m = /^#scene=([A-Za-z0-9_-]+)/.exec(location.hash);
    if (!m) return false;
    let text;
    try { text = fromBase64Url(m[1]); } catch (e) { showError('eddy: error: the shared link: not a scene (bad base64url)'); return true; }
    load({ kind: 'text', text, where: 'the shared link', method: '' });
    return true;
}
function fileName(ext) {
    const n = (session && session.name()) || 'eddy';
    return `${n}_${String(session ? session.steps() : 0).padStart(6, '0')}.${ext}`;
}

function wireControls() {
    $('play').addEventListener('click', () => play(!st.playing));
    $('step').addEventListener('click', stepOnce);
    $('reset').addEventListener('click', reset);
    $('scene').addEventListener('change', () => {
        $('method').value = '';
        if (!load({ kind: 'bundled', name: $('scene').value, method: '' })) rememberInUrl();
    });
    $('method').addEventListener('change', () => {
        if (!st.source) return;
        if (!load({ ...st.source, method: $('method').value })) rememberInUrl();
    });
    $('field').addEventListener('change', () => { st.field = $('field').value; st.dirty = true; });
    $('colormap').addEventListener('change', () => { st.colormap = $('colormap').value; });
    $('size').addEventListener('input', () => { st.size = parseFloat($('size').value); $('size-value').textContent = st.size.toFixed(2); });
    $('surface').addEventListener('change', () => { st.surfaceStale = true; st.surfaceAt = -1e9; });
    $('anisotropic').addEventListener('change', () => { st.surfaceStale = true; st.surfaceAt = -1e9; });
    $('decimate').addEventListener('change', () => { st.surfaceStale = true; st.surfaceAt = -1e9; });
    $('load-object').addEventListener('change', () => { if (st.loads) $('loads-text').value = loadText(st.loads, $('load-object').selectedIndex); });
    $('whitewater').addEventListener('change', () => {
        const r = session.setWhitewater($('whitewater').checked);
        if (r) { $('whitewater').checked = false; showError(r); }
        st.dirty = true;
    });
    $('load-text').addEventListener('click', () => {
        const text = $('scene-text').value;
        load({ kind: 'text', text, where: 'the pasted scene', method: '' });
    });
    $('current-text').addEventListener('click', () => {
        try { $('scene-text').value = JSON.stringify(JSON.parse(session.sceneDocument()), null, 1); } catch (e) { /* nothing loaded */ }
    });
    $('share').addEventListener('click', shareLink);
    $('download-csv').addEventListener('click', () => {
        const s = session.particlesFile('csv');
        if (!s) { note('no particles to save (a grid scene)'); return; }
        download(fileName('csv'), s, 'text/csv');
    });
    $('download-ply').addEventListener('click', () => {
        // binary PLY: bytes, not a string (embind decodes std::string as UTF-8)
        const bytes = typeof session.particlesBytes === 'function' ? session.particlesBytes('ply') : null;
        const data = bytes && bytes.length ? bytes : session.particlesFile('ply');
        if (!data || !data.length) { note('no particles to save (a grid scene)'); return; }
        download(fileName('ply'), data, 'application/octet-stream');
    });
    $('screenshot').addEventListener('click', () => {
        renderer.canvas.toBlob((b) => { if (b) download(fileName('png'), b, 'image/png'); }, 'image/png');
    });
    window.addEventListener('hashchange', loadFromHash);
    document.addEventListener('keydown', (e) => {
        if (e.target.closest('input, textarea, select') || e.ctrlKey || e.metaKey || e.altKey) return;
        if (e.key === ' ') { e.preventDefault(); play(!st.playing); }
        else if (e.key === 's' || e.key === 'S') stepOnce();
        else if (e.key === 'r' || e.key === 'R') reset();
    });
    // a .json file dropped anywhere on the page, alone or with the files it names (models, particle files)
    let depth = 0;
    document.addEventListener('dragenter', (e) => { e.preventDefault(); if (++depth === 1) document.body.classList.add('dragging'); });
    document.addEventListener('dragleave', () => { if (--depth <= 0) { depth = 0; document.body.classList.remove('dragging'); } });
    document.addEventListener('dragover', (e) => e.preventDefault());
    document.addEventListener('drop', async (e) => {
        e.preventDefault();
        depth = 0;
        document.body.classList.remove('dragging');
        const files = e.dataTransfer && e.dataTransfer.files ? [...e.dataTransfer.files] : [];
        if (files.length) await loadDroppedFiles(files);
    });
}

// Files dropped on the page: a scene alone (its text), or a scene with the files it names (models, particle
// files), written into the page's folder for them and the scene loaded from there as eddy run loads it.
async function loadDroppedFiles(files) {
    if (files.length === 1) {
        const text = await files[0].text();
        $('scene-text').value = text;
        load({ kind: 'text', text, where: files[0].name, method: '' });
        return;
    }
    const scenes = files.filter(f => /\.json$/i.test(f.name));
    if (scenes.length !== 1) {
        showError(`eddy: error: dropped ${files.map(f => f.name).join(', ')}: allowed: one scene (.json) with the files it names`);
        return;
    }
    session.clearDropped();
    for (const f of files) {
        if (f === scenes[0]) continue;
        const r = session.dropFile(f.name, new Uint8Array(await f.arrayBuffer()));
        if (r) { showError(r); return; }
    }
    const text = await scenes[0].text();
    $('scene-text').value = text;
    load({ kind: 'dropped', text, where: scenes[0].name, method: '' });
}

// ---- the mouse ------------------------------------------------------------------------------------------
const drag = { mode: null, x: 0, y: 0, x0: 0, y0: 0, moved: 0, last: null, lastT: 0, v: [0, 0, 0], plane: null, normal: null };
function boxArray() { return st.box ? [...st.box[0], ...st.box[1]] : st.bounds; }
function extent() {
    const b = boxArray();
    return Math.max(b[3] - b[0], b[4] - b[1], st.dim === 3 ? b[5] - b[2] : 0, 1e-6);
}
/// The world point under the pointer: 2D the point itself; 3D the ray's hit on the plane through the
/// scene's centre facing the camera (fixed at the press).
function worldAt(x, y) {
    const c = $('view'), w = c.clientWidth, h = c.clientHeight;
    if (!is3d()) return cam2.world(x, y, w, h);
    const [o, d] = cam3.ray(x, y, w, h);
    return intersectPlane(o, d, drag.plane, drag.normal);
}
function pushAt(x, y, now) {
    const p = worldAt(x, y);
    if (!p) return;
    // the pointer's velocity over at least 8 ms (events can come a millisecond apart)
    if (drag.last && now - drag.lastT < 8) { session.setMouse(true, p[0], p[1], p[2], drag.v[0], drag.v[1], drag.v[2], 0.08 * extent()); return; }
    const v = drag.last ? scale(sub(p, drag.last), 1000 / (now - drag.lastT)) : [0, 0, 0];
    drag.last = p; drag.lastT = now; drag.v = v;
    session.setMouse(true, p[0], p[1], p[2], v[0], v[1], v[2], 0.08 * extent());
}
function mouseIdle(now) {  // a pointer held still stops pushing
    if (drag.mode === 'push' && drag.last && now - drag.lastT > 60) {
        const p = drag.last;
        session.setMouse(true, p[0], p[1], p[2], 0, 0, 0, 0.08 * extent());
    }
}
function centre() { const b = boxArray(); return [0.5 * (b[0] + b[3]), 0.5 * (b[1] + b[4]), 0.5 * (b[2] + b[5])]; }

// A click's tool where it points: a block of fluid, a dropped body or a tap (the viewer's, eddy/interaction.hpp).
function placeAt(x, y, tool) {
    const p = worldAt(x, y);
    if (!p) return;
    const r = tool === 'fluid' ? session.addBlock(p[0], p[1], p[2]) : session.useTool(tool, p[0], p[1], p[2], +$('tap-speed').value);
    if (r.startsWith('eddy: error')) showError(r); else { showError(''); note(r); }
    st.dirty = true; st.surfaceStale = true;
}

function wireMouse() {
    const c = $('view');
    c.addEventListener('contextmenu', (e) => e.preventDefault());
    c.addEventListener('pointerdown', (e) => {
        if (!st.loaded) return;
        try { c.setPointerCapture(e.pointerId); } catch (err) { /* a synthetic event's pointer */ }
        drag.x = drag.x0 = e.offsetX; drag.y = drag.y0 = e.offsetY; drag.moved = 0; drag.last = null;
        const add = e.button === 0 && (e.shiftKey || $('add-mode').checked), tool = e.button === 0 ? $('click-tool').value : '';
        if (st.kind === 'grid') {
            drag.mode = e.button === 0 ? 'click-or-orbit' : 'orbit';
            return;
        }
        if (is3d()) {
            drag.plane = centre();
            drag.normal = norm(sub(cam3.eye(), cam3.target));
        }
        if (add || tool) {
            placeAt(e.offsetX, e.offsetY, add ? 'fluid' : tool);
            drag.mode = null;
        } else if (is3d()) {
            drag.mode = e.button === 2 || (e.button === 0 && e.ctrlKey) ? 'push' : 'orbit';
        } else {
            drag.mode = e.button === 0 ? 'push' : 'pan';
        }
        if (drag.mode === 'push') pushAt(e.offsetX, e.offsetY, performance.now());
    });
    c.addEventListener('pointermove', (e) => {
        if (!drag.mode) return;
        const dx = e.offsetX - drag.x, dy = e.offsetY - drag.y;
        drag.x = e.offsetX; drag.y = e.offsetY;
        drag.moved = Math.max(drag.moved, Math.hypot(e.offsetX - drag.x0, e.offsetY - drag.y0));
        if (drag.mode === 'push') pushAt(e.offsetX, e.offsetY, performance.now());
        else if (drag.mode === 'orbit' || (drag.mode === 'click-or-orbit' && drag.moved > 4)) cam3.orbit(dx, dy);
        else if (drag.mode === 'pan') cam2.pan(dx, dy, c.clientWidth, c.clientHeight);
    });
    const up = (e) => {
        if (drag.mode === 'push') session.setMouse(false, 0, 0, 0, 0, 0, 0, 0);
        if (drag.mode === 'click-or-orbit' && drag.moved <= 4) {  // a grid: water dropped where the ray meets the mean surface
            const b = st.bounds;
            const [o, d] = cam3.ray(e.offsetX, e.offsetY, c.clientWidth, c.clientHeight);
            const p = intersectPlane(o, d, [0, 0.5 * (b[2] + b[5]), 0], [0, 1, 0]);
            if (p && p[0] >= b[0] && p[0] <= b[3] && p[2] >= b[1] && p[2] <= b[4]) {
                const r = session.drop(p[0], p[2]);
                if (r) note(r);
                st.dirty = true;
            }
        }
        drag.mode = null;
    };
    c.addEventListener('pointerup', up);
    c.addEventListener('pointercancel', up);
    c.addEventListener('wheel', (e) => {
        e.preventDefault();
        const f = Math.exp(Math.sign(e.deltaY) * Math.min(Math.abs(e.deltaY), 200) * 0.0015);
        if (is3d()) cam3.distance *= f;
        else cam2.zoom(f, e.offsetX, e.offsetY, c.clientWidth, c.clientHeight);
    }, { passive: false });
}

// ---- start ----------------------------------------------------------------------------------------------
window.eddyPage = {
    get session() { return session; }, get Module() { return Module; }, ready,
    hash: () => session.stateHash(),
    probes: () => JSON.parse(session.probes()),
    status: () => $('status').value,
    state: () => document.body.dataset.state,
    load: (name, method) => load({ kind: 'bundled', name, method: method || '' }),
    loadText: (text, where) => load({ kind: 'text', text, where: where || 'the pasted scene', method: '' }),
    play, step: stepOnce, reset, shareLink,
    /// The canvas pixel (CSS px from its top left) where the world point p is drawn (tests aim the mouse with it).
    pixelOf(p) {
        const c = $('view'), w = c.clientWidth, h = c.clientHeight, a = w / Math.max(h, 1);
        const m = mat4.mul(cam().proj(a), cam().view()), q = [0, 0, 0, 0], v = [p[0], p[1], p[2] || 0, 1];
        for (let i = 0; i < 4; ++i) for (let j = 0; j < 4; ++j) q[i] += m[j * 4 + i] * v[j];
        return { x: (q[0] / q[3] + 1) * 0.5 * w, y: (1 - q[1] / q[3]) * 0.5 * h };
    },
    get renderer() { return renderer; },
    get firstFrameMs() { return st.firstFrameMs; },  // ms from navigation to the first frame drawn
    get frames() { return st.frames; },
    get view() { return st; },
    get surfaceWorker() { return surfaceWorker; },  // {worker, results, last: the last mesh, sync: rebuilt here}
};

// Loads the module's script (it defines createEddy).
function loadScript(src) {
    return new Promise((resolve, reject) => {
        const s = document.createElement('script');
        s.src = src;
        s.onload = resolve;
        s.onerror = () => reject(new Error(`${src} did not load`));
        document.head.appendChild(s);
    });
}

function showThreads(why) {
    $('threads').value = `${session.threads()} thread${session.threads() > 1 ? 's' : ''}${why}`;
}

async function main() {
    document.body.dataset.state = 'loading';
    let threads = THREADS;
    let why = !ISOLATED && LINK_THREADS > 1 ? ' (threads need a cross-origin isolated page: make serve-web)' : '';
    try {
        try {
            await loadScript(ISOLATED ? 'eddy-mt.js' : 'eddy.js');
        } catch (e) {  // a build without eddy-mt.js: one thread
            if (!ISOLATED) throw e;
            threads = 1;
            why = ' (eddy-mt.js did not load)';
            await loadScript('eddy.js');
        }
        // eddy-mt.js makes its pool's workers while it loads: one fewer than the threads (the page's is the last).
        Module = await createEddy({ print: (t) => console.log(t), printErr: (t) => console.warn(t), eddyWorkers: threads - 1 });
    } catch (e) {
        document.body.dataset.state = 'error';
        showError('eddy: error: the WebAssembly module did not load: ' + (e && e.message ? e.message : e));
        readyResolve(window.eddyPage);
        return;
    }
    session = new Module.Session(threads);
    showThreads(why);
    try { tables = JSON.parse(Module.Session.settingsTables()); } catch (e) { tables = {}; }
    try {
        const s = JSON.parse(Module.Session.bundledScenes());
        if (Array.isArray(s)) scenes = s;
        else console.warn('bundledScenes: ' + (s && s.error));
    } catch (e) { scenes = []; }
    try {
        renderer = new Renderer($('view'));
    } catch (e) {
        showError('eddy: error: ' + e.message);
        readyResolve(window.eddyPage);
        return;
    }
    const name = params.get('scene') || DEFAULT_SCENE;
    fillScenes($('scene'), scenes, name);
    try {  // the bundled models a click can drop as a body (3D)
        for (const m of JSON.parse(Module.Session.bundledModels())) $('click-models').appendChild(new Option(m.replace(/^models\//, ''), 'model:' + m));
    } catch (e) { /* none */ }
    wireControls();
    wireMouse();
    startSurfaceWorker();
    if (!loadFromHash()) load({ kind: 'bundled', name, method: params.get('method') || '' });
    const n = LINK_STEPS;
    if (n !== null && st.loaded) {
        st.stepsTarget = session.steps() + n;
        st.playing = n > 0;
    }
    if (linkErrors.length) showError([st.error, ...linkErrors].filter(Boolean).join('; '));
    setState();
    requestAnimationFrame(frame);
}
main();
