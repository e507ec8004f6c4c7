'use strict';

const { parseForDisplay, getAttachment } = require('@mailgate/mime');
const { errors } = require('@mailgate/core');
const schemas = require('../schemas/messages');
const { safeContentType, contentDisposition } = require('../download');

/*
 * One message: the rendered view (headers, text, sanitised HTML, attachment list), the raw
 * bytes, and one decoded part. Downloads are always attachments (see download.js).
 */
async function messageRoutes(app) {
  const user = { auth: 'user' };

  const loadMessage = async (req) => {
    const mb = await app.mailboxOf(req);
    const m = await app.timed(req, () =>
      app.store.getMessage(req.user.userId, mb.id, req.params.uid),
    );
    if (!m) throw new errors.MESSAGE_NOT_FOUND(String(req.params.uid));
    return { mb, m };
  };

  app.get(
    '/mailboxes/:mailbox/messages/:uid',
    { config: user, schema: schemas.view },
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
    { config: user, schema: schemas.raw },
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
    { config: user, schema: schemas.attachment },
    async (req, reply) => {
      const { m } = await loadMessage(req);
      const a = getAttachment(m.raw, req.params.part);
      if (!a) throw new errors.ATTACHMENT_NOT_FOUND(req.params.part);
      reply
        .type(safeContentType(a.contentType))
        .header('Content-Disposition', contentDisposition(a.filename, req.params.part))
        .header('X-Content-Type-Options', 'nosniff')
        .header('Content-Security-Policy', "default-src 'none'; sandbox");
      return reply.send(a.content);
    },
  );
}

module.exports = messageRoutes;
