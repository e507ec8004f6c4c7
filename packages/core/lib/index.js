'use strict';

const { loadConfig } = require('./config');
const { errors, isCoded } = require('./errors');
const { createLogger } = require('./logger');
const { createProgress } = require('./progress');
const {
  checkPassword,
  hashPassword,
  verifyPassword,
  PASSWORD_MIN_LENGTH,
  PASSWORD_MAX_LENGTH,
  scryptParams,
} = require('./passwords');
const { LoginLimiter, LOGIN_LIMIT_DEFAULTS } = require('./login-limiter');
const { onShutdown } = require('./shutdown');
const { upstreamSecurity, UPSTREAM_SECURITY } = require('./upstream-security');
const {
  canonicalMailboxName,
  checkMailboxName,
  mailboxNameProblem,
  MAILBOX_NAME_MAX_LENGTH,
} = require('./mailbox-name');

module.exports = {
  loadConfig,
  errors,
  isCoded,
  createLogger,
  createProgress,
  checkPassword,
  hashPassword,
  verifyPassword,
  PASSWORD_MIN_LENGTH,
  PASSWORD_MAX_LENGTH,
  scryptParams,
  LoginLimiter,
  LOGIN_LIMIT_DEFAULTS,
  onShutdown,
  upstreamSecurity,
  UPSTREAM_SECURITY,
  canonicalMailboxName,
  checkMailboxName,
  mailboxNameProblem,
  MAILBOX_NAME_MAX_LENGTH,
};
