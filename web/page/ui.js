// eddy in the browser: the panel's generated parts (docs/web.md, "The page"): the scene picker from
// Session.bundledScenes() and the settings table from Session.settingsTables(), the same Field<S>
// tables as `eddy run --help`, so the page cannot drift from the CLI.
import { cssGradient } from './render.js';

export const $ = (id) => document.getElementById(id);

const METHOD_NAMES = { clavet: 'Clavet', wcsph: 'WCSPH', dfsph: 'DFSPH', pbf: 'PBF', shallow_water: 'shallow water' };
export const methodName = (m) => METHOD_NAMES[m] || m;

/// Fills #scene with the bundled scenes grouped by method and dimension ("Clavet 2D", ...).
export function fillScenes(select, scenes, current) {
    select.textContent = '';
    // groups: 2D methods, 3D methods, grids, then what the web build cannot run (its reason as tooltip)
    const METHOD_ORDER = ['clavet', 'wcsph', 'dfsph', 'pbf'];
    const groups = new Map();
    for (const s of scenes) {
        const rank = s.unavailable ? 99 : s.method === 'shallow_water' ? 50 : (s.dimension === 3 ? 10 : 0) + Math.max(0, METHOD_ORDER.indexOf(s.method));
        const g = s.unavailable ? 'not in the web build' : s.method === 'shallow_water' ? 'shallow water (grid)' : `${methodName(s.method)} ${s.dimension}D`;
        if (!groups.has(g)) groups.set(g, { rank, list: [] });
        groups.get(g).list.push(s);
    }
    const order = [...groups.keys()].sort((a, b) => groups.get(a).rank - groups.get(b).rank || a.localeCompare(b));
    for (const g of order) {
        const og = document.createElement('optgroup');
        og.label = g;
        for (const s of groups.get(g).list) {
            const o = document.createElement('option');
            o.value = s.name;
            o.textContent = s.name;
            const tip = [s.description, s.unavailable].filter(Boolean).join('\n');
            if (tip) o.title = tip;
            og.appendChild(o);
        }
        select.appendChild(og);
    }
    setSceneOption(select, current);
}

/// Selects `name` in #scene, adding it (as "other") when it is not bundled.
export function setSceneOption(select, name) {
    if (!name) return;
    if (![...select.options].some((o) => o.value === name)) {
        const o = document.createElement('option');
        o.value = name;
        o.textContent = name + ' (loaded)';
        o.dataset.loaded = '1';
        select.appendChild(o);
    }
    select.value = name;
}

/// A number as the settings table shows it: float32 noise trimmed (0.30000001192092896 -> 0.3).
export function shortNumber(x) {
    if (typeof x !== 'number' || !isFinite(x)) return String(x);
    if (Number.isInteger(x)) return String(x);
    return String(parseFloat(x.toPrecision(7)));
}

/// The settings table for `fields` (a method's Field table) with the current values; `onChange(key,
/// value)` on an edit. Each row: the key (doc as tooltip), one input (bool: checkbox; choices:
/// select; int/float: number with the table's range), the unit and range.
export function buildSettings(table, fields, values, onChange) {
    table.textContent = '';
    for (const f of fields) {
        const tr = document.createElement('tr');
        const key = document.createElement('td');
        key.className = 'key';
        key.textContent = f.key;
        const range = rangeText(f);
        key.title = `${f.key}${f.unit ? ' (' + f.unit + ')' : ''}: ${f.doc}${range ? '\nrange: ' + range : ''}\ndefault: ${shortNumber(f.default)}`;
        const cell = document.createElement('td');
        let input;
        const v = values[f.key];
        if (f.type === 'bool') {
            input = document.createElement('input');
            input.type = 'checkbox';
            input.checked = !!v;
            input.addEventListener('change', () => onChange(f.key, input.checked, tr));
        } else if (f.choices) {
            input = document.createElement('select');
            for (const c of f.choices) {
                const o = document.createElement('option');
                o.value = o.textContent = c;
                input.appendChild(o);
            }
            input.value = v;
            input.addEventListener('change', () => onChange(f.key, input.value, tr));
        } else if (f.type === 'string') {
            input = document.createElement('input');
            input.type = 'text';
            input.value = v ?? '';
            input.addEventListener('change', () => onChange(f.key, input.value, tr));
        } else {
            input = document.createElement('input');
            input.type = 'number';
            input.step = f.type === 'int' ? '1' : 'any';
            if (f.min !== undefined) input.min = f.min;
            if (f.max !== undefined) input.max = f.max;
            input.value = shortNumber(v);
            input.addEventListener('change', () => {
                const x = f.type === 'int' ? parseInt(input.value, 10) : parseFloat(input.value);
                onChange(f.key, Number.isFinite(x) ? x : input.value, tr);
            });
        }
        input.id = 'setting-' + f.key;
        input.name = f.key;
        input.dataset.key = f.key;
        input.title = key.title;
        cell.appendChild(input);
        const unit = document.createElement('td');
        unit.className = 'unit';
        unit.textContent = f.unit || '';
        if (range) unit.title = 'range: ' + range;
        tr.append(key, cell, unit);
        table.appendChild(tr);
    }
}

function rangeText(f) {
    const lo = f.min, hi = f.max;
    if (f.choices) return f.choices.join(' | ');
    if (lo === undefined && hi === undefined) return '';
    if (lo !== undefined && hi !== undefined && lo === 0 && hi === 0) return '';
    return `${lo !== undefined ? (f.min_exclusive ? '(' : '[') + shortNumber(lo) : '(-inf'}, ${hi !== undefined ? shortNumber(hi) + ']' : 'inf)'}`;
}

/// The colour legend: field, unit, the map's bar and its ends.
export function showLegend(visible, field, unit, map, lo, hi) {
    const el = $('legend');
    const key = visible ? [field, unit, map, lo, hi].join('|') : '';
    if (el.dataset.key === key) return;  // unchanged: no DOM writes
    el.dataset.key = key;
    el.hidden = !visible;
    if (!visible) return;
    $('legend-field').textContent = field;
    $('legend-unit').textContent = unit ? `(${unit})` : '';
    const bar = $('legend-bar'), g = cssGradient(map);
    if (bar.dataset.map !== map) { bar.style.background = g; bar.dataset.map = map; }
    const fmt = (x) => (Math.abs(x) >= 1e4 || (Math.abs(x) < 1e-2 && x !== 0) ? x.toExponential(2) : x.toPrecision(4).replace(/\.?0+$/, ''));
    $('legend-min').textContent = fmt(lo);
    $('legend-mid').textContent = fmt(0.5 * (lo + hi));
    $('legend-max').textContent = fmt(hi);
}

/// Saves bytes (a string, typed array or Blob) as a download named `name`.
export function download(name, data, type) {
    const blob = data instanceof Blob ? data : new Blob([data], { type: type || 'application/octet-stream' });
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = name;
    document.body.appendChild(a);
    a.click();
    setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
}

/// base64url of UTF-8 text, and back (the share link's #scene=...).
export function toBase64Url(text) {
    const bytes = new TextEncoder().encode(text);
    let s = '';
    for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}
export function fromBase64Url(b64) {
    const s = atob(b64.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((b64.length + 3) % 4));
    const bytes = new Uint8Array(s.length);
    for (let i = 0; i < s.length; ++i) bytes[i] = s.charCodeAt(i);
    return new TextDecoder().decode(bytes);
}
