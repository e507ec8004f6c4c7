'use strict';

const { build } = require('./app');
const { startServer } = require('./server');

module.exports = { build, startServer };
