'use strict';

const fp = require('fastify-plugin');
const { errors } = require('@mailgate/core');

/*
 * Strict integers in the URL. Ajv's type coercion reads query and path strings with
 * JavaScript's Number(), which accepts `0x10` (16), `1e3` (1000), `+5`, ` 5` and `` (0):
 * a client typo would silently address another message or page. Before validation, every
 * integer-typed query or path parameter must be plain decimal digits (an optional minus);
 * the schema then checks the range.
 */

const DECIMAL = /^-?[0-9]+$/;

/** Names of the top-level integer properties of a params/querystring schema. */
function integerFields(schema) {
  if (!schema || !schema.properties) return [];
  return Object.entries(schema.properties)
    .filter(
      ([, s]) =>
        s && (s.type === 'integer' || (Array.isArray(s.type) && s.type.includes('integer'))),
    )
    .map(([name]) => name);
}

async function paramsPlugin(app) {
  app.addHook('onRoute', (route) => {
    const schema = route.schema || {};
    const checks = [
      ['params', integerFields(schema.params)],
      ['query', integerFields(schema.querystring)],
    ].filter(([, names]) => names.length);
    if (!checks.length) return;
    const strictIntegers = async (req) => {
      for (const [where, names] of checks) {
        for (const name of names) {
          const v = req[where] && req[where][name];
          if (v === undefined || typeof v === 'number') continue;
          if (typeof v !== 'string' || !DECIMAL.test(v)) {
            throw new errors.INVALID_PARAMETER(`${name} must be a decimal integer`);
          }
        }
      }
    };
    const before = route.preValidation;
    route.preValidation = [...(before ? [].concat(before) : []), strictIntegers];
  });
}

module.exports = fp(paramsPlugin, { name: 'mailgate-params', fastify: '5.x' });
