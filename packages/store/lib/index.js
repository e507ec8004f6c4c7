'use strict';

const { PgStore } = require('./pg-store');

module.exports = { PgStore };
