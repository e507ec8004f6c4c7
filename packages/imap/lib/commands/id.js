'use strict';

// ID (RFC 2971): the client's fields are accepted (bounded, logged at debug); ours answered.
const { atom } = require('../protocol/writer');
const { arity } = require('../protocol/args');
const { bad } = require('../errors');

module.exports = {
  name: 'ID',
  states: ['notauth', 'auth', 'selected'],
  async run(s, cmd) {
    arity(cmd, 1);
    const a = cmd.args[0];
    const isNil = a.type === 'atom' && a.value.toUpperCase() === 'NIL';
    if (!isNil && (a.type !== 'list' || a.value.length > 60 || a.value.length % 2)) {
      throw bad('Invalid ID parameters');
    }
    s.untagged([atom('ID'), ['name', 'mailgate', 'vendor', 'mailgate']]);
  },
};
