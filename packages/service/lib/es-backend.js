'use strict';

const { errors, canonicalMailboxName } = require('@mailgate/core');
const { searchEs } = require('@mailgate/es');
const paging = require('./paging');
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

  /**
   * The mirror's hits: `in:` and the mailbox name are checked against the user's mailboxes
   * here (ES answers from the mirror, which knows ids only).
   * @protected
   */
  async findHits(ast, mailbox) {
    const names = await this.store.mailboxNamesById(this.user.id);
    await paging.checkMailboxes(ast, async () => [...names.values()]);
    let mailboxId;
    if (mailbox != null) {
      const wanted = canonicalMailboxName(mailbox); // stored names are canonical (inbox → INBOX)
      mailboxId = [...names].find(([, n]) => n === wanted)?.[0];
      if (mailboxId == null) throw new errors.MAILBOX_NOT_FOUND(mailbox);
    }
    const r = await searchEs(this.mirror, this.user.id, ast, { mailboxId });
    return r.hits.map((h) => ({ mailbox: names.get(h.mailboxId), uid: h.uid, id: h.mailboxId }));
  }
}

module.exports = { EsBackend };
