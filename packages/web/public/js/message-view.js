/*
 * The message view: headers, body, attachments, raw source. Mail content only ever reaches
 * the page as text (textContent) or inside a sandboxed iframe: the HTML body (already
 * sanitised by the API) goes into `<iframe sandbox srcdoc>` without `allow-scripts` and
 * without `allow-same-origin`, behind its own Content-Security-Policy (`default-src 'none'`)
 * and the page's (no inline script). A script that survived sanitising still cannot run, and
 * even if it did it would have an opaque origin: no token, no API, no page DOM.
 */

import { fromText } from './message-list.js';

const FRAME_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:; form-action 'none'";
// Remote images, once the reader asked for them ("Load remote images"): http(s) images only,
// everything else as above.
const FRAME_CSP_REMOTE_IMAGES = FRAME_CSP.replace('img-src data:', 'img-src data: https: http:');

function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null) e.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

function addresses(list) {
  return (list || []).map((a) => (a.name ? `${a.name} <${a.address}>` : a.address)).join(', ');
}

function humanSize(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} kB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * The srcdoc of the HTML body's frame: its own CSP first, links open outside the frame.
 * `remoteImages`: the reader chose to load the message's remote images.
 * Links stay in the text's flow whatever the mail says (the API's sanitiser already drops
 * their sizing; this holds for HTML that never went through it, issue 29.8).
 */
export function frameDocument(html, { remoteImages = false } = {}) {
  const csp = remoteImages ? FRAME_CSP_REMOTE_IMAGES : FRAME_CSP;
  return (
    '<!doctype html><html><head><meta charset="utf-8">' +
    `<meta http-equiv="Content-Security-Policy" content="${csp}">` +
    '<base target="_blank"><style>body{font:14px/1.45 system-ui,sans-serif;margin:12px;' +
    'color:#222;word-wrap:break-word}img{max-width:100%}' +
    'a{position:static!important;float:none!important}</style></head><body>' +
    html +
    '</body></html>'
  );
}

/**
 * Renders message `m` (API answer) into `root`; `actions` are the toolbar's callbacks.
 * @param {HTMLElement} root
 * @param {object} m
 * @param {{mailboxes: string[], mailbox: string, onFlag: Function, onDelete: Function,
 *   onMove: Function, onRaw: Function, onAttachment: Function, onLoadImages?: Function,
 *   remoteImages?: boolean}} actions
 *   remoteImages: `m` was fetched with its remote images (the frame may load them)
 */
export function renderMessage(root, m, actions) {
  const flagged = (m.flags || []).includes('\\Flagged');
  const deleted = (m.flags || []).includes('\\Deleted');
  const others = actions.mailboxes.filter((n) => n !== actions.mailbox);
  const target = el(
    'select',
    { id: 'move-target', 'aria-label': 'Move to' },
    ...others.map((n) => el('option', { value: n }, n)),
  );
  const toolbar = el(
    'div',
    { class: 'toolbar' },
    el(
      'button',
      { type: 'button', id: 'flag', 'aria-pressed': String(flagged), onclick: actions.onFlag },
      flagged ? '★ Unflag' : '☆ Flag',
    ),
    el(
      'button',
      { type: 'button', id: 'delete', onclick: actions.onDelete },
      deleted ? 'Undelete' : 'Delete',
    ),
    others.length ? target : '',
    others.length
      ? el(
          'button',
          { type: 'button', id: 'move', onclick: () => actions.onMove(target.value) },
          'Move',
        )
      : '',
    el('button', { type: 'button', id: 'show-raw', onclick: actions.onRaw }, 'Raw source'),
    // The API blocks remote images (tracking pixels) and keeps their URLs in
    // data-blocked-src; loading them is the reader's choice, per message.
    !actions.remoteImages && actions.onLoadImages && /\sdata-blocked-src=/.test(m.html || '')
      ? el(
          'button',
          { type: 'button', id: 'load-images', onclick: actions.onLoadImages },
          'Load remote images',
        )
      : '',
  );
  const head = el(
    'dl',
    { class: 'headers' },
    el('dt', {}, 'From'),
    el('dd', { class: 'from' }, m.from ? addresses([m.from]) : fromText(null)),
    el('dt', {}, 'To'),
    el('dd', {}, addresses(m.to)),
    m.cc && m.cc.length ? el('dt', {}, 'Cc') : null,
    m.cc && m.cc.length ? el('dd', {}, addresses(m.cc)) : null,
    el('dt', {}, 'Date'),
    el('dd', {}, m.date ? new Date(m.date).toLocaleString() : ''),
  );
  const atts = (m.attachments || []).length
    ? el(
        'ul',
        { class: 'attachments' },
        ...m.attachments.map((a) =>
          el(
            'li',
            {},
            el(
              'button',
              {
                type: 'button',
                class: 'attachment',
                'data-part': a.part,
                onclick: () => actions.onAttachment(a),
              },
              `Download ${a.filename || `part ${a.part}`}`,
            ),
            ` ${a.contentType}, ${humanSize(a.size || 0)}`,
          ),
        ),
      )
    : null;
  let body;
  if (m.html) {
    body = el('iframe', {
      class: 'body-html',
      title: 'Message body',
      // Empty-ish sandbox: no scripts, no same-origin, no forms; links may open a new tab.
      sandbox: 'allow-popups allow-popups-to-escape-sandbox',
      referrerpolicy: 'no-referrer',
    });
    body.srcdoc = frameDocument(m.html, { remoteImages: Boolean(actions.remoteImages) });
  } else {
    body = el('pre', { class: 'body-text' });
    body.textContent = m.text || '';
  }
  const raw = el('pre', { class: 'raw', id: 'raw', hidden: '' });
  const parts = [toolbar, el('h2', { class: 'subject' }, m.subject || '(no subject)'), head];
  if (atts) parts.push(atts);
  root.replaceChildren(...parts, body, raw);
  return { raw };
}
