/*
 * Operator hints for the search box: the query language of @mailgate/query (README "Query
 * language"), offered as the user types. Pure data plus one matching function.
 */

export const OPERATORS = [
  { op: 'from:', help: 'sender contains (from:alice, from:enron.com)' },
  { op: 'to:', help: 'recipient contains' },
  { op: 'cc:', help: 'Cc contains' },
  { op: 'subject:', help: 'subject contains (subject:"quarterly report")' },
  { op: 'body:', help: 'body text contains' },
  { op: 'text:', help: 'headers or body contain' },
  { op: 'has:attachment', help: 'messages with attachments' },
  { op: 'is:unread', help: 'not seen yet' },
  { op: 'is:read', help: 'seen' },
  { op: 'is:flagged', help: 'flagged' },
  { op: 'is:deleted', help: 'marked deleted (not expunged yet)' },
  { op: 'is:answered', help: 'answered' },
  { op: 'is:draft', help: 'drafts' },
  { op: 'before:', help: 'Date header before a day (before:2001-12-31)' },
  { op: 'after:', help: 'Date header after a day' },
  { op: 'on:', help: 'Date header on a day (on:2001-10-23)' },
  { op: 'larger:', help: 'size above (larger:100k)' },
  { op: 'smaller:', help: 'size below (smaller:2M)' },
  { op: 'in:', help: 'in one mailbox (in:INBOX)' },
  { op: 'OR', help: 'either side (from:a OR from:b)' },
  { op: '-', help: 'negation (-is:read)' },
  { op: '"…"', help: 'a phrase' },
];

/**
 * The hints that fit the word being typed at the end of `text` (all of them for an empty word).
 * @param {string} text
 * @returns {{word: string, hints: typeof OPERATORS}}
 */
export function hintsFor(text) {
  const m = /(?:^|\s)-?([^\s]*)$/.exec(text);
  const word = m ? m[1] : '';
  if (word.includes(':') && !word.endsWith(':')) return { word, hints: [] };
  const w = word.toLowerCase();
  const hints = OPERATORS.filter((o) => o.op.toLowerCase().startsWith(w) && o.op !== word);
  return { word, hints: w ? hints : OPERATORS };
}
