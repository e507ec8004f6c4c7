'use strict';

/*
 * Every message row gets its header_json fragment, so the NDJSON scan has one way to build a
 * line (@mailgate/store header-row.js) instead of a second, SQL-built copy of the header row
 * for rows imported before 20261122005000_header_json. The expression below is frozen here
 * on purpose (a migration must not change with the code); it writes the same fragment as
 * headerJson() in @mailgate/store.
 */

const ISO = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

exports.up = async function up(knex) {
  await knex.raw(`
    UPDATE messages m SET header_json = substr(r.j, 2, length(r.j) - 2)
      FROM (SELECT user_id, mailbox_id, uid, json_build_object(
              'from', CASE WHEN coalesce(from_addr, '') <> '' OR coalesce(from_name, '') <> ''
                      THEN json_build_object('name', coalesce(from_name, ''),
                                             'address', coalesce(from_addr, '')) END,
              'to', to_addrs, 'cc', cc_addrs, 'subject', subject,
              'date', to_char(date AT TIME ZONE 'UTC', ${ISO}),
              'internalDate', to_char(internal_date AT TIME ZONE 'UTC', ${ISO}),
              'size', size, 'hasAttachments', has_attachments, 'messageId', message_id
            )::text AS j
              FROM messages WHERE header_json = '') r
     WHERE m.user_id = r.user_id AND m.mailbox_id = r.mailbox_id AND m.uid = r.uid`);
};

exports.down = async function down() {
  // Nothing to undo: the fragment is derived data.
};
