/*
 * <mg-message-list>: a virtualised list of header rows. Only the rows in view (plus a small
 * margin) exist in the DOM, as a fixed pool of elements that are moved and refilled on
 * scroll, so a 21,282-row mailbox costs the same to scroll as a 50-row one. Rows arrive in
 * keyset pages (the API's `nextCursor`), loaded one after the other in the background from
 * the first page on; rows not loaded yet show as placeholders. Owns no data access: the page
 * hands it a `fetchPage(cursor, limit)` function.
 */

const ROW_HEIGHT = 46;
const OVERSCAN = 8;
const FIRST_PAGE = 60;
// Background pages of 500 rows (~0.5 MB of JSON): decoding and parsing one stays a short
// task even on a slow CPU (1,000-row pages made 150-340 ms tasks at 4x CPU throttling while
// scrolling), without multiplying the requests for 21,282 rows.
const NEXT_PAGES = 500;

/** "Jane Doe" from an address object, or its address. */
export function fromText(from) {
  if (!from) return '(no sender)';
  return from.name || from.address || '(no sender)';
}

// Formatters built once: toLocale*String builds a new one per call, which is what made
// scrolling through thousands of rows produce long tasks. Built on first use, not when the
// module loads: the first Intl formatter loads the locale's data (tens of ms on the start-up
// path), and a mailbox of older mail never needs them.
let TIME = null;
let DAY_MONTH = null;

/** A short date for a list row: time today, day + month this year, else the full date. */
export function shortDate(iso, now = new Date()) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  if (d.getFullYear() !== now.getFullYear()) return d.toISOString().slice(0, 10);
  if (d.toDateString() === now.toDateString()) {
    TIME ||= new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
    return TIME.format(d);
  }
  DAY_MONTH ||= new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short' });
  return DAY_MONTH.format(d);
}

export class MessageList extends HTMLElement {
  connectedCallback() {
    if (this.viewport) return;
    this.setAttribute('role', 'listbox');
    this.tabIndex = 0;
    this.viewport = document.createElement('div');
    this.viewport.className = 'ml-viewport';
    this.spacer = document.createElement('div');
    this.spacer.className = 'ml-spacer';
    this.viewport.append(this.spacer);
    this.append(this.viewport);
    this.pool = [];
    this.rows = [];
    this.total = 0;
    this.selected = null;
    this.generation = 0;
    this.frame = 0;
    this.spacerHeight = -1;
    // The viewport's height comes from the ResizeObserver, never read in render(): the scroll
    // path reads scrollTop only (no forced layout; the viewport is `contain: strict`).
    this.viewportHeight = 0;
    this.viewport.addEventListener('scroll', () => this.schedule(), { passive: true });
    this.addEventListener('keydown', (e) => this.onKey(e));
    new ResizeObserver((entries) => {
      this.viewportHeight = entries[entries.length - 1].contentRect.height;
      this.schedule();
    }).observe(this.viewport);
  }

  /** Number of rows loaded so far. */
  get loaded() {
    return this.rows.length;
  }

  /** The server's count of matches (search answers may hold fewer rows than that). */
  get reportedTotal() {
    return this.reported === null ? this.total : Math.max(this.reported, this.total);
  }

  /** True once every page has arrived. */
  get complete() {
    return this.done === true;
  }

  /**
   * Shows a new list. `fetchPage(cursor, limit)` resolves to `{rows, nextCursor, total?}`.
   * Resolves when the first page is shown; the rest keeps loading in the background.
   * @param {{total?: number, fetchPage: Function}} source
   */
  async show(source) {
    const gen = ++this.generation;
    this.rows = [];
    this.reported = null;
    this.done = false;
    this.selected = null;
    this.total = source.total || 0;
    this.viewport.scrollTop = 0;
    this.render();
    const first = await source.fetchPage(null, FIRST_PAGE);
    if (gen !== this.generation) return;
    this.accept(first);
    this.dispatchEvent(new CustomEvent('firstrows', { detail: { rows: this.rows.length } }));
    this.loadRest(gen, source, first.nextCursor);
  }

  async loadRest(gen, source, cursor) {
    try {
      while (cursor && gen === this.generation) {
        const page = await source.fetchPage(cursor, NEXT_PAGES);
        if (gen !== this.generation) return;
        this.accept(page);
        cursor = page.nextCursor;
        this.dispatchEvent(new CustomEvent('progress', { detail: { rows: this.rows.length } }));
      }
      if (gen !== this.generation) return;
      this.done = true;
      // The count is now exact even if the mailbox changed while we were reading.
      this.total = this.rows.length;
      this.render();
      this.dispatchEvent(new CustomEvent('complete', { detail: { rows: this.rows.length } }));
    } catch (err) {
      if (gen === this.generation) {
        this.dispatchEvent(new CustomEvent('loaderror', { detail: err }));
      }
    }
  }

  /** The number of rows to expect (from the mailbox list) while pages are still arriving. */
  expect(total) {
    if (this.done || !(total > this.total)) return;
    this.total = total;
    this.render();
    this.dispatchEvent(new CustomEvent('change', { detail: { total } }));
  }

  accept(page) {
    for (const r of page.rows) this.rows.push(r);
    if (typeof page.total === 'number') {
      this.total = page.total;
      this.reported = page.total;
    }
    if (!page.nextCursor) this.total = this.rows.length;
    this.total = Math.max(this.total, this.rows.length);
    this.render();
  }

  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  }

  render() {
    if (!this.viewport) return;
    // Reads first, then writes: a style write before a layout read would force a layout.
    const top = this.viewport.scrollTop;
    const height = this.viewportHeight || 900;
    if (this.spacerHeight !== this.total) {
      this.spacerHeight = this.total;
      this.spacer.style.height = `${this.total * ROW_HEIGHT}px`;
    }
    const first = Math.max(0, Math.floor(top / ROW_HEIGHT) - OVERSCAN);
    const last = Math.min(this.total, Math.ceil((top + height) / ROW_HEIGHT) + OVERSCAN);
    const need = last - first;
    while (this.pool.length < need) this.pool.push(this.makeRow());
    for (let i = 0; i < this.pool.length; i++) {
      const el = this.pool[i];
      const index = first + i;
      if (index >= last) {
        el.hidden = true;
        delete el.dataset.uid;
        delete el.dataset.key;
        continue;
      }
      el.hidden = false;
      this.fill(el, index);
    }
  }

  makeRow() {
    const el = document.createElement('div');
    el.className = 'ml-row';
    el.setAttribute('role', 'option');
    // Minimal DOM per row, built once per pooled element and refilled as text: four spans,
    // the subject's <b> and the preview's text node.
    el.innerHTML =
      '<span class="ml-flags"></span><span class="ml-from"></span><span class="ml-date"></span>' +
      '<span class="ml-subject"><b></b></span>';
    el.lastChild.append(document.createTextNode(''));
    el.addEventListener('click', () => {
      const row = this.rows[Number(el.dataset.index)];
      if (row) this.select(row);
    });
    this.viewport.append(el);
    return el;
  }

  fill(el, index) {
    el.style.transform = `translateY(${index * ROW_HEIGHT}px)`;
    el.dataset.index = String(index);
    const row = this.rows[index];
    const key = row ? `${row.mailbox || ''}/${row.uid}/${row.modseq}` : 'loading';
    if (el.dataset.key === key && el.dataset.sel === String(this.isSelected(row))) return;
    el.dataset.key = key;
    el.dataset.sel = String(this.isSelected(row));
    const [flagsEl, fromEl, dateEl, subjectEl] = el.children;
    if (!row) {
      el.className = 'ml-row ml-placeholder';
      delete el.dataset.uid;
      flagsEl.textContent = '';
      fromEl.textContent = 'loading…';
      dateEl.textContent = '';
      subjectEl.firstChild.textContent = '';
      subjectEl.lastChild.data = '';
      return;
    }
    const flags = row.flags || [];
    el.className =
      'ml-row' +
      (flags.includes('\\Seen') ? '' : ' ml-unread') +
      (flags.includes('\\Deleted') ? ' ml-deleted' : '') +
      (this.isSelected(row) ? ' ml-selected' : '');
    el.dataset.uid = String(row.uid);
    el.setAttribute('aria-selected', String(this.isSelected(row)));
    flagsEl.textContent =
      (flags.includes('\\Flagged') ? '★' : '') + (row.hasAttachments ? ' att' : '');
    flagsEl.title = row.hasAttachments ? 'has attachments' : '';
    fromEl.textContent = fromText(row.from);
    dateEl.textContent = shortDate(row.date || row.internalDate);
    subjectEl.firstChild.textContent = row.subject || '(no subject)';
    subjectEl.lastChild.data = row.preview ? ` — ${row.preview}` : '';
    subjectEl.title = row.mailbox || '';
  }

  isSelected(row) {
    return Boolean(
      row &&
      this.selected &&
      row.uid === this.selected.uid &&
      row.mailbox === this.selected.mailbox,
    );
  }

  select(row) {
    this.selected = row;
    for (const el of this.pool) delete el.dataset.sel;
    this.render();
    this.dispatchEvent(new CustomEvent('open', { detail: row }));
  }

  /** Replaces a row's fields (flags after a change), if it is loaded. */
  update(uid, patch, mailbox) {
    const row = this.rows.find(
      (r) => r.uid === uid && (!mailbox || !r.mailbox || r.mailbox === mailbox),
    );
    if (row) Object.assign(row, patch);
    this.render();
  }

  /** Drops rows (moved or expunged); a `change` event tells the count to follow. */
  remove(uids) {
    const gone = new Set(uids);
    const before = this.rows.length;
    this.rows = this.rows.filter((r) => !gone.has(r.uid));
    const removed = before - this.rows.length;
    this.total = Math.max(this.rows.length, this.total - removed);
    // The server's count too: reportedTotal is the larger of the two, so a stale one kept
    // showing the old number (issue 30.12).
    if (this.reported !== null) this.reported = Math.max(0, this.reported - removed);
    if (this.selected && gone.has(this.selected.uid)) this.selected = null;
    this.render();
    this.dispatchEvent(new CustomEvent('change', { detail: { removed } }));
  }

  /** Scrolls so that row `index` is in view. */
  reveal(index) {
    const top = index * ROW_HEIGHT;
    const vp = this.viewport;
    if (top < vp.scrollTop) vp.scrollTop = top;
    else if (top + ROW_HEIGHT > vp.scrollTop + vp.clientHeight) {
      vp.scrollTop = top + ROW_HEIGHT - vp.clientHeight;
    }
  }

  onKey(e) {
    if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp' && e.key !== 'j' && e.key !== 'k') return;
    e.preventDefault();
    const cur = this.selected ? this.rows.findIndex((r) => this.isSelected(r)) : -1;
    const down = e.key === 'ArrowDown' || e.key === 'j';
    const next = Math.max(0, Math.min(this.rows.length - 1, cur + (down ? 1 : -1)));
    if (this.rows[next]) {
      this.reveal(next);
      this.select(this.rows[next]);
    }
  }
}

customElements.define('mg-message-list', MessageList);
