'use strict';

const fs = require('node:fs');
const path = require('node:path');

// Issue 11: the API reaches mail only through the mail service. No SQL, no knex, no store or
// legacy backend (and no dispatch by backend name) in packages/api/lib.
const lib = path.join(__dirname, '..', 'lib');
const files = (dir) =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? files(p) : e.name.endsWith('.js') ? [p] : [];
  });

test.each(files(lib).map((f) => [path.relative(lib, f), f]))(
  '%s stays above the service',
  (_, f) => {
    const text = fs.readFileSync(f, 'utf8');
    // A database handle may be passed on to the service; never called or queried here.
    expect(text).not.toMatch(/\bknex\s*\(|\bknex\.\w|\.raw\(|require\('knex'\)/i);
    expect(text).not.toMatch(/\b(SELECT|INSERT|UPDATE|DELETE)\s+[\w*]/);
    expect(text).not.toMatch(/require\('@mailgate\/(store|legacy|mime)'\)/);
    expect(text).not.toMatch(/\blegacyOf\b|\bpgOnly\b/);
  },
);
