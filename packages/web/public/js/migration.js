/*
 * The migration view (issue 33): the whole-server migration's figures from
 * GET /api/v1/migration (admin token, kept in this tab's sessionStorage only), refreshed every
 * two seconds while the tab is open. Builds every element with DOM calls (values are text).
 */

const POLL_MS = 2000;
const KEY = 'mailgate.adminToken';

function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) e.setAttribute(k, v);
  for (const c of children) if (c !== null && c !== undefined) e.append(String(c));
  return e;
}

const mb = (b) => `${(b / 1048576).toFixed(1)} MB`;
const eta = (s) =>
  s === null || s === undefined
    ? '?'
    : s >= 3600
      ? `${(s / 3600).toFixed(1)} h`
      : s >= 60
        ? `${Math.round(s / 60)} min`
        : `${s} s`;

function table(node, head, rows) {
  node.replaceChildren(el('thead', {}), el('tbody', {}));
  node.tHead.append(tr('th', head));
  for (const r of rows) node.tBodies[0].append(r);
}

function tr(cell, values, classes = []) {
  const row = document.createElement('tr');
  values.forEach((v, i) => row.append(el(cell, classes[i] ? { class: classes[i] } : {}, v)));
  return row;
}

function render(x) {
  const f = x.fleet;
  const tiles = [
    ['accounts', f.accounts],
    ['queued', f.queued],
    ['running', f.running],
    ['verified', f.verified],
    ['cutover', f.cutover, 'cut over'],
    ['failed', f.failed],
    ['messages', f.messages],
    ['bytes', mb(f.bytes), 'data'],
    ['rate', `${f.rate} msg/s`],
    ['eta', eta(f.etaSeconds), 'ETA'],
  ];
  document.getElementById('fleet').replaceChildren(
    ...tiles.map(([k, v, label]) => {
      const t = el('div', { class: `tile ${k}`, 'data-figure': k });
      t.append(el('b', {}, v), label || k);
      return t;
    }),
  );
  table(
    document.getElementById('running'),
    ['account', 'upstream', 'worker', 'messages', 'of', 'msg/s', 'ETA'],
    x.running.map((a) =>
      tr('td', [
        a.user,
        a.upstream,
        a.worker || '',
        a.messages,
        a.upstreamMessages ?? '?',
        a.rate,
        eta(a.etaSeconds),
      ]),
    ),
  );
  table(
    document.getElementById('failures'),
    ['account', 'upstream', 'attempts', 'reason'],
    x.failures.map((a) => tr('td', [a.user, a.upstream, a.attempts, `${a.code}: ${a.message}`])),
  );
  table(
    document.getElementById('accounts'),
    ['account', 'state', 'route', 'messages', 'upstream', 'data', 'attempts', 'seconds'],
    x.accounts.map((a) =>
      tr(
        'td',
        [
          a.user,
          a.state === 'cutover' ? 'cut over' : a.state,
          a.route,
          a.messages,
          a.upstreamMessages ?? '?',
          mb(a.bytes),
          a.attempts,
          a.seconds === null ? '' : Math.round(a.seconds),
        ],
        [null, `state-${a.state}`],
      ),
    ),
  );
  document.getElementById('updated').textContent = `as of ${new Date(x.at).toLocaleTimeString()}`;
}

let timer = null;

async function refresh() {
  const token = sessionStorage.getItem(KEY);
  const error = document.getElementById('error');
  if (!token) return;
  try {
    const r = await fetch('/api/v1/migration', { headers: { authorization: `Bearer ${token}` } });
    const body = await r.json();
    if (!r.ok) throw new Error(`${body.error.code}: ${body.error.message}`);
    error.textContent = '';
    document.getElementById('view').hidden = false;
    render(body);
  } catch (err) {
    error.textContent = err.message;
  } finally {
    clearTimeout(timer);
    timer = setTimeout(refresh, POLL_MS);
  }
}

document.getElementById('token-form').addEventListener('submit', (e) => {
  e.preventDefault();
  sessionStorage.setItem(KEY, document.getElementById('token').value);
  refresh();
});
refresh();
