'use strict';

/*
 * @mailgate/api: the webmail HTTP API. build() makes the app without listening (tests,
 * bench); startServer() is `mailgate serve`'s entry (database, listen, graceful shutdown).
 */
const { build } = require('./app');
const { startServer, API_DB } = require('./server');

module.exports = { build, startServer, API_DB };
