'use strict';

const schemas = require('../schemas/health');

/*
 * GET /health: liveness and PostgreSQL reachability, no auth. Answers quickly even while
 * users hold long streams: those are capped below the pool size (streams.js).
 */
async function healthRoutes(app) {
  app.get('/health', { config: { auth: 'none' }, schema: schemas.health }, async (req) => {
    await app.timed(req, () => app.mailService.ping());
    return { status: 'ok', db: 'ok' };
  });
}

module.exports = healthRoutes;
