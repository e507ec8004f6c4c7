'use strict';

/*
 * New mail and flag changes pushed to IMAP IDLE sessions within milliseconds of their commit,
 * whichever process made them (another IMAP server, the HTTP API, LMTP delivery, an import):
 * every change to a mailbox's messages moves its UIDNEXT or HIGHESTMODSEQ in the writing
 * transaction (the store's one rule, RFC 7162), so a trigger on that row is the one place
 * that sees every write path, present and future. It sends `NOTIFY mailgate_mailbox,
 * '<user_id>:<mailbox_id>'`, which PostgreSQL delivers at commit (never for a rollback) and
 * folds when one transaction repeats it. Each process LISTENs on one connection
 * (packages/store/lib/change-feed.js). A \Recent claim (recent_uid only) notifies nobody.
 *
 * Citus: triggers on a distributed table need `citus.enable_unsafe_triggers`; there the
 * coordinator's LISTEN does not see a worker's NOTIFY, and the IMAP server falls back to its
 * poll (IMAP_IDLE_POLL_MS) — named in the store README's Citus notes.
 */

exports.up = async function up(knex) {
  await knex.raw(`
    CREATE OR REPLACE FUNCTION mailgate_notify_mailbox() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.uidnext IS DISTINCT FROM OLD.uidnext
         OR NEW.highestmodseq IS DISTINCT FROM OLD.highestmodseq THEN
        PERFORM pg_notify('mailgate_mailbox', NEW.user_id || ':' || NEW.id);
      END IF;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE TRIGGER mailboxes_notify AFTER UPDATE ON mailboxes
      FOR EACH ROW EXECUTE FUNCTION mailgate_notify_mailbox()`);
};

exports.down = async function down(knex) {
  await knex.raw('DROP TRIGGER IF EXISTS mailboxes_notify ON mailboxes');
  await knex.raw('DROP FUNCTION IF EXISTS mailgate_notify_mailbox()');
};
