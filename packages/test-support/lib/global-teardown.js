'use strict';

const fs = require('node:fs');

module.exports = async function globalTeardown() {
  const citusTemplate = globalThis.__MAILGATE_TEST_CITUS_TEMPLATE__;
  if (citusTemplate) await citusTemplate.drop();
  const pg = globalThis.__MAILGATE_TEST_PG__;
  if (pg) {
    await pg.stop();
    if (!process.env.MAILGATE_KEEP_TEST_HOME) {
      fs.rmSync(pg.home, { recursive: true, force: true });
    }
  }
};
