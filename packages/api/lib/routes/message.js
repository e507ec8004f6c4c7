'use strict';

const schemas = require('../schemas/messages');
const { safeContentType, contentDisposition } = require('../download');

/*
 * One message on any backend (`backend=`): the rendered view (headers, text, sanitised HTML,
 * attachment list), the raw bytes, and one decoded part. Rendering is the backend's
 * getMessage, which runs @mailgate/mime's renderer in worker threads within the parse
 * budget (issue 17.3): a hostile message costs bounded time there, never this event loop,
 * and one over the budget is 422 MESSAGE_NOT_RENDERABLE. Downloads are always attachments
 * (see download.js).
 */
async function messageRoutes(app) {
  const user = { auth: 'user' };
  const backendOf = (req) => app.backendOf(req, req.query.backend);

  app.get(
    '/mailboxes/:mailbox/messages/:uid',
    { config: user, schema: schemas.view },
    async (req) => {
      const { mailbox, uid } = req.params;
      const be = await backendOf(req);
      const base = `/api/v1/mailboxes/${encodeURIComponent(mailbox)}/messages/${uid}`;
      const m = await app.timed(req, () =>
        be.getMessage(mailbox, uid, {
          images: req.query.images,
          attachmentUrl: `${base}/attachments/`,
        }),
      );
      const { row, ...view } = m;
      return { mailbox, ...row, ...view };
    },
  );

  app.get(
    '/mailboxes/:mailbox/messages/:uid/raw',
    { config: user, schema: schemas.raw },
    async (req, reply) => {
      const { mailbox, uid } = req.params;
      const be = await backendOf(req);
      const raw = await app.timed(req, () => be.getRaw(mailbox, uid));
      reply
        .type('message/rfc822')
        .header('Content-Disposition', `attachment; filename="message-${uid}.eml"`)
        .header('X-Content-Type-Options', 'nosniff');
      return reply.send(raw);
    },
  );

  app.get(
    '/mailboxes/:mailbox/messages/:uid/attachments/:part',
    { config: user, schema: schemas.attachment },
    async (req, reply) => {
      const { mailbox, uid, part } = req.params;
      const be = await backendOf(req);
      const a = await app.timed(req, () => be.getAttachment(mailbox, uid, part));
      reply
        .type(safeContentType(a.contentType))
        .header('Content-Disposition', contentDisposition(a.filename, part))
        .header('X-Content-Type-Options', 'nosniff')
        .header('Content-Security-Policy', "default-src 'none'; sandbox");
      return reply.send(a.content);
    },
  );
}

module.exports = messageRoutes;
