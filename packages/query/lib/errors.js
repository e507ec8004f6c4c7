'use strict';

/**
 * The one error this package throws for bad input. It mirrors the INVALID_QUERY entry of the
 * @mailgate/core error catalogue (same code, same status, same message prefix) without
 * depending on it, so the API maps it to a 400 and shows the message to the user as is.
 */
class QueryError extends Error {
  /**
   * @param {string} problem what is wrong, written for the user
   * @param {number} [position] 0-based offset into the query string, when known
   */
  constructor(problem, position) {
    const where = Number.isInteger(position) ? ` at position ${position}` : '';
    super(`Invalid query: ${problem}${where}`);
    this.name = 'QueryError';
    this.code = 'INVALID_QUERY';
    this.statusCode = 400;
    this.problem = problem;
    this.position = Number.isInteger(position) ? position : null;
  }
}

module.exports = { QueryError };
