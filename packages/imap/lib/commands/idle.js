'use strict';

// IDLE (RFC 2177): changes are pushed while the client waits; DONE ends it. Detection is
// shared per mailbox (../watcher.js); the session's autologout timer still runs, so an IDLE
// left for 30 minutes is logged out (RFC 2177 asks clients to re-issue it every 29).
const { arity } = require('../protocol/args');
const { bad } = require('../errors');

module.exports = {
  name: 'IDLE',
  states: ['auth', 'selected'],
  async run(s, cmd) {
    arity(cmd, 0);
    if (s.view) await s.sync();
    s.send(Buffer.from('+ idling\r\n'));
    let wake = null;
    let pending = false;
    // A change that arrives while the session is syncing is kept for the next turn, not lost
    // until the fallback poll.
    const kick = () => {
      if (wake) wake();
      else pending = true;
    };
    const v = s.view;
    const onStatus = (st) => {
      const moved =
        Number(st.uidnext) > v.uidnext ||
        Number(st.highestModseq) > v.modseq ||
        Number(st.total) !== v.total;
      if (moved) kick();
    };
    const stop = v ? s.server.watcher.watch(s.user, v.name, s.backend, onStatus) : () => {};
    s.idleStop = kick;
    const line = s.readLine();
    let done = null;
    line.then((l) => {
      done = { line: l };
      kick();
    });
    try {
      while (!done && !s.closed) {
        if (!pending) {
          await new Promise((resolve) => {
            wake = resolve;
          });
        }
        wake = null;
        pending = false;
        if (!done && s.view && !s.closed) await s.sync();
      }
    } finally {
      stop();
      s.idleStop = null;
    }
    if (!done || done.line === null) return { answered: true };
    if (done.line.trim().toUpperCase() !== 'DONE') throw bad('Expected DONE');
    return { text: 'IDLE terminated' };
  },
};
