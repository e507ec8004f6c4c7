'use strict';

// ENABLE (RFC 5161) of CONDSTORE and QRESYNC (RFC 7162 3.2.3: QRESYNC implies CONDSTORE).
const { atom } = require('../protocol/writer');
const { atomArg } = require('../protocol/args');
const { bad } = require('../errors');

const KNOWN = new Set(['CONDSTORE', 'QRESYNC']);

module.exports = {
  name: 'ENABLE',
  states: ['auth'],
  async run(s, cmd) {
    if (!cmd.args.length) throw bad('ENABLE needs a capability');
    const now = [];
    for (const t of cmd.args) {
      const cap = atomArg(t, 'capability');
      if (!KNOWN.has(cap) || s.enabled.has(cap)) continue;
      s.enabled.add(cap);
      now.push(cap);
      if (cap === 'QRESYNC' && !s.enabled.has('CONDSTORE')) s.enabled.add('CONDSTORE');
    }
    if (s.enabled.has('CONDSTORE')) s.condstore = true;
    s.untagged([atom('ENABLED'), ...now.map(atom)]);
  },
};
