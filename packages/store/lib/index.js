'use strict';

const { PgStore } = require('./pg-store');

Object.assign(PgStore.prototype, require('./mail-ops').mailOps, require('./tokens').tokenOps);

module.exports = { PgStore };
