'use strict';

/*
 * How the CLI tests read its one error path (issue 11): `CODE: message` on stderr without a
 * stack trace, and with --json exactly one {"error":{code,message}} object on stdout. Shared by
 * cli-errors.test.js and cli-new-user.test.js so both hold the CLI to the same shape.
 */

/** A line of a Node stack trace ("    at fn (file:1:2)"). */
const STACK = /^\s+at .+\(?.*:\d+:\d+\)?$/m;

/**
 * stdout must be exactly one JSON object: the error, with a code and a message only.
 * @param {{stdout: string}} r a finished CLI run
 * @returns {{code: string, message: string}}
 */
function onlyError(r) {
  const lines = r.stdout.split('\n').filter(Boolean);
  expect(lines).toHaveLength(1);
  const obj = JSON.parse(lines[0]);
  expect(Object.keys(obj)).toEqual(['error']);
  expect(Object.keys(obj.error).sort()).toEqual(['code', 'message']);
  return obj.error;
}

module.exports = { STACK, onlyError };
