'use strict';

/*
 * INBOX is one mailbox whatever its case (RFC 3501 5.1), and its inferiors live under the
 * name INBOX: the store now keeps every name in that form (mailbox-ref.js canonicalName).
 * Before, `import mh` of a tree whose folder is `inbox` (nmh's default) made a mailbox
 * `inbox` beside INBOX; IMAP listed it but `SELECT inbox` opened INBOX, so its mail could not
 * be reached, and the API created `inbox` beside INBOX too.
 *
 * Up: each mailbox named INBOX in another case, or below such a name, takes the canonical
 * name when no mailbox has it yet (shortest names first, so `inbox` before `inbox/sub`). One
 * that cannot (INBOX exists already: the mail of two mailboxes is not merged here) gets
 * " (id N)" after its first level, a name that stays reachable and shows it was renamed.
 * Mailbox ids, uids and UIDVALIDITY stay; an Elasticsearch mirror keeps the old names in its
 * documents until `mailgate es reindex`. Down: nothing to undo (the names stay canonical).
 */

exports.up = async function up(knex) {
  await knex.raw(`
    DO $$
    DECLARE r record; target text;
    BEGIN
      FOR r IN SELECT id, user_id, name FROM mailboxes
                WHERE name ~* '^inbox(/|$)' AND name !~ '^INBOX(/|$)'
                ORDER BY user_id, length(name), name
      LOOP
        target := 'INBOX' || substr(r.name, 6);
        IF EXISTS (SELECT 1 FROM mailboxes WHERE user_id = r.user_id AND name = target) THEN
          target := substr(r.name, 1, 5) || ' (id ' || r.id || ')' || substr(r.name, 6);
        END IF;
        UPDATE mailboxes SET name = target WHERE id = r.id;
      END LOOP;
    END $$`);
};

exports.down = async function down() {};
