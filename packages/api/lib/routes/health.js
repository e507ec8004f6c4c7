'use strict';

const schemas = require('../schemas/health');

/*
 * GET /health: liveness, PostgreSQL reachability and load, no auth. Answers quickly even
 * while users hold long streams (capped below the pool size, streams.js) or every pooled
 * connection (the ping has its own connection). `status` is `saturated` while every pooled
 * connection is taken and requests wait for one (issue 29.4: it said ok while users got 503);
 * still 200, since the database is reachable: an operator's alert, not a reason to restart.
 */
async function healthRoutes(app) {
  app.get('/health', { config: { auth: 'none' }, schema: schemas.health }, async (req) => {
    await app.timed(req, () => app.mailService.ping());
    const { pool, users } = app.mailService.load();
    return { status: pool.saturated ? 'saturated' : 'ok', db: 'ok', pool, users };
  });
}

module.exports = healthRoutes;
