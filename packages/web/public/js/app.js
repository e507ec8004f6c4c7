/*
 * The webmail page: wires sign-in, the mailbox list, the message list, search, the message
 * view and the backend switch to the API client. Everything it shows comes from /api/v1
 * (api.js); mail text only ever enters the DOM as text or inside the sandboxed frame of
 * message-view.js.
 */

import { Api, ApiError } from './api.js';
import './message-list.js';
import { renderMessage } from './message-view.js';
import { hintsFor } from './hints.js';

const api = new Api();
const $ = (id) => document.getElementById(id);

const state = {
  mailboxes: [],
  mailbox: null,
  /** null: a mailbox; a string: the search shown */
  query: null,
  /** a thread id when one thread's messages are shown */
  thread: null,
  /** true while the list shows a mailbox's threads (one row per thread) */
  threads: false,
  // Newest first by date (the Date header, else the received date): uid order is import
  // order, which jumps back and forth in time (issue 30.11).
  order: '-date',
  open: null,
};

// Exposed for the browser tests and the benchmark script (read-only use).
window.mailgate = { api, state, marks: [] };
function mark(name, detail) {
  performance.mark(name, { detail });
  window.mailgate.marks.push({ name, t: performance.now(), detail });
}

function status(text, isError = false) {
  const s = $('status');
  s.textContent = text;
  s.classList.toggle('error', isError);
}

function showError(err) {
  status(
    err instanceof ApiError ? `${err.code}: ${err.message}` : String(err.message || err),
    true,
  );
  if (err instanceof ApiError && err.status === 401) showSignIn();
}

// ---- sign-in ----
function showSignIn() {
  $('app').hidden = true;
  $('signin').hidden = false;
  $('signin').elements.user.focus();
}

$('signin').addEventListener('submit', async (e) => {
  e.preventDefault();
  const f = e.target.elements;
  $('signin-error').textContent = '';
  try {
    await api.signIn(f.user.value, f.password.value);
    f.password.value = '';
    await start();
  } catch (err) {
    $('signin-error').textContent =
      err instanceof ApiError ? `${err.code}: ${err.message}` : String(err);
  }
});

$('signout').addEventListener('click', async () => {
  await api.signOut().catch(() => {});
  location.hash = '';
  showSignIn();
});

// ---- timings: every answer's Server-Timing, per backend ----
api.onTiming((t) => {
  const server =
    Number.isFinite(t.serverMs) && t.serverMs > 0 ? `${t.serverMs.toFixed(1)} ms` : '–';
  const by =
    (t.answeredBy || 'no Server-Timing') +
    (t.answeredBy === t.backend ? '' : ` (asked ${t.backend})`);
  $('last-timing').textContent = `${by}: server ${server} · round trip ${t.totalMs.toFixed(0)} ms`;
  $('last-timing').title = `Server-Timing of the last answer (asked: backend ${t.backend})`;
  const li = document.createElement('li');
  li.textContent = `${t.method} ${decodeURIComponent(t.path)} [${t.backend}] ${t.status} · Server-Timing ${by} ${server} · ${t.totalMs.toFixed(0)} ms`;
  const list = $('timings');
  list.prepend(li);
  while (list.children.length > 30) list.lastChild.remove();
});

// ---- mailboxes ----
async function loadMailboxes() {
  const r = await api.mailboxes();
  state.mailboxes = r.mailboxes;
  const open = r.mailboxes.find((b) => b.name === state.mailbox);
  if (open && state.query === null && !state.threads && !state.thread) list.expect(open.total);
  const ul = $('mailboxes');
  ul.replaceChildren(
    ...r.mailboxes.map((b) => {
      const li = document.createElement('li');
      const a = document.createElement('a');
      a.href = `#mailbox=${encodeURIComponent(b.name)}`;
      a.dataset.mailbox = b.name;
      const name = document.createElement('span');
      name.className = 'mb-name';
      name.textContent = b.name;
      const count = document.createElement('span');
      count.className = 'mb-unseen';
      count.textContent = b.unseen ? String(b.unseen) : '';
      count.title = `${b.unseen} unread of ${b.total}`;
      a.append(name, count);
      if (b.name === state.mailbox && state.query === null) a.setAttribute('aria-current', 'true');
      li.append(a);
      return li;
    }),
  );
}

// ---- the list: a mailbox or a search ----
const list = $('list');

list.addEventListener('firstrows', (e) => {
  mark('mg:firstrows', e.detail);
  updateCount();
  // The frame after the one that paints the rows: when a person sees them.
  requestAnimationFrame(() => setTimeout(() => mark('mg:firstrows-shown', e.detail), 0));
});
list.addEventListener('complete', (e) => {
  mark('mg:complete', e.detail);
  updateCount();
});
list.addEventListener('progress', updateCount);
// Rows moved, expunged or added: the count follows at once (it lagged until a reload).
list.addEventListener('change', updateCount);
list.addEventListener('loaderror', (e) => showError(e.detail));
list.addEventListener('open', (e) =>
  e.detail.thread ? showThread(e.detail.thread) : openMessage(e.detail),
);

// 21,282: digits grouped by hand (the page is in English), not toLocaleString, whose first
// call loads the locale's number data on the way to the first rows.
const count = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

function updateCount() {
  const loaded = list.loaded;
  const total = list.reportedTotal;
  // The threads view lists threads, and says so.
  const unit = state.threads ? 'thread' : 'message';
  $('list-count').textContent =
    loaded < total
      ? `${count(loaded)} of ${count(total)} loaded`
      : `${count(total)} ${unit}${total === 1 ? '' : 's'}`;
  updateEmpty();
}

/**
 * A list with nothing in it says why, instead of a blank pane: a search with no hit, an empty
 * mailbox. Shown once the list is complete (never while pages are still arriving).
 */
function updateEmpty() {
  const box = $('list-empty');
  if (!list.complete || list.loaded > 0) {
    box.hidden = true;
    return;
  }
  if (state.query !== null) {
    const where = $('all-mailboxes').checked ? 'any mailbox' : state.mailbox;
    box.textContent = `No messages match “${state.query}” in ${where}.`;
  } else if (state.threads) {
    box.textContent = `No threads in ${state.mailbox}.`;
  } else {
    box.textContent = `${state.mailbox || 'This mailbox'} is empty.`;
  }
  box.hidden = false;
}

/** A thread as a list row: who took part, the first subject, the count, the last date. */
function threadRow(x, i) {
  return {
    uid: i + 1,
    thread: x.threadId,
    from: { name: x.from.join(', '), address: '' },
    subject: x.messages > 1 ? `${x.subject || '(no subject)'} (${x.messages})` : x.subject,
    date: x.lastDate,
    flags: x.unseen ? [] : ['\\Seen'],
    modseq: x.unseen,
  };
}

async function showThreads(name) {
  state.mailbox = name;
  state.query = null;
  state.thread = null;
  state.threads = true;
  $('list-title').textContent = `${name} · threads`;
  mark('mg:open-threads', { name });
  status('');
  $('list-empty').hidden = true;
  let offset = 0;
  try {
    await list.show({
      total: 0,
      fetchPage: async (cursor, limit) => {
        const r = await api.threads({ mailbox: name, cursor, limit });
        const rows = r.threads.map((x, i) => threadRow(x, offset + i));
        offset += rows.length;
        return { rows, nextCursor: r.nextCursor };
      },
    });
  } catch (err) {
    showError(err);
  }
}

async function showThread(id) {
  $('list-title').textContent = 'Thread';
  state.thread = id;
  state.threads = false;
  try {
    await list.show({
      total: 0,
      fetchPage: async () => {
        const r = await api.thread(id);
        return { rows: r.messages, nextCursor: null };
      },
    });
  } catch (err) {
    showError(err);
  }
}

async function showMailbox(name) {
  if ($('threads').checked) return showThreads(name);
  state.mailbox = name;
  state.query = null;
  state.thread = null;
  state.threads = false;
  $('q').value = '';
  $('list-title').textContent = name;
  $('list-title').title = name;
  for (const a of $('mailboxes').querySelectorAll('a')) {
    a.toggleAttribute('aria-current', a.dataset.mailbox === name);
  }
  const info = state.mailboxes.find((b) => b.name === name);
  mark('mg:open-mailbox', { name });
  status('');
  $('list-empty').hidden = true;
  try {
    await list.show({
      total: info ? info.total : 0,
      fetchPage: async (cursor, limit) => {
        const r = await api.messages(name, { order: state.order, cursor, limit });
        return { rows: r.messages, nextCursor: r.nextCursor, total: r.total };
      },
    });
  } catch (err) {
    showError(err);
  }
}

async function runSearch(q) {
  state.query = q;
  state.thread = null;
  state.threads = false;
  const all = $('all-mailboxes').checked;
  const mailbox = all ? undefined : state.mailbox;
  $('list-title').textContent = 'Search';
  $('list-title').title = `${q}${mailbox ? ` in ${mailbox}` : ''}`;
  for (const a of $('mailboxes').querySelectorAll('a')) a.removeAttribute('aria-current');
  mark('mg:search', { q });
  status('');
  $('list-empty').hidden = true;
  try {
    await list.show({
      total: 0,
      fetchPage: async (cursor, limit) => {
        const r = await api.search(q, { mailbox, cursor, limit, ...searchOrder() });
        const rows = r.messages.map((m) => ({ mailbox: m.mailbox || mailbox, ...m }));
        return { rows, nextCursor: r.nextCursor || null, total: r.total };
      },
    });
  } catch (err) {
    showError(err);
  }
}

// Search results in the list's order (the API sorts and pages them: `order`, `cursor`).
function searchOrder() {
  return { order: state.order };
}

function refreshList() {
  if (state.thread) return showThread(state.thread);
  if (state.query !== null) return runSearch(state.query);
  if (state.mailbox) return showMailbox(state.mailbox);
  return undefined;
}

$('threads').addEventListener('change', () => {
  if (state.mailbox) showMailbox(state.mailbox);
});

$('order').addEventListener('change', (e) => {
  state.order = e.target.value;
  refreshList();
});

// ---- search box with operator hints ----
const q = $('q');
function renderHints() {
  const { word, hints } = hintsFor(q.value);
  const box = $('hints');
  if (!hints.length || document.activeElement !== q) {
    box.hidden = true;
    return;
  }
  box.replaceChildren(
    ...hints.slice(0, 12).map((h) => {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'hint';
      const code = document.createElement('code');
      code.textContent = h.op;
      b.append(code, ` ${h.help}`);
      // mousedown, not click: the input keeps focus.
      b.addEventListener('mousedown', (e) => {
        e.preventDefault();
        if (h.op === '"…"') return;
        const stem = q.value.slice(0, q.value.length - word.length);
        q.value = stem + h.op + (h.op.endsWith(':') ? '' : ' ');
        renderHints();
      });
      return b;
    }),
  );
  box.hidden = false;
}
q.addEventListener('input', renderHints);
q.addEventListener('focus', renderHints);
q.addEventListener('blur', () => ($('hints').hidden = true));
$('search').addEventListener('submit', (e) => {
  e.preventDefault();
  $('hints').hidden = true;
  const text = q.value.trim();
  if (text) runSearch(text);
  else if (state.mailbox) showMailbox(state.mailbox);
});

// ---- the message view ----
async function openMessage(row, { images } = {}) {
  const mailbox = row.mailbox || state.mailbox;
  state.open = { mailbox, uid: row.uid };
  mark('mg:open-message', { mailbox, uid: row.uid });
  try {
    const m = await api.message(mailbox, row.uid, undefined, { images });
    if (!state.open || state.open.uid !== row.uid) return;
    paintMessage(mailbox, m, { remoteImages: images === 'remote' });
    if (!(m.flags || []).includes('\\Seen')) {
      // Opening marks read, as mail clients do; a backend that cannot store flags says so.
      api.setFlags(mailbox, [row.uid], ['\\Seen']).then(
        (r) => applyFlagChange(mailbox, r),
        () => {},
      );
    }
  } catch (err) {
    showError(err);
  }
}

function applyFlagChange(mailbox, r) {
  for (const c of (r && r.changed) || []) {
    list.update(c.uid, { flags: c.flags, keywords: c.keywords, modseq: c.modseq }, mailbox);
    if (state.open && state.open.uid === c.uid && state.open.message) {
      state.open.message.flags = c.flags;
    }
  }
  loadMailboxes().catch(() => {});
}

function paintMessage(mailbox, m, { remoteImages = false } = {}) {
  state.open = { mailbox, uid: m.uid, message: m, remoteImages };
  const toggle = async (flag) => {
    const has = (state.open.message.flags || []).includes(flag);
    try {
      const r = await api.setFlags(mailbox, [m.uid], has ? [] : [flag], has ? [flag] : []);
      applyFlagChange(mailbox, r);
      paintMessage(mailbox, state.open.message, { remoteImages: state.open.remoteImages });
      status(`${has ? 'Removed' : 'Set'} ${flag}`);
    } catch (err) {
      showError(err);
    }
  };
  const { raw } = renderMessage($('view'), m, {
    mailbox,
    mailboxes: state.mailboxes.map((b) => b.name),
    remoteImages,
    // The same message again with its remote images (the API's images=remote).
    onLoadImages: () => openMessage({ mailbox, uid: m.uid }, { images: 'remote' }),
    onFlag: () => toggle('\\Flagged'),
    onDelete: () => toggle('\\Deleted'),
    onMove: async (target) => {
      if (!target) return;
      try {
        await api.move(mailbox, [m.uid], target);
        list.remove([m.uid]);
        $('view').replaceChildren();
        status(`Moved to ${target}`);
        await loadMailboxes();
      } catch (err) {
        showError(err);
      }
    },
    onRaw: async () => {
      if (!raw.hidden) {
        raw.hidden = true;
        return;
      }
      try {
        raw.textContent = await api.raw(mailbox, m.uid);
        raw.hidden = false;
      } catch (err) {
        showError(err);
      }
    },
    onAttachment: async (a) => {
      try {
        const blob = await api.attachment(mailbox, m.uid, a.part);
        const url = URL.createObjectURL(blob);
        const link = document.createElement('a');
        link.href = url;
        link.download = a.filename || `part-${a.part}`;
        link.click();
        setTimeout(() => URL.revokeObjectURL(url), 10000);
        status(`Downloaded ${link.download}`);
      } catch (err) {
        showError(err);
      }
    },
  });
}

// Expunge removes for good: it asks first, naming how many of the loaded rows it takes.
$('expunge').addEventListener('click', () => {
  if (!state.mailbox || state.query !== null || state.threads || state.thread) {
    status('Expunge works on a mailbox: open one first');
    return;
  }
  const marked = list.rows.filter((r) => (r.flags || []).includes('\\Deleted')).length;
  $('expunge-question').textContent =
    `Remove ${marked} message${marked === 1 ? '' : 's'} marked deleted from ${state.mailbox} ` +
    'for good? This cannot be undone.';
  $('expunge-dialog').returnValue = '';
  $('expunge-dialog').showModal();
});

$('expunge-dialog').addEventListener('close', async () => {
  if ($('expunge-dialog').returnValue !== 'expunge') return;
  try {
    const r = await api.expunge(state.mailbox);
    list.remove(r.expunged);
    if (state.open && r.expunged.includes(state.open.uid)) $('view').replaceChildren();
    status(`Expunged ${r.expunged.length} message(s)`);
    await loadMailboxes();
  } catch (err) {
    showError(err);
  }
});

// ---- the backend switch ----
$('backend').addEventListener('change', (e) => {
  api.backend = e.target.value;
  mark('mg:backend', { backend: api.backend });
  $('view').replaceChildren();
  refreshList();
});

// "The same answer": the question on screen (first page of the mailbox, or the search), asked
// of every backend; the uids are compared with pg's.
$('compare').addEventListener('click', async () => {
  const dialog = $('compare-dialog');
  const rows = $('compare-rows');
  rows.replaceChildren();
  const question =
    state.query !== null
      ? `search ${JSON.stringify(state.query)}`
      : `first 50 headers of ${state.mailbox} (${state.order})`;
  $('compare-question').textContent = question;
  dialog.showModal();
  let reference = null;
  for (const option of $('backend').options) {
    const be = option.value;
    const tr = document.createElement('tr');
    tr.dataset.backend = be;
    const cells = [be, '…', '', '', ''].map((text) => {
      const td = document.createElement('td');
      td.textContent = text;
      tr.append(td);
      return td;
    });
    rows.append(tr);
    let seen = null;
    const off = (t) => (seen = t);
    api.listeners.add(off);
    try {
      const r =
        state.query !== null
          ? await api.search(state.query, {
              mailbox: $('all-mailboxes').checked ? undefined : state.mailbox,
              limit: 50,
              ...searchOrder(),
              backend: be,
            })
          : await api.messages(state.mailbox, { order: state.order, limit: 50, backend: be });
      const uids = r.messages.map((m) => `${m.mailbox || ''}/${m.uid}`).join(',');
      if (be === 'pg') reference = uids;
      cells[1].textContent =
        typeof r.total === 'number' ? `${r.total} matches` : `${r.messages.length} rows`;
      cells[2].textContent = reference === null ? '' : uids === reference ? 'yes' : 'no';
      tr.dataset.same = String(uids === reference);
    } catch (err) {
      cells[1].textContent = err instanceof ApiError ? err.code : String(err);
      tr.dataset.same = 'error';
    } finally {
      api.listeners.delete(off);
    }
    if (seen) {
      cells[3].textContent = seen.answeredBy
        ? `${seen.answeredBy} ${seen.serverMs.toFixed(1)} ms`
        : '–';
      tr.dataset.answeredBy = seen.answeredBy || '';
      cells[4].textContent = `${seen.totalMs.toFixed(0)} ms`;
    }
  }
});

// ---- routing: #mailbox=NAME ----
function route() {
  const m = /^#mailbox=(.+)$/.exec(location.hash);
  const name = m ? decodeURIComponent(m[1]) : null;
  const known = (n) => state.mailboxes.some((b) => b.name === n);
  const target =
    name && known(name)
      ? name
      : (state.mailboxes.find((b) => b.name === 'INBOX') || state.mailboxes[0] || {}).name;
  if (target && (target !== state.mailbox || state.query !== null)) showMailbox(target);
}
window.addEventListener('hashchange', route);

async function start() {
  // A one-time sign-in link (`npm run demo`) carries its token in the fragment, which never
  // reaches a server or a log; it is traded once for a session token and leaves the address bar.
  const link = /(?:^#|&)link=([^&]+)/.exec(location.hash);
  if (link) {
    history.replaceState(null, '', location.pathname);
    try {
      await api.redeemLink(decodeURIComponent(link[1]));
    } catch (err) {
      showSignIn();
      $('signin-error').textContent =
        `This sign-in link was used already or has expired (${err.code || err.message}).`;
      return undefined;
    }
  }
  if (!api.signedIn) return showSignIn();
  $('signin').hidden = true;
  $('app').hidden = false;
  // The list's first page is asked for together with the mailbox list, not after it: the
  // first rows are what a person waits for.
  const m = /^#mailbox=(.+)$/.exec(location.hash);
  const first = m ? decodeURIComponent(m[1]) : 'INBOX';
  showMailbox(first);
  try {
    await loadMailboxes();
    if (!state.mailboxes.some((b) => b.name === first)) route();
  } catch (err) {
    showError(err);
  }
}

start();
