'use strict';

const { searchEs } = require('@mailgate/es');
const schemas = require('../schemas/search');

/*
 * GET /search: the query language over the caller's mailboxes; uids per mailbox, the total,
 * and up to `limit` header rows.
 */
async function searchRoutes(app) {
  const { store } = app;

  /** backend=mbox|maildir|imap: the legacy backend searches its files or server. */
  const legacySearch = async (req, lb) => {
    const { q, mailbox, limit } = req.query;
    const r = await app.timed(req, () =>
      lb.search(q, { mailbox, withRows: true, rowLimit: limit }),
    );
    const per = new Map();
    for (const h of r.hits) per.set(h.mailbox, [...(per.get(h.mailbox) || []), h.uid]);
    return {
      total: r.total,
      mailboxes: [...per].map(([name, uids]) => ({ mailbox: name, uids })),
      messages: r.rows,
    };
  };

  app.get('/search', { config: { auth: 'user' }, schema: schemas.search }, async (req) => {
    const lb = app.legacyOf(req, req.query.backend);
    if (lb) return legacySearch(req, lb);
    const useEs = req.query.backend === 'es' && app.mirror;
    if (!useEs) app.pgOnly(req.query.backend);
    const userId = req.user.userId;
    const mailboxId = req.query.mailbox
      ? (await app.mailboxOf(req, req.query.mailbox)).id
      : undefined;
    // backend=es: ES answers, uids are resolved against PostgreSQL (@mailgate/es searchEs).
    const r = await app.timed(req, () =>
      useEs
        ? searchEs(app.mirror, userId, req.query.q, { mailboxId })
        : store.search(userId, req.query.q, { mailboxId }),
    );
    const boxes = await app.timed(req, () =>
      store.knex('mailboxes').where({ user_id: userId }).select('id', 'name'),
    );
    const names = new Map(boxes.map((b) => [b.id, b.name]));
    const per = new Map();
    for (const h of r.hits) {
      if (!per.has(h.mailboxId)) per.set(h.mailboxId, []);
      per.get(h.mailboxId).push(h.uid);
    }
    const rows = await app.timed(req, () =>
      store.headersFor(userId, r.hits.slice(0, req.query.limit)),
    );
    return {
      total: r.total,
      mailboxes: [...per].map(([id, uids]) => ({ mailbox: names.get(id), uids })),
      messages: rows.map((row) => ({ mailbox: names.get(row.mailboxId), ...row })),
    };
  });
}

module.exports = searchRoutes;
