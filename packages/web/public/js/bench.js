/*
 * The benchmark page: renders a `mailgate bench` run (its results.json) as tables and inline
 * SVG bar charts, one section per request and phase. Reads a file chosen or dropped by the
 * user (or ?src= on the same origin); builds every element with DOM calls (values are text).
 */

const SIZE_ORDER = ['small', 'medium', 'large'];
const COLORS = ['#2b5fb8', '#d9822b', '#3c9a5f', '#b3261e', '#7a4fb5', '#6b7785', '#c0a000'];
const SVG = 'http://www.w3.org/2000/svg';

function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) e.setAttribute(k, v);
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}
function svg(tag, attrs = {}, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

function fmtMs(ms) {
  if (ms === null || ms === undefined) return '–';
  if (ms >= 10000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms >= 100) return `${Math.round(ms)} ms`;
  return `${Number(ms).toFixed(1)} ms`;
}

/**
 * Groups results by request + phase, then backend × size.
 * @param {{results: object[]}} run
 */
export function group(run) {
  const byKey = new Map();
  for (const r of run.results || []) {
    const key = `${r.request}|${r.phase}`;
    if (!byKey.has(key)) byKey.set(key, { request: r.request, phase: r.phase, cells: new Map() });
    byKey.get(key).cells.set(`${r.backend}|${r.size}`, r);
  }
  return [...byKey.values()];
}

function sizesOf(run) {
  const seen = new Set((run.results || []).map((r) => r.size));
  return [
    ...SIZE_ORDER.filter((s) => seen.has(s)),
    ...[...seen].filter((s) => !SIZE_ORDER.includes(s)),
  ];
}
function backendsOf(run) {
  return [...new Set((run.results || []).map((r) => r.backend))];
}

function table(g, sizes, backends) {
  const head = el('tr', {}, el('th', {}, 'backend'), ...sizes.map((s) => el('th', {}, s)));
  const body = backends
    .filter((b) => sizes.some((s) => g.cells.has(`${b}|${s}`)))
    .map((b) =>
      el(
        'tr',
        {},
        el('td', {}, b),
        ...sizes.map((s) => {
          const r = g.cells.get(`${b}|${s}`);
          if (!r) return el('td', {}, '');
          const td = el('td', {}, fmtMs(r.ms && r.ms.median));
          const extra = [];
          if (r.ms && r.samples && r.samples.length > 1) {
            extra.push(`min ${fmtMs(r.ms.min)}, max ${fmtMs(r.ms.max)}, ${r.samples.length} runs`);
          }
          if (r.matches !== undefined) extra.push(`${r.matches} matches`);
          if (r.agrees === false) {
            td.className = 'disagree';
            extra.push('answer differs from pg');
          }
          td.title = extra.join('; ');
          return td;
        }),
      ),
    );
  return el('table', {}, el('thead', {}, head), el('tbody', {}, ...body));
}

/** Grouped horizontal bars (one group per size), log scale: figures span ms to minutes. */
function chart(g, sizes, backends) {
  const rows = [];
  for (const s of sizes) {
    for (const b of backends) {
      const r = g.cells.get(`${b}|${s}`);
      if (r && r.ms && r.ms.median !== null && r.ms.median !== undefined) {
        rows.push({ size: s, backend: b, ms: Math.max(0.1, r.ms.median) });
      }
    }
  }
  const barH = 12;
  const gap = 10;
  const left = 150;
  const width = 520;
  const plot = width - left - 70;
  const max = Math.max(...rows.map((r) => r.ms), 1);
  const minLog = Math.floor(Math.log10(Math.min(...rows.map((r) => r.ms), 1)));
  const maxLog = Math.ceil(Math.log10(max));
  const x = (ms) => ((Math.log10(ms) - minLog) / Math.max(1, maxLog - minLog)) * plot;
  let y = 16;
  const shapes = [];
  for (let p = minLog; p <= maxLog; p++) {
    const xx = left + x(10 ** p);
    shapes.push(svg('line', { x1: xx, x2: xx, y1: 12, y2: 10000, stroke: '#eef0f3' }));
    shapes.push(svg('text', { x: xx, y: 10, 'text-anchor': 'middle' }, fmtMs(10 ** p)));
  }
  for (const s of sizes) {
    const mine = rows.filter((r) => r.size === s);
    if (!mine.length) continue;
    shapes.push(svg('text', { x: 0, y: y + barH, 'font-weight': 600 }, s));
    for (const r of mine) {
      const color = COLORS[backends.indexOf(r.backend) % COLORS.length];
      shapes.push(svg('text', { x: 44, y: y + barH - 2 }, r.backend));
      const bar = svg('rect', {
        x: left,
        y,
        width: Math.max(1, x(r.ms)),
        height: barH,
        fill: color,
      });
      bar.append(svg('title', {}, `${r.backend} ${s}: ${fmtMs(r.ms)}`));
      shapes.push(bar);
      shapes.push(svg('text', { x: left + x(r.ms) + 4, y: y + barH - 2 }, fmtMs(r.ms)));
      y += barH + 3;
    }
    y += gap;
  }
  const root = svg('svg', {
    width,
    height: y + 4,
    viewBox: `0 0 ${width} ${y + 4}`,
    role: 'img',
    'aria-label': `${g.request} (${g.phase}): median time per backend and size, log scale`,
  });
  for (const s of shapes) {
    if (s.getAttribute('y2') === '10000') s.setAttribute('y2', String(y));
    root.append(s);
  }
  return root;
}

/** Renders a whole run into `root`. */
export function render(root, run, name) {
  const sizes = sizesOf(run);
  const backends = backendsOf(run);
  const facts = Object.entries(run.machine || {}).filter(([k]) => k !== 'notes');
  const parts = [
    el('h2', {}, name ? `Run: ${name}` : 'Run'),
    el(
      'table',
      { class: 'machine' },
      el(
        'tbody',
        {},
        ...facts.map(([k, v]) => el('tr', {}, el('th', {}, k), el('td', {}, String(v)))),
      ),
    ),
  ];
  if (run.machine && Array.isArray(run.machine.notes)) {
    parts.push(el('ul', {}, ...run.machine.notes.map((n) => el('li', {}, String(n)))));
  }
  for (const g of group(run)) {
    parts.push(
      el(
        'section',
        { class: 'request', 'data-request': `${g.request}-${g.phase}` },
        el('h2', {}, `${g.request} (${g.phase})`),
        table(g, sizes, backends),
        chart(g, sizes, backends),
      ),
    );
  }
  root.replaceChildren(...parts);
}

function load(text, name) {
  const error = document.getElementById('error');
  error.textContent = '';
  try {
    const run = JSON.parse(text);
    if (!run || !Array.isArray(run.results))
      throw new Error('not a results.json: no "results" list');
    render(document.getElementById('report'), run, name);
  } catch (err) {
    error.textContent = `Cannot show ${name}: ${err.message}`;
  }
}

document.getElementById('file').addEventListener('change', async (e) => {
  const f = e.target.files[0];
  if (f) load(await f.text(), f.name);
});
document.addEventListener('dragover', (e) => {
  e.preventDefault();
  document.body.classList.add('dragging');
});
document.addEventListener('dragleave', () => document.body.classList.remove('dragging'));
document.addEventListener('drop', async (e) => {
  e.preventDefault();
  document.body.classList.remove('dragging');
  const f = e.dataTransfer.files[0];
  if (f) load(await f.text(), f.name);
});
const src = new URLSearchParams(location.search).get('src');
if (src) {
  fetch(src)
    .then((r) => (r.ok ? r.text() : Promise.reject(new Error(`HTTP ${r.status}`))))
    .then(
      (t) => load(t, src),
      (err) => load('null', `${src} (${err.message})`),
    );
}
