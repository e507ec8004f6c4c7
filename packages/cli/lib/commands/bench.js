'use strict';

const { addBenchCommand } = require('@mailgate/bench');

/*
 * `mailgate bench`: the 2003 study reproduced; its options live with the harness in
 * @mailgate/bench, which registers them.
 */

/**
 * Registers `bench`.
 * @param {import('commander').Command} program
 * @param {import('../context').CliContext} ctx
 */
function register(program, ctx) {
  addBenchCommand(program, { config: ctx.config, out: ctx.out });
}

module.exports = { register };
