'use strict';

/*
 * Per-user IMAP route (issue 12 item 4): `store` serves the user's mail from PostgreSQL,
 * `proxy` relays their authenticated IMAP session byte for byte to the upstream account of
 * `mailgate legacy add-user` while the account is being moved. `mailgate migrate` flips it to
 * `store` once the import is verified. Existing users are served from the store, as before.
 */

exports.up = async function up(knex) {
  await knex.raw(
    `ALTER TABLE users ADD COLUMN route text NOT NULL DEFAULT 'store'
       CONSTRAINT users_route_check CHECK (route IN ('store', 'proxy'))`,
  );
};

exports.down = async function down(knex) {
  await knex.raw('ALTER TABLE users DROP COLUMN route');
};
