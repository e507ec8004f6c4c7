'use strict';

const { searchEs } = require('@mailgate/es');
const { PgBackend } = require('./pg-backend');

/*
 * The es backend: a search decorator over pg. Searches are answered by the Elasticsearch
 * mirror (uids resolved against PostgreSQL, so a queued expunge never shows); every other
 * operation is pg's, whose writes queue es_outbox rows in their own transaction. The mirror
 * is eventually consistent: a write shows in es searches once the outbox is shipped
 * (`mailgate serve`'s worker, `mailgate es sync`, service.syncMirror()). Queries ES cannot
 * answer (`body:`, `text:`) are ES_UNSUPPORTED_QUERY (400), never a silent pg answer.
 */

class EsBackend extends PgBackend {
  /**
   * @param {object} ctx PgBackend's, plus `mirror` (@mailgate/es openMirror)
   */
  constructor(ctx) {
    super(ctx, 'es');
    this.mirror = ctx.mirror;
  }

  /** @protected */
  async findHits(ast, mailboxId, names) {
    const r = await searchEs(this.mirror, this.user.id, ast, { mailboxId });
    return r.hits.map((h) => ({ mailbox: names.get(h.mailboxId), uid: h.uid, id: h.mailboxId }));
  }
}

module.exports = { EsBackend };
