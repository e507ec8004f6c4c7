'use strict';

/*
 * Moving mail in and out, as service operations (issue 31.3): import, export, verify, the
 * quarantine and one account's migration, each the importer's (@mailgate/importer) on this
 * service's store. Edges (CLI, bench) call these and never the importer nor the store itself.
 * Owns no logic of its own: which store, and the options every caller would otherwise repeat.
 */

const importer = require('@mailgate/importer');

/**
 * The transfer operations of a mail service.
 * @param {{store: object}} service the MailService (its store is the importer's target)
 */
function createTransfer(service) {
  const withStore = (opts) => ({ ...opts, store: service.store });
  return {
    /**
     * Imports mbox files, a Maildir or MH tree, or an IMAP account (importer runImport).
     * @param {object} opts runImport's options without `store` (kind, paths, user, …)
     * @returns {Promise<object>} the import report
     */
    importMail: (opts) => importer.runImport(withStore(opts)),

    /**
     * Writes a user's mail out as an mbox file (`mbox`), a Maildir++ tree (`maildir`) or MH
     * folders (`mh`).
     * @param {'mbox'|'maildir'|'mh'} format
     * @param {object} opts the importer's export options without `store` (user, out, …)
     * @returns {Promise<object>} the export report
     */
    exportMail(format, opts) {
      const fn = {
        mbox: importer.exportMbox,
        maildir: importer.exportMaildir,
        mh: importer.exportMh,
      };
      return fn[format](withStore(opts));
    },

    /**
     * Every message of a source present and byte-identical in the store.
     * @param {object} opts kind, path, user, mailbox
     * @returns {Promise<object>} the verify report (`ok`)
     */
    verifySource: (opts) => importer.verifySource(withStore(opts)),

    /**
     * The mailbox an mbox file is imported into when no --mailbox is given.
     * @param {string} file
     * @returns {string}
     */
    mailboxForMboxFile: (file) => importer.mailboxForMboxFile(file),

    /**
     * A user's quarantined entries (id, source, position, reason, detail).
     * @param {string} user
     * @returns {Promise<object[]>}
     */
    listQuarantine: (user) => importer.listQuarantine(withStore({ user })),

    /**
     * The exact bytes of one quarantined entry.
     * @param {string} user
     * @param {number} id
     * @returns {Promise<Buffer>}
     */
    quarantineRaw: (user, id) => importer.quarantineRaw(withStore({ user, id })),

    /**
     * One account's migration from its upstream IMAP server: import, verify, cutover.
     * @param {object} opts migrateAccount's options without `store` (user, imap, cutover, …)
     * @returns {Promise<object>} the migration report
     */
    migrateAccount: (opts) => importer.migrateAccount(withStore(opts)),

    /**
     * Derives and keeps the IMAP metadata of messages stored without it (a database from
     * before migration 20261129350100_message_imap.js): batched and resumable.
     * @param {{user?: string, batch?: number}} [opts] one user, or every user
     * @returns {Promise<{users: number, messages: number, kept: number, skipped: number}>}
     */
    backfillImapMeta: (opts = {}) => importer.backfillImapMeta(withStore(opts)),
  };
}

/**
 * Refuses an export target a user already has (OUTPUT_EXISTS without `force`); pure, so an
 * edge checks it before any database is opened.
 * @param {string} out
 * @param {'file'|'directory'} kind
 * @param {{force?: boolean}} opts
 */
function checkExportTarget(out, kind, opts) {
  return importer.checkExportTarget(out, kind, opts);
}

module.exports = { createTransfer, checkExportTarget };
