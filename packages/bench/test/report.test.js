'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { markdown, lineChart, writeReport } = require('../lib/report');

const row = (backend, size, messages, request, median, agrees = true) => ({
  backend,
  size,
  messages,
  request,
  phase: 'warm',
  ms: { median, min: median * 0.9, max: median * 1.2 },
  matches: 10,
  agrees,
});

const data = {
  machine: { cpu: 'test', cores: 2 },
  results: [
    row('pg', 'small', 1046, 'headers', 5),
    row('pg', 'medium', 8734, 'headers', 20),
    row('dovecot-maildir', 'small', 1046, 'headers', 50),
    row('dovecot-maildir', 'medium', 8734, 'headers', 400),
    row('dovecot-mbox', 'small', 1046, 'headers', 100, false),
    { ...row('mailgate-imap', 'small', 1046, 'headers', 25), door: 'imap' },
    row('maildir', 'small', 1046, 'headers', 500),
  ],
};

describe('report writers', () => {
  test('markdown: a table per request, backends as rows, sizes as columns, ratios', () => {
    const md = markdown(data, { notes: ['n1'] });
    expect(md).toMatch(/^## headers \(warm\)$/m);
    expect(md).toMatch(
      /^\| backend \| door \| small \| medium \| ÷ best flat file \(small\) \| ÷ best flat file \(medium\) \|$/m,
    );
    // Within a door: pg (store) against maildir (store), mailgate-imap against the best
    // agreeing Dovecot (dovecot-mbox disagrees). Across doors only where the door has no
    // flat-file side of that size, marked ‡: pg medium against Dovecot medium.
    expect(md).toMatch(
      /^\| pg \| store \| 5\.00 \(4\.50–6\.00\) · 10 \| 20\.0 .* \| 0\.01× \| 0\.05× ‡ \|$/m,
    );
    expect(md).toMatch(/^\| mailgate-imap \| imap \| 25\.0 .* \| 0\.50× \| – \|$/m);
    expect(md).toMatch(/^\| dovecot-mbox \| imap \| 100 \(90\.0–120\) · 10 ✗ \| – \| – \| – \|$/m);
    expect(md).toMatch(/note: n1/);
  });

  test('SVG line chart: one polyline per series, log-scale ticks, legend', () => {
    const svg = lineChart({
      title: 'headers',
      xLabels: ['small', 'medium', 'large'],
      series: [
        { name: 'pg', points: [5, 20, 40] },
        { name: 'dovecot <maildir>', points: [50, 400, null] },
      ],
    });
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trim().endsWith('</svg>')).toBe(true);
    expect(svg.match(/<polyline /g)).toHaveLength(2);
    expect(svg.match(/<circle /g)).toHaveLength(5);
    expect(svg.match(/class="ytick"/g).map(String)).toHaveLength(4); // 1, 10, 100, 1000
    expect(svg).toContain('dovecot &lt;maildir&gt;');
  });

  test('writeReport writes results.json in the brief shape, results.md and charts', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mgb-rep-'));
    try {
      const files = writeReport(dir, data);
      const json = JSON.parse(fs.readFileSync(files.json, 'utf8'));
      expect(Object.keys(json)).toEqual(['machine', 'results']);
      expect(json.results).toEqual(data.results);
      expect(fs.readFileSync(files.md, 'utf8')).toMatch(/## headers \(warm\)/);
      expect(files.charts.map((f) => path.basename(f))).toEqual(['headers-warm.svg']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
