'use strict';

const { loadConfig } = require('./config');
const { errors, isCoded } = require('./errors');
const { createLogger } = require('./logger');
const { EmbeddedPostgres } = require('./embedded-pg');
const { openDatabase, MIGRATIONS_DIR } = require('./db');
const { createProgress } = require('./progress');
const { hashPassword, verifyPassword } = require('./passwords');
const { LoginLimiter, LOGIN_LIMIT_DEFAULTS } = require('./login-limiter');
const { onShutdown } = require('./shutdown');
const { upstreamSecurity, UPSTREAM_SECURITY } = require('./upstream-security');

module.exports = {
  loadConfig,
  errors,
  isCoded,
  createLogger,
  EmbeddedPostgres,
  openDatabase,
  MIGRATIONS_DIR,
  createProgress,
  hashPassword,
  verifyPassword,
  LoginLimiter,
  LOGIN_LIMIT_DEFAULTS,
  onShutdown,
  upstreamSecurity,
  UPSTREAM_SECURITY,
};
