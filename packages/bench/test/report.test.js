'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { markdown, lineChart, writeReport, LISA2003 } = require('../lib/report');

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

  test("the 2003 study's tables come from the committed data file, beside this run's door ratios", () => {
    // The data file is the notes' table as numbers (when the notes are beside the repo).
    const notes = path.join(__dirname, '..', '..', '..', '..', 'shared', 'notes', 'lisa2003.md');
    if (fs.existsSync(notes)) {
      const names = ['cyrus', 'uw', 'courier', 'mysql'];
      const fromNotes = fs
        .readFileSync(notes, 'utf8')
        .split('\n')
        .filter((l) => /^\| (all headers|text|from|date|expunge)/.test(l))
        .map((l) =>
          l
            .split('|')
            .slice(1, -1)
            .map((c) => c.trim()),
        );
      expect(fromNotes).toHaveLength(LISA2003.rows.length);
      fromNotes.forEach((cells, i) => {
        const r = LISA2003.rows[i];
        expect([r.study, r.size]).toEqual(cells.slice(0, 2));
        names.forEach((n, k) => {
          const cell = cells[2 + k];
          expect(r.seconds[n]).toBe(Number(cell.replace(/[†‡]/g, '')));
          expect((r.marks && r.marks[n]) || '').toBe(cell.replace(/[^†‡]/g, ''));
        });
      });
    }
    const imap = (b, size, req, ms, agrees) => ({
      ...row(b, size, 1046, req, ms, agrees),
      door: 'imap',
    });
    const md = markdown({
      machine: {},
      results: [
        row('pg', 'small', 1046, 'headers', 2),
        row('mbox', 'small', 1046, 'headers', 200),
        row('maildir', 'small', 1046, 'headers', 300),
        imap('mailgate-imap', 'small', 'headers', 30),
        imap('dovecot-maildir', 'small', 'headers', 15),
        imap('dovecot-mbox', 'small', 'headers', 10, false),
      ],
    });
    expect(md).toMatch(/^## The 2003 study beside this run$/m);
    // Only the sizes of this run; the study's own flat-file ÷ MySQL (6.83 / 1.16), then each
    // door's database path against that door's best agreeing flat-file backend.
    expect(md).toMatch(
      /^\| all headers \| small \| 2\.36 \| 6\.83 \| 14\.37 \| 1\.16 \| 5\.9× \| 2\.00 \| 200 \(mbox\) \| 100\.0× \| 30\.0 \| 15\.0 \(dovecot-maildir\) \| 0\.5× \|$/m,
    );
    expect(md).toMatch(
      /^\| text "happy" \| small \| 4\.04 \| 2\.92 \| 7\.76† \| 0\.71 \| 4\.1× \| – \| – \| – \| – \| – \| – \|$/m,
    );
    expect(md).not.toMatch(/\| medium \| 39\.3 /);
  });

  test("results.md says where the run's wall time went when the run recorded it", () => {
    const md = markdown({
      machine: {
        benchSeconds: 100,
        wall: [
          { size: 'small', backend: 'pg', load: 3, warm: 10.5, expunge: 1, cold: 20, total: 34.5 },
        ],
      },
      results: data.results,
    });
    expect(md).toMatch(/^Whole run 100 s; backends 35 s/m);
    expect(md).toMatch(/^\| small \| pg \| 3\.0 \| 11 \| 1\.0 \| 20 \| 35 \|$/m);
    expect(markdown(data)).not.toMatch(/time went/);
  });
});
