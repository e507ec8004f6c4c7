'use strict';

const fs = require('node:fs');
const path = require('node:path');

/*
 * The webmail page as a fixed list of static files. This module only lists and reads the
 * files of public/; it never talks to the store or the API (the page does, over HTTP, from
 * the browser). Serving is the API's job (@mailgate/api's web plugin).
 */

/** Directory holding the page's files. */
const PUBLIC_DIR = path.join(__dirname, '..', 'public');
/** A checkout's committed benchmark runs (`mailgate bench --out bench/results/<run>`). */
const BENCH_RESULTS_DIR = path.join(__dirname, '..', '..', '..', 'bench', 'results');

/**
 * The newest full benchmark run of a checkout: the last `full-*` folder (names carry the
 * date) holding a results.json, or null (an installed package has none).
 * @param {string} [dir]
 * @returns {{name: string, file: string}|null}
 */
function latestBenchRun(dir = BENCH_RESULTS_DIR) {
  let names;
  try {
    names = fs.readdirSync(dir);
  } catch {
    return null;
  }
  const runs = names
    .filter((n) => n.startsWith('full-') && fs.existsSync(path.join(dir, n, 'results.json')))
    .sort();
  const name = runs[runs.length - 1];
  return name ? { name, file: path.join(dir, name, 'results.json') } : null;
}

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json; charset=utf-8',
  '.ico': 'image/x-icon',
  '.png': 'image/png',
};

/**
 * Every file of the page, read once: `urlPath` (e.g. `/js/app.js`) → bytes and content type.
 * Reading the whole (small) tree at start-up means a request can only ever get one of these
 * files: no path from a URL reaches the file system, so `..` and symlink tricks have nothing
 * to work on.
 *
 * Each script and style sheet is also listed under `/v/<version>/…` (version: a hash of every
 * file), marked `immutable`, and the HTML pages refer to those: a browser that has the page
 * already revalidates only the HTML and takes the rest from its cache, with no round trip per
 * module (which made start-up wait for free connections next to the first API requests). The
 * modules' relative imports resolve under the same prefix, so they need no rewriting; a new
 * version of any file is a new prefix.
 * @param {string} [dir] defaults to the page shipped in this package
 * @param {{benchRun?: {name: string, file: string}|null}} [opts] the benchmark run served at
 *   `/bench/<name>/results.json` and opened by the sidebar's link (default: latestBenchRun())
 * @returns {Map<string, {body: Buffer, type: string, etag: string, immutable?: boolean}>}
 */
function loadPageFiles(dir = PUBLIC_DIR, { benchRun = latestBenchRun() } = {}) {
  const crypto = require('node:crypto');
  const hash = (body) => crypto.createHash('sha256').update(body).digest('base64url');
  const out = new Map();
  const walk = (d, prefix) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (e.name.startsWith('.')) continue;
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p, `${prefix}${e.name}/`);
      else if (e.isFile()) {
        const type = TYPES[path.extname(e.name).toLowerCase()];
        if (!type) continue;
        out.set(`/${prefix}${e.name}`, { body: fs.readFileSync(p), type });
      }
    }
  };
  walk(dir, '');
  // The sidebar's "Benchmark results" opens a run the app serves itself (issue 30.12: it
  // opened a file picker only): /bench/<run>/results.json, named in the link.
  let benchLink = null;
  if (benchRun) {
    const url = `/bench/${encodeURIComponent(benchRun.name)}/results.json`;
    out.set(url, { body: fs.readFileSync(benchRun.file), type: TYPES['.json'] });
    benchLink = `/bench.html?src=${encodeURIComponent(url)}`;
  }
  const all = crypto.createHash('sha256');
  for (const [p, f] of [...out].sort(([a], [b]) => (a < b ? -1 : 1))) {
    all.update(p).update(f.body);
  }
  const version = all.digest('base64url').slice(0, 12);
  const assets = /^\/(js|css)\//;
  for (const [p, f] of [...out]) {
    if (assets.test(p)) out.set(`/v/${version}${p}`, { ...f, immutable: true });
    if (p.endsWith('.html')) {
      let html = f.body
        .toString('utf8')
        .replace(/(src|href)="\/(js|css)\//g, `$1="/v/${version}/$2/`);
      if (benchLink) html = html.replace('href="/bench.html"', `href="${benchLink}"`);
      f.body = Buffer.from(html);
    }
  }
  for (const f of out.values()) f.etag = `"${hash(f.body).slice(0, 22)}"`;
  return out;
}

module.exports = { PUBLIC_DIR, loadPageFiles, latestBenchRun };
