'use strict';

const { runImport } = require('./import');
const { verifyImap } = require('./imap-verify');

/*
 * Moving one account from its upstream IMAP server into the store, for `mailgate migrate` and
 * its background form at the first proxied login (`--on-login`):
 *   1. import: `import imap` on the account — resumable, incremental (a re-run fetches only new
 *      mail and refreshes flags), keeping UIDVALIDITY and UIDs, and mirroring what the user
 *      deleted upstream (through the proxy) since the last run;
 *   2. verify: per folder, every upstream message stored with its size, counts and bytes equal;
 *      when mail arrived meanwhile, one more import pass, then verify again; for a user on
 *      `proxy`, whose mail may be relayed upstream meanwhile, these passes run under the
 *      user's delivery hold (store holdDeliveries: new mail answered 451, relays in flight
 *      waited for), so nothing relayed is left upstream and nothing is stored twice;
 *   3. cutover: the user's route becomes `store` (IMAP servers then close their relayed
 *      sessions). Never unless every folder verifies.
 */

// Passes of import + verify before giving up (mail arriving during each pass); a proxied
// user's account gets one bulk pass before them, outside the delivery hold.
const MAX_PASSES = 3;

/**
 * @param {object} opts
 * @param {import('@mailgate/store').PgStore} opts.store
 * @param {string} opts.user mailgate user (must exist)
 * @param {{host: string, port: number, login: string, password: string, security?: string}} opts.imap
 *   the upstream account (service.upstreamAccount)
 * @param {boolean} [opts.cutover] switch the route when verified (default true)
 * @param {boolean} [opts.keepHold] with cutover false: a verified proxied user's delivery hold
 *   stays on for the caller's own route switch to end (the fleet's)
 * @param {number} [opts.workers] parse workers
 * @param {number} [opts.batchSize]
 * @param {boolean} [opts.progress] progress on stderr
 * @param {AbortSignal} [opts.signal] stops after the current batch (resumable)
 * @param {(b: {messages: number, bytes: number}) => Promise<void>} [opts.onBatch] runImport's
 * @param {(line: string) => void} [opts.say] one line per step
 * @param {import('pino').Logger} [opts.log]
 * @returns {Promise<{user: string, route: string, previousRoute: string, cutover: boolean,
 *   passes: number, interrupted: boolean, import: object, verify: object|null}>}
 */
async function migrateAccount(opts) {
  const { store, user, imap } = opts;
  const say = opts.say || (() => {});
  const u = await store.getUser(user);
  const previousRoute = await store.getRoute(user);
  const totals = {
    messages: 0,
    imported: 0,
    duplicates: 0,
    quarantined: 0,
    bytes: 0,
    seconds: 0,
    warnings: [],
  };
  const result = {
    user,
    route: previousRoute,
    previousRoute,
    cutover: false,
    passes: 0,
    interrupted: false,
    import: totals,
    verify: null,
  };
  const pass = async () => {
    result.passes++;
    say(`pass ${result.passes}: importing from ${imap.host}:${imap.port} (route ${previousRoute})`);
    const r = await runImport({
      store,
      kind: 'imap',
      paths: [],
      user,
      imap,
      mirrorExpunges: true,
      workers: opts.workers,
      batchSize: opts.batchSize,
      progress: opts.progress,
      signal: opts.signal,
      onBatch: opts.onBatch,
      log: opts.log,
    });
    for (const k of ['messages', 'imported', 'duplicates', 'quarantined', 'bytes', 'seconds'])
      totals[k] += r[k];
    totals.warnings.push(...r.warnings);
    if (r.interrupted) result.interrupted = true;
    return r;
  };
  // A proxied user's mail may be relayed to the upstream while the bulk moves: it is taken by
  // the passes after the hold, which every later delivery waits behind (451 until the route
  // switch, then stored here). The hold ends with the route switch, or here when the run stops
  // short of it.
  let held = false;
  try {
    // A pre-copy (cutover false, no keepHold) switches nothing: no hold needed.
    if (previousRoute === 'proxy' && (opts.cutover !== false || opts.keepHold)) {
      await pass();
      if (result.interrupted) return result;
      say('holding deliveries for the last pass (451 until the route switch)');
      await store.holdDeliveries(user);
      held = true;
    }
    for (let verified = 0; verified < MAX_PASSES; verified++) {
      const r = await pass();
      if (result.interrupted) return result;
      say(`pass ${result.passes}: ${r.imported} imported; verifying`);
      result.verify = await verifyImap({ store, userId: u.id, imap });
      if (result.verify.ok) break;
    }
  } finally {
    // Verified: the route switch ends the hold (below, or the caller's with keepHold: the
    // fleet records `verified` first). Otherwise (failed, stopped, --no-cutover) the user
    // stays on proxy and their mail is relayed again.
    const switching =
      result.verify && result.verify.ok && (opts.cutover !== false || opts.keepHold);
    if (held && !switching) await store.releaseDeliveries(user);
  }
  totals.seconds = Number(totals.seconds.toFixed(3));
  if (result.verify.ok && opts.cutover !== false) {
    result.route = (await store.setRoute(user, 'store')).route;
    result.cutover = true;
    say(
      previousRoute === 'proxy'
        ? 'route is now store; relayed IMAP sessions close at the next route check'
        : 'route is store',
    );
  }
  opts.log?.info(
    { user, cutover: result.cutover, ok: result.verify.ok, imported: totals.imported },
    'migrate',
  );
  return result;
}

module.exports = { migrateAccount };
