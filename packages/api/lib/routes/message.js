'use strict';

const { renderMessage, getAttachment } = require('@mailgate/mime');
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

  // Rendering runs in @mailgate/mime's worker threads within the parse budget: a hostile
  // message costs bounded time there and never blocks this event loop (issue 17.3).
  const render = async (req, mb, m) => {
    const base = `/api/v1/mailboxes/${encodeURIComponent(mb.name)}/messages/${m.header.uid}`;
    try {
      return await renderMessage(m.raw, {
        images: req.query.images === 'remote' ? 'remote' : 'blocked',
        attachmentUrl: `${base}/attachments/`,
      });
    } catch (err) {
      if (err.name !== 'MessageParseError') throw err;
      throw new errors.MESSAGE_NOT_RENDERABLE(String(m.header.uid), err.reason);
    }
  };

  app.get(
    '/mailboxes/:mailbox/messages/:uid',
    { config: user, schema: schemas.view },
    async (req) => {
      const { mb, m } = await loadMessage(req);
      const d = await render(req, mb, m);
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
        truncated: d.truncated,
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
