'use strict';

const { Readable } = require('node:stream');
const { parseForDisplay, getAttachment } = require('@mailgate/mime');
const { errors } = require('./errors');
const { errorsFor, headerProps, mailboxName, uid, backend, flag } = require('./schemas');
const { serverTiming } = require('./app-helpers');
const { searchEs } = require('@mailgate/es');
const { loadConfig } = require('@mailgate/core');
const legacy = require('@mailgate/legacy');

/*
 * The routes of the brief's "HTTP API" (prefix /api/v1). Every data route names its
 * mailbox by the caller's own mailboxes only: another user's mailbox or message is simply
 * not found (404), so its existence does not leak.
 */

const MAX_LIMIT = 1000;
const NDJSON = 'application/x-ndjson';

/**
 * @param {import('fastify').FastifyInstance} app
 * @param {{ctx: object}} opts
 */
async function routes(app, { ctx }) {
  const { store, purger, timed, limiter } = ctx;
  const user = { auth: 'user' };
  const security = [{ bearer: [] }];

  const mailboxOf = (req) =>
    timed(req, () => store.getMailbox(req.user.userId, req.params.mailbox));
  const pgOnly = (b) => {
    if (b && b !== 'pg') throw new errors.BACKEND_UNAVAILABLE(b);
  };
  // backend=mbox|maildir|imap: the flat-file paths of @mailgate/legacy, found per user in
  // $MAILGATE_HOME/legacy.json (400 LEGACY_NOT_CONFIGURED when the user has none); null for
  // pg/es. Their mailboxes are named, not looked up in PostgreSQL.
  const legacyHome = ctx.home || loadConfig().home;
  const legacyOf = (req, b) =>
    legacy.LEGACY_BACKENDS.includes(b) ? legacy.openBackend(legacyHome, req.user.user, b) : null;
  app.addHook('onClose', () => legacy.closeBackends());

  // ---- health ----
  app.get(
    '/health',
    {
      config: { auth: 'none' },
      schema: {
        tags: ['health'],
        summary: 'Liveness and PostgreSQL reachability',
        security: [],
        response: {
          200: {
            type: 'object',
            properties: { status: { type: 'string' }, db: { type: 'string' } },
          },
          ...errorsFor(503),
        },
      },
    },
    async (req) => {
      await timed(req, () => store.knex.raw('SELECT 1'));
      return { status: 'ok', db: 'ok' };
    },
  );

  // ---- session ----
  app.post(
    '/session',
    {
      config: { auth: 'none' },
      schema: {
        tags: ['auth'],
        summary: 'Log in: exchange user name and password for a bearer token',
        security: [],
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['user', 'password'],
          properties: {
            user: { type: 'string', minLength: 1, maxLength: 128 },
            password: { type: 'string', minLength: 1, maxLength: 1024 },
          },
        },
        response: {
          201: {
            type: 'object',
            properties: { token: { type: 'string' }, expiresAt: { type: 'string' } },
          },
          ...errorsFor(400, 401, 429, 503),
        },
      },
    },
    async (req, reply) => {
      const { user: name, password } = req.body;
      const keys = [`ip:${req.ip}`, `ip:${req.ip}|user:${name}`];
      const wait = Math.max(...keys.map((k) => limiter.blockedFor(k)));
      if (wait) {
        const err = new errors.TOO_MANY_ATTEMPTS(wait);
        err.retryAfter = wait;
        throw err;
      }
      const row = await timed(req, () =>
        store.knex('users').where({ name }).first('id', 'password_hash'),
      );
      const ok = await ctx.verifyLogin(password, row && row.password_hash);
      if (!row || !ok) {
        keys.forEach((k) => limiter.fail(k));
        req.log.info({ event: 'login-failed' }, 'failed login');
        throw new errors.INVALID_CREDENTIALS();
      }
      limiter.clear(keys[1]);
      const t = await timed(req, () =>
        store.createToken(row.id, { ttlSeconds: ctx.tokenTtlSeconds, label: 'session' }),
      );
      reply.code(201);
      return { token: t.token, expiresAt: t.expiresAt };
    },
  );

  app.delete(
    '/session',
    {
      config: user,
      schema: {
        tags: ['auth'],
        summary: 'Log out: revoke the bearer token of this request',
        security,
        response: { 204: { type: 'null', description: 'Revoked' }, ...errorsFor(401, 503) },
      },
    },
    async (req, reply) => {
      await timed(req, () => store.revokeToken(req.user.userId, req.user.tokenId));
      reply.code(204).send();
    },
  );

  // ---- users (admin token) ----
  app.post(
    '/users',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'Create a user (admin token)',
        security,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['name', 'password'],
          properties: {
            name: { type: 'string', pattern: '^[A-Za-z0-9._@+-]{1,128}$' },
            password: { type: 'string', minLength: 8, maxLength: 1024 },
          },
        },
        response: {
          201: {
            type: 'object',
            properties: { id: { type: 'integer' }, name: { type: 'string' } },
          },
          ...errorsFor(400, 401, 403, 503),
          409: { $ref: 'Error#', description: 'User exists' },
        },
      },
    },
    async (req, reply) => {
      const passwordHash = await ctx.hashPassword(req.body.password);
      const u = await timed(req, () => store.createUser(req.body.name, { passwordHash }));
      reply.code(201);
      return { id: u.id, name: u.name };
    },
  );

  app.post(
    '/users/:user/tokens',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'Create a bearer token for a user (admin token)',
        security,
        params: {
          type: 'object',
          properties: { user: { type: 'string', pattern: '^[A-Za-z0-9._@+-]{1,128}$' } },
        },
        body: {
          type: ['object', 'null'],
          additionalProperties: false,
          properties: { ttlSeconds: { type: 'integer', minimum: 60, maximum: 10 * 365 * 86400 } },
        },
        response: {
          201: {
            type: 'object',
            properties: { token: { type: 'string' }, expiresAt: { type: 'string' } },
          },
          ...errorsFor(400, 401, 403, 404, 503),
        },
      },
    },
    async (req, reply) => {
      const u = await timed(req, () => store.getUser(req.params.user));
      const t = await timed(req, () =>
        store.createToken(u.id, {
          ttlSeconds: (req.body && req.body.ttlSeconds) || ctx.tokenTtlSeconds,
          label: 'admin',
        }),
      );
      reply.code(201);
      return { token: t.token, expiresAt: t.expiresAt };
    },
  );

  // ---- mailboxes ----
  app.get(
    '/mailboxes',
    {
      config: user,
      schema: {
        tags: ['mail'],
        summary: 'Mailboxes with total and unseen counts',
        security,
        response: {
          200: {
            type: 'object',
            properties: {
              mailboxes: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    name: { type: 'string' },
                    total: { type: 'integer' },
                    unseen: { type: 'integer' },
                    uidvalidity: { type: 'integer' },
                    uidnext: { type: 'integer' },
                    highestModseq: { type: 'integer' },
                    specialUse: { type: ['string', 'null'] },
                  },
                },
              },
            },
          },
          ...errorsFor(401, 503),
        },
      },
    },
    async (req) => {
      const list = await timed(req, () => store.listMailboxes(req.user.userId));
      return {
        mailboxes: list.map((b) => ({ ...b, highestModseq: b.highestmodseq })),
      };
    },
  );

  const mailboxParams = {
    type: 'object',
    required: ['mailbox'],
    properties: { mailbox: mailboxName },
  };
  const messageParams = {
    type: 'object',
    required: ['mailbox', 'uid'],
    properties: { mailbox: mailboxName, uid },
  };

  // ---- header scan ----
  app.get(
    '/mailboxes/:mailbox/messages',
    {
      config: user,
      schema: {
        tags: ['mail'],
        summary: 'Header rows, keyset-paged; Accept: application/x-ndjson streams the mailbox',
        description:
          'Pages follow `nextCursor`. With `Accept: application/x-ndjson` the whole mailbox is ' +
          'streamed, one header row per line, in `order` (limit and cursor are ignored).',
        security,
        params: mailboxParams,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: 50 },
            cursor: { type: 'string', minLength: 1, maxLength: 512 },
            order: { type: 'string', enum: ['uid', '-uid', 'date', '-date'], default: 'uid' },
            backend,
          },
        },
        response: {
          200: {
            type: 'object',
            properties: {
              messages: { type: 'array', items: { $ref: 'HeaderRow#' } },
              nextCursor: { type: ['string', 'null'] },
            },
          },
          ...errorsFor(400, 401, 404, 503),
        },
      },
    },
    async (req, reply) => {
      const lb = legacyOf(req, req.query.backend);
      if (!lb) pgOnly(req.query.backend);
      const { order: orderParam, limit } = req.query;
      const desc = orderParam.startsWith('-');
      const order = desc ? orderParam.slice(1) : orderParam;
      if (lb) {
        const name = req.params.mailbox;
        if (wantsNdjson(req)) {
          const body = await timed(req, () => primed(lb.streamHeadersNdjson(name)));
          reply.header('Server-Timing', serverTiming(req.backendMs));
          reply.type(`${NDJSON}; charset=utf-8`);
          return reply.send(body);
        }
        const after = req.query.cursor ? decodeCursor(req.query.cursor, orderParam) : null;
        const page = await timed(req, () => lb.scanPage(name, { limit, order, desc, after }));
        return {
          messages: page.rows,
          nextCursor: page.next ? encodeCursor(orderParam, page.next) : null,
        };
      }
      const mb = await mailboxOf(req);
      if (wantsNdjson(req)) {
        const stream = store.streamHeadersNdjson(req.user.userId, mb.id, { order, desc });
        // Wait for the first batch so that a database error is still a proper JSON error,
        // and so Server-Timing (a header) can carry the time to the first rows.
        const body = await timed(req, () => primed(stream));
        reply.header('Server-Timing', serverTiming(req.backendMs));
        reply.type(`${NDJSON}; charset=utf-8`);
        return reply.send(body);
      }
      const after = req.query.cursor ? decodeCursor(req.query.cursor, orderParam) : null;
      const page = await timed(req, () =>
        store.scanPage(req.user.userId, mb.id, { limit, order, desc, after }),
      );
      return {
        messages: page.rows,
        nextCursor: page.next ? encodeCursor(orderParam, page.next) : null,
      };
    },
  );

  // ---- one message ----
  const loadMessage = async (req) => {
    const mb = await mailboxOf(req);
    const m = await timed(req, () => store.getMessage(req.user.userId, mb.id, req.params.uid));
    if (!m) throw new errors.MESSAGE_NOT_FOUND(String(req.params.uid));
    return { mb, m };
  };

  const addressList = { type: 'array', items: { $ref: 'Address#' } };
  app.get(
    '/mailboxes/:mailbox/messages/:uid',
    {
      config: user,
      schema: {
        tags: ['mail'],
        summary: 'One message: headers, text, sanitized HTML, attachment list',
        security,
        params: messageParams,
        response: {
          200: {
            type: 'object',
            properties: {
              mailbox: { type: 'string' },
              ...headerProps,
              headers: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: { name: { type: 'string' }, value: { type: 'string' } },
                },
              },
              to: addressList,
              cc: addressList,
              text: { type: 'string' },
              html: { type: ['string', 'null'], description: 'sanitized; remote images kept' },
              attachments: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    part: { type: 'string' },
                    contentType: { type: 'string' },
                    filename: { type: ['string', 'null'] },
                    size: { type: 'integer' },
                    contentId: { type: ['string', 'null'] },
                  },
                },
              },
            },
          },
          ...errorsFor(400, 401, 404, 503),
        },
      },
    },
    async (req) => {
      const { mb, m } = await loadMessage(req);
      const d = await parseForDisplay(m.raw);
      return {
        mailbox: mb.name,
        ...m.header,
        headers: d.headers.map((h) => ({ name: h.key, value: h.value })),
        subject: d.subject,
        from: d.from || m.header.from,
        to: d.to,
        cc: d.cc,
        date: d.date ? d.date.toISOString() : m.header.date,
        messageId: d.messageId,
        text: d.text,
        html: d.html,
        attachments: d.attachments,
      };
    },
  );

  app.get(
    '/mailboxes/:mailbox/messages/:uid/raw',
    {
      config: user,
      schema: {
        tags: ['mail'],
        summary: 'The message exactly as stored (message/rfc822)',
        security,
        params: messageParams,
        produces: ['message/rfc822'],
        response: {
          200: { description: 'raw RFC 5322 bytes', type: 'string', format: 'binary' },
          ...errorsFor(400, 401, 404, 503),
        },
      },
    },
    async (req, reply) => {
      const { m } = await loadMessage(req);
      reply
        .type('message/rfc822')
        .header('Content-Disposition', `attachment; filename="message-${m.header.uid}.eml"`)
        .header('X-Content-Type-Options', 'nosniff');
      return reply.send(m.raw);
    },
  );

  app.get(
    '/mailboxes/:mailbox/messages/:uid/attachments/:part',
    {
      config: user,
      schema: {
        tags: ['mail'],
        summary: 'One MIME part, decoded, with its content type and file name',
        security,
        params: {
          type: 'object',
          required: ['mailbox', 'uid', 'part'],
          properties: {
            mailbox: mailboxName,
            uid,
            part: {
              type: 'string',
              pattern: '^[0-9]{1,4}(\\.[0-9]{1,4}){0,49}(\\.uu[0-9]{1,4})?$',
            },
          },
        },
        response: {
          200: { description: 'the decoded part', type: 'string', format: 'binary' },
          ...errorsFor(400, 401, 404, 503),
        },
      },
    },
    async (req, reply) => {
      const { m } = await loadMessage(req);
      const a = getAttachment(m.raw, req.params.part);
      if (!a) throw new errors.ATTACHMENT_NOT_FOUND(req.params.part);
      // Always a download, never rendered in the API's origin: hostile HTML or SVG in an
      // attachment cannot script against the API.
      reply
        .type(safeContentType(a.contentType))
        .header('Content-Disposition', contentDisposition(a.filename, req.params.part))
        .header('X-Content-Type-Options', 'nosniff')
        .header('Content-Security-Policy', "default-src 'none'; sandbox");
      return reply.send(a.content);
    },
  );

  // ---- search ----
  app.get(
    '/search',
    {
      config: user,
      schema: {
        tags: ['mail'],
        summary: 'Search with the query language (README "Query language")',
        security,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            q: { type: 'string', maxLength: 4096, default: '' },
            mailbox: mailboxName,
            limit: { type: 'integer', minimum: 0, maximum: MAX_LIMIT, default: 50 },
            backend,
          },
        },
        response: {
          200: {
            type: 'object',
            properties: {
              total: { type: 'integer' },
              mailboxes: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    mailbox: { type: 'string' },
                    uids: { type: 'array', items: { type: 'integer' } },
                  },
                },
              },
              messages: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: { mailbox: { type: 'string' }, ...headerProps },
                },
              },
            },
          },
          ...errorsFor(400, 401, 404, 503),
        },
      },
    },
    async (req) => {
      const lb = legacyOf(req, req.query.backend);
      if (lb) {
        const r = await timed(req, () =>
          lb.search(req.query.q, {
            mailbox: req.query.mailbox,
            withRows: true,
            rowLimit: req.query.limit,
          }),
        );
        const per = new Map();
        for (const h of r.hits) per.set(h.mailbox, [...(per.get(h.mailbox) || []), h.uid]);
        return {
          total: r.total,
          mailboxes: [...per].map(([mailbox, uids]) => ({ mailbox, uids })),
          messages: r.rows,
        };
      }
      const useEs = req.query.backend === 'es' && ctx.mirror;
      if (!useEs) pgOnly(req.query.backend);
      const userId = req.user.userId;
      let mailboxId;
      if (req.query.mailbox) {
        mailboxId = (await timed(req, () => store.getMailbox(userId, req.query.mailbox))).id;
      }
      // backend=es: ES answers, uids are resolved against PostgreSQL (@mailgate/es searchEs).
      const r = await timed(req, () =>
        useEs
          ? searchEs(ctx.mirror, userId, req.query.q, { mailboxId })
          : store.search(userId, req.query.q, { mailboxId }),
      );
      const boxes = await timed(req, () =>
        store.knex('mailboxes').where({ user_id: userId }).select('id', 'name'),
      );
      const names = new Map(boxes.map((b) => [b.id, b.name]));
      const per = new Map();
      for (const h of r.hits) {
        if (!per.has(h.mailboxId)) per.set(h.mailboxId, []);
        per.get(h.mailboxId).push(h.uid);
      }
      const rows = await timed(req, () =>
        store.headersFor(userId, r.hits.slice(0, req.query.limit)),
      );
      return {
        total: r.total,
        mailboxes: [...per].map(([id, uids]) => ({ mailbox: names.get(id), uids })),
        messages: rows.map((row) => ({ mailbox: names.get(row.mailboxId), ...row })),
      };
    },
  );

  // ---- flags ----
  app.post(
    '/mailboxes/:mailbox/flags',
    {
      config: user,
      schema: {
        tags: ['mail'],
        summary: 'Add and remove flags/keywords on messages chosen by uids or by a query',
        security,
        params: mailboxParams,
        body: {
          type: 'object',
          additionalProperties: false,
          properties: {
            uids: { type: 'array', items: uid, minItems: 1, maxItems: 10000 },
            q: { type: 'string', maxLength: 4096 },
            add: { type: 'array', items: flag, maxItems: 50, default: [] },
            remove: { type: 'array', items: flag, maxItems: 50, default: [] },
          },
          oneOf: [{ required: ['uids'] }, { required: ['q'] }],
        },
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { backend },
        },
        response: {
          200: {
            type: 'object',
            properties: {
              matched: { type: 'integer' },
              changed: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    uid: { type: 'integer' },
                    flags: { type: 'array', items: { type: 'string' } },
                    keywords: { type: 'array', items: { type: 'string' } },
                    modseq: { type: 'integer' },
                  },
                },
              },
              highestModseq: { type: 'integer' },
            },
          },
          ...errorsFor(400, 401, 404, 503),
        },
      },
    },
    async (req) => {
      const { uids, q, add, remove } = req.body;
      if (!add.length && !remove.length) {
        throw new errors.INVALID_INPUT('body must name flags to add or remove');
      }
      const lb = legacyOf(req, req.query.backend);
      if (lb)
        return timed(req, () => lb.setFlags(req.params.mailbox, { uids, query: q, add, remove }));
      pgOnly(req.query.backend);
      const mb = await mailboxOf(req);
      return timed(req, () =>
        store.setFlags(req.user.userId, mb.id, { uids, query: q, add, remove }),
      );
    },
  );

  // ---- expunge ----
  app.post(
    '/mailboxes/:mailbox/expunge',
    {
      config: user,
      schema: {
        tags: ['mail'],
        summary: 'Expunge messages flagged \\Deleted (optionally only these uids)',
        description:
          'Two-phase: the messages disappear from every answer at once; their rows are ' +
          'purged in the background.',
        security,
        params: mailboxParams,
        body: {
          type: ['object', 'null'],
          additionalProperties: false,
          properties: { uids: { type: 'array', items: uid, minItems: 1, maxItems: 100000 } },
        },
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { backend },
        },
        response: {
          200: {
            type: 'object',
            properties: {
              expunged: { type: 'array', items: { type: 'integer' } },
              highestModseq: { type: 'integer' },
            },
          },
          ...errorsFor(400, 401, 404, 503),
        },
      },
    },
    async (req) => {
      const uids = req.body ? req.body.uids : undefined;
      const lb = legacyOf(req, req.query.backend);
      if (lb) return timed(req, () => lb.expunge(req.params.mailbox, { uids }));
      pgOnly(req.query.backend);
      const mb = await mailboxOf(req);
      const r = await timed(req, () => store.expunge(req.user.userId, mb.id, { uids }));
      if (r.expunged.length) purger.schedule(req.user.userId, mb.id);
      return r;
    },
  );
}

function wantsNdjson(req) {
  const a = req.headers.accept;
  return typeof a === 'string' && a.toLowerCase().includes(NDJSON);
}

/**
 * Reads the first chunk (opening the cursor), then returns a stream that replays it followed
 * by the rest. Destroying the returned stream (client gone) destroys the source, which closes
 * the cursor and returns the connection to the pool.
 */
async function primed(source) {
  const it = source[Symbol.asyncIterator]();
  const first = await it.next();
  async function* rest() {
    try {
      if (!first.done) yield first.value;
      for (;;) {
        const n = await it.next();
        if (n.done) return;
        yield n.value;
      }
    } finally {
      if (!source.destroyed) source.destroy();
    }
  }
  return Readable.from(rest(), { objectMode: false });
}

/**
 * Cursors are opaque to clients: base64url JSON of the order and the keyset position.
 * @param {string} order
 * @param {{uid: number, date: string}} pos
 */
function encodeCursor(order, pos) {
  const o = { o: order, u: pos.uid };
  if (order.endsWith('date')) o.d = pos.date;
  return Buffer.from(JSON.stringify(o)).toString('base64url');
}

const SORT_DATE_RE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
function decodeCursor(text, order) {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) throw new errors.INVALID_CURSOR('not a cursor');
  let c;
  try {
    c = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw new errors.INVALID_CURSOR('not a cursor');
  }
  if (!c || typeof c !== 'object' || c.o !== order) {
    throw new errors.INVALID_CURSOR('it belongs to another order; start again without a cursor');
  }
  if (!Number.isSafeInteger(c.u) || c.u < 0) throw new errors.INVALID_CURSOR('bad position');
  if (order.endsWith('date') && !(typeof c.d === 'string' && SORT_DATE_RE.test(c.d))) {
    throw new errors.INVALID_CURSOR('bad position');
  }
  return { uid: c.u, date: c.d };
}

function safeContentType(t) {
  return typeof t === 'string' && /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/i.test(t)
    ? t.toLowerCase()
    : 'application/octet-stream';
}

/** RFC 6266: an ASCII fallback plus filename* for the exact (UTF-8) name. */
function contentDisposition(filename, part) {
  const name = filename || `part-${part}`;
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const star = encodeURIComponent(name).replace(
    /['()*]/g,
    (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${star}`;
}

module.exports = routes;
module.exports.contentDisposition = contentDisposition;
