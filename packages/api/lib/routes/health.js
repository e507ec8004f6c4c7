'use strict';

const schemas = require('../schemas/health');

/** GET /health: liveness and PostgreSQL reachability, no auth. */
async function healthRoutes(app) {
  app.get('/health', { config: { auth: 'none' }, schema: schemas.health }, async (req) => {
    await app.timed(req, () => app.store.knex.raw('SELECT 1'));
    return { status: 'ok', db: 'ok' };
  });
}

module.exports = healthRoutes;
