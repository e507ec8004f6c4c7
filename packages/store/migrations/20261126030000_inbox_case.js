'use strict';

/*
 * INBOX is one mailbox whatever its case (RFC 3501 5.1), and its inferiors live under the
 * name INBOX: the store now keeps every name in that form (@mailgate/core
 * canonicalMailboxName). Before, `import mh` of a tree whose folder is `inbox` (nmh's default)
 * made a mailbox `inbox` beside INBOX; IMAP listed it but `SELECT inbox` opened INBOX, so its
 * mail could not be reached (and an IMAP login had created that INBOX, empty).
 *
 * Up, per user, deterministic (ids, oldest first):
 *  - each mailbox named INBOX in another case takes the name INBOX when no mailbox has it, or
 *    when the one that has it holds no message and no expunge tombstone (the empty INBOX an
 *    IMAP login creates: it is removed, the variant takes its place); otherwise it is renamed
 *    `<name> (id N)`, a name that stays reachable and shows it was renamed (the mail of two
 *    mailboxes is not merged here);
 *  - each inferior (`inbox/…`) follows its first level's new name; one whose new name is
 *    taken gets ` (id N)` after it;
 *  - quarantine entries name their mailbox in the stored form.
 * Mailbox ids, uids and UIDVALIDITY stay; an Elasticsearch mirror keeps the old names in its
 * documents until `mailgate es reindex`. Down: nothing to undo (the names stay canonical).
 */

exports.up = async function up(knex) {
  await knex.raw(`
    DO $$
    DECLARE
      u integer; v record; c record; canon integer; target text; renamed jsonb; first text;
    BEGIN
      FOR u IN SELECT DISTINCT user_id FROM mailboxes
                WHERE name ~* '^inbox(/|$)' AND name !~ '^INBOX(/|$)' ORDER BY 1
      LOOP
        renamed := '{}'::jsonb;
        SELECT id INTO canon FROM mailboxes WHERE user_id = u AND name = 'INBOX';
        FOR v IN SELECT id, name FROM mailboxes
                  WHERE user_id = u AND name ~* '^inbox$' AND name <> 'INBOX' ORDER BY id
        LOOP
          IF canon IS NOT NULL
             AND NOT EXISTS (SELECT 1 FROM messages WHERE user_id = u AND mailbox_id = canon)
             AND NOT EXISTS (SELECT 1 FROM expunged_uids WHERE user_id = u AND mailbox_id = canon)
          THEN
            DELETE FROM mailboxes WHERE id = canon;
            canon := NULL;
          END IF;
          IF canon IS NULL THEN
            target := 'INBOX';
            canon := v.id;
          ELSE
            target := v.name || ' (id ' || v.id || ')';
          END IF;
          UPDATE mailboxes SET name = target WHERE id = v.id;
          renamed := renamed || jsonb_build_object(v.name, target);
        END LOOP;
        FOR c IN SELECT id, name FROM mailboxes
                  WHERE user_id = u AND name ~* '^inbox/' AND name !~ '^INBOX/'
                  ORDER BY length(name), id
        LOOP
          first := substr(c.name, 1, 5);
          target := coalesce(renamed ->> first, 'INBOX') || substr(c.name, 6);
          IF EXISTS (SELECT 1 FROM mailboxes WHERE user_id = u AND name = target) THEN
            target := target || ' (id ' || c.id || ')';
          END IF;
          UPDATE mailboxes SET name = target WHERE id = c.id;
        END LOOP;
      END LOOP;
      UPDATE quarantine SET mailbox = 'INBOX' || substr(mailbox, 6)
       WHERE mailbox ~* '^inbox(/|$)' AND mailbox !~ '^INBOX(/|$)';
    END $$`);
};

exports.down = async function down() {};
