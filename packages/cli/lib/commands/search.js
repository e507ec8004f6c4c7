'use strict';

const { Option } = require('commander');
const legacy = require('@mailgate/legacy');
const { searchEs } = require('./es');

/*
 * `mailgate search QUERY`: the query language on one backend; output {total, uids, mailboxes}.
 */

/**
 * Registers `search`.
 * @param {import('commander').Command} program
 * @param {import('../context').CliContext} ctx
 */
function register(program, ctx) {
  program
    .command('search')
    .description(
      'search with the query language (see README "Query language"); empty query matches all',
    )
    .argument(
      '[query...]',
      'e.g. \'from:alice "quarterly report" -is:read\' (words may also be given unquoted)',
    )
    // "-is:read" is a query term, not an option.
    .allowUnknownOption()
    .requiredOption('--user <user>')
    .option('--mailbox <name>')
    .addOption(
      new Option('--backend <backend>')
        .choices(['pg', 'es', 'mbox', 'maildir', 'imap'])
        .default('pg'),
    )
    .option('--json')
    .action(async (terms, o) => {
      const query = terms.join(' ');
      const result = legacy.LEGACY_BACKENDS.includes(o.backend)
        ? await searchLegacy(ctx, query, o)
        : await searchStore(ctx, query, o);
      ctx.out(o.json, result, (x) => {
        process.stdout.write(`${x.total} matching messages\n`);
        for (const m of x.mailboxes) process.stdout.write(`  ${m.mailbox}: ${m.uids.join(' ')}\n`);
      });
    });
}

// The flat-file paths answer from the files / the upstream server, not from the store.
async function searchLegacy(ctx, query, o) {
  const backend = legacy.openBackend(ctx.config.home, o.user, o.backend);
  try {
    const r = await backend.search(query, { mailbox: o.mailbox });
    return resultOf(
      r.total,
      r.hits.map((h) => [h.mailbox, h.uid]),
    );
  } finally {
    await legacy.closeBackends();
  }
}

async function searchStore(ctx, query, o) {
  return ctx.withStore(async (store) => {
    const user = await store.getUser(o.user);
    let mailboxId;
    if (o.mailbox) mailboxId = (await store.getMailbox(user.id, o.mailbox)).id;
    const r =
      o.backend === 'es'
        ? await searchEs(ctx.config, store, user.id, query, { mailboxId })
        : await store.search(user.id, query, { mailboxId });
    const boxes = await store.knex('mailboxes').where({ user_id: user.id }).select('id', 'name');
    const names = new Map(boxes.map((b) => [b.id, b.name]));
    return resultOf(
      r.total,
      r.hits.map((h) => [names.get(h.mailboxId), h.uid]),
    );
  });
}

function resultOf(total, hits) {
  const per = new Map();
  for (const [mailbox, uid] of hits) {
    if (!per.has(mailbox)) per.set(mailbox, []);
    per.get(mailbox).push(uid);
  }
  return {
    total,
    uids: hits.map((h) => h[1]),
    mailboxes: [...per].map(([mailbox, uids]) => ({ mailbox, uids })),
  };
}

module.exports = { register };
