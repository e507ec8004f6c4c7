'use strict';

/*
 * Every test file of the suite runs under the one-statement-at-a-time guard (pg-serial.js):
 * a statement sent to a PostgreSQL connection still executing another fails the test it
 * happens in, wherever it comes from (jest.config.js setupFilesAfterEnv; the Citus variant
 * inherits it).
 */

const { guardPgClients } = require('./pg-serial');

guardPgClients();
