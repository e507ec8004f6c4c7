'use strict';

const { errors } = require('@mailgate/core');
const schemas = require('../schemas/append');

/*
 * Append: a raw RFC 5322 message into one of the caller's mailboxes, through the mail service
 * (which derives its header row as an import does). The body is read as bytes, never as text,
 * so 8-bit and CRLF content is stored exactly as sent.
 */

// Drafts carry attachments; other routes keep the app's 1 MB body limit.
const APPEND_LIMIT = 25 * 1024 * 1024;

async function appendRoutes(app) {
  app.addContentTypeParser(
    'message/rfc822',
    { parseAs: 'buffer', bodyLimit: APPEND_LIMIT },
    (req, body, done) => done(null, body),
  );
  app.post(
    '/mailboxes/:mailbox/messages',
    { config: { auth: 'user' }, schema: schemas.append, bodyLimit: APPEND_LIMIT },
    async (req, reply) => {
      if (!Buffer.isBuffer(req.body) || !req.body.length) {
        throw new errors.INVALID_INPUT(
          'the body must be the message (Content-Type: message/rfc822)',
        );
      }
      const be = await app.backendOf(req);
      const r = await app.timed(req, () =>
        be.append(req.params.mailbox, req.body, {
          flags: req.query.flags,
          internalDate: req.query.internalDate,
        }),
      );
      reply.code(201);
      return r;
    },
  );
}

module.exports = appendRoutes;
