'use strict';

const schemas = require('../schemas/migration');

/**
 * The whole-server migration's figures for operators (admin token; the web page's migration
 * view polls it): service.fleet's status and report in one answer. Reads only.
 * @param {import('fastify').FastifyInstance} app
 */
async function migrationRoutes(app) {
  const fleet = app.mailService.fleet;
  app.get('/migration', { config: { auth: 'admin' }, schema: schemas.migration }, async (req) => {
    const [status, report] = await app.timed(req, () =>
      Promise.all([fleet.status(), fleet.report()]),
    );
    return { ...status, accounts: report.accounts, failures: report.failures };
  });
}

module.exports = migrationRoutes;
