'use strict';

const { loadPageFiles } = require('@mailgate/web');

/*
 * The webmail page (@mailgate/web) at `/`: a fixed set of static files read once at start,
 * each served with a strict Content-Security-Policy. This plugin only serves those bytes; it
 * never reads a path from the URL, so nothing outside the page's files can be reached.
 */

// The page's policy: its own scripts only (no inline script, no eval), API calls to its own
// origin, no plugins, no framing by others. Inline styles stay allowed because mail HTML in
// the sandboxed srcdoc frame inherits this policy and carries its styling inline; the frame
// adds its own `default-src 'none'` and has no script permission. Remote images: the frame
// inherits this policy and both apply, so http(s) images are allowed here and the frame's own
// policy blocks them until the reader chooses "Load remote images" (the page's own DOM never
// holds mail HTML; mail text is set as text).
const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob: https: http:",
  "connect-src 'self'",
  "frame-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

/**
 * Fastify plugin serving the page. GET `/` is index.html; every other file under its own path
 * (`/js/app.js`, `/bench.html` …). Hidden from the OpenAPI document (not part of the API).
 * @param {import('fastify').FastifyInstance} app
 * @param {{files?: ReturnType<typeof loadPageFiles>}} opts
 */
async function webPage(app, opts) {
  const files = opts.files || loadPageFiles();
  const send = (file) => async (req, reply) => {
    reply
      .header('Content-Security-Policy', PAGE_CSP)
      .header('X-Content-Type-Options', 'nosniff')
      .header('Referrer-Policy', 'no-referrer')
      // The HTML is revalidated on every load (cheap: ETag), so a new version shows at once;
      // the scripts and styles it names live under a per-version path (/v/<version>/…) that
      // never changes content, so a browser keeps them without asking again.
      .header('Cache-Control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
      .header('ETag', file.etag)
      .type(file.type);
    if (req.headers['if-none-match'] === file.etag) return reply.code(304).send();
    return reply.send(file.body);
  };
  const options = { config: { auth: 'none' }, schema: { hide: true } };
  for (const [urlPath, file] of files) {
    app.get(urlPath, options, send(file));
    if (urlPath === '/index.html') app.get('/', options, send(file));
  }
}

module.exports = webPage;
module.exports.PAGE_CSP = PAGE_CSP;
