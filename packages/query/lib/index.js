'use strict';

/**
 * @mailgate/query — the one query language of mailgate: parsed once into an AST, compiled per
 * backend (PostgreSQL SQL and an in-memory predicate here; Elasticsearch and IMAP SEARCH
 * elsewhere compile the same AST). See README.md for syntax, AST and semantics.
 */

const { QueryError } = require('./errors');
const { parse } = require('./parse');
const { toString } = require('./to-string');
const { compileSql, likeEscape } = require('./sql');
const { compilePredicate } = require('./predicate');
const { compileImap } = require('./imap');
const { tokenize } = require('./tokenize');
const { validate, mailboxesIn, LIMITS } = require('./ast');

module.exports = {
  parse,
  toString,
  compileSql,
  compilePredicate,
  compileImap,
  likeEscape,
  tokenize,
  validate,
  mailboxesIn,
  QueryError,
  LIMITS,
};
