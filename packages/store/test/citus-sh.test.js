'use strict';

/*
 * scripts/citus/citus.sh never ends silently on a cluster that is not up: `status` names each
 * node and whether it runs, and how to start the cluster (it used to exit 3 with no word once
 * the data directory existed); `create-db` refuses with what is down (it used to end with
 * psql's exit status 2, the code that means "no Citus source, skip"); `stop` and `drop-db` say
 * when there was nothing to do. Run on a cluster of its own that never runs (CITUS_DATA in a
 * temporary folder, CITUS_PORT away from the shared cluster's 9700-9702): no server is started
 * or stopped, so the shared cluster is never touched.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const SCRIPT = path.resolve(__dirname, '..', '..', '..', 'scripts', 'citus', 'citus.sh');
const PORT = 19790;

let data;

beforeEach(() => {
  data = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-citus-sh-'));
});

afterEach(() => {
  fs.rmSync(data, { recursive: true, force: true });
});

/** Runs citus.sh on the temporary cluster; returns its exit status and output. */
function citusSh(...args) {
  const r = spawnSync('bash', [SCRIPT, ...args], {
    encoding: 'utf8',
    env: { ...process.env, CITUS_DATA: data, CITUS_PORT: String(PORT) },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A data directory of node0 as `start` leaves it once its servers are stopped. */
function stoppedCluster() {
  fs.mkdirSync(path.join(data, 'node0'), { recursive: true });
  fs.writeFileSync(path.join(data, 'node0', 'PG_VERSION'), '15\n');
}

/** The start command the script must name for this cluster. */
const hint = () =>
  `start it with: CITUS_DATA=${data} CITUS_PORT=${PORT} bash scripts/citus/citus.sh start`;

describe('citus.sh on a cluster that is not running', () => {
  test('status of a stopped cluster names every node down and how to start it (exit 3)', () => {
    stoppedCluster();
    const r = citusSh('status');
    expect(r.status).toBe(3);
    expect(r.stdout.split('\n').filter(Boolean)).toEqual([
      `node0 (coordinator) 127.0.0.1:${PORT}: not running (${data}/node0)`,
      `node1 (worker) 127.0.0.1:${PORT + 1}: not running (${data}/node1)`,
      `node2 (worker) 127.0.0.1:${PORT + 2}: not running (${data}/node2)`,
      `not running; ${hint()}`,
    ]);
  });

  test('status where no cluster was ever started says so (exit 3)', () => {
    const r = citusSh('status');
    expect(r.status).toBe(3);
    expect(r.stdout).toBe(`not running: no cluster at ${data} (never started here); ${hint()}\n`);
  });

  test('create-db refuses with the node that is down (exit 3, not psql 2)', () => {
    stoppedCluster();
    for (const args of [
      ['create-db', 'x'],
      ['create-db', 'x', 'plain'],
    ]) {
      const r = citusSh(...args);
      expect(r.status).toBe(3);
      expect(r.stderr).toBe(`citus.sh: node0 (127.0.0.1:${PORT}) is not running; ${hint()}\n`);
    }
  });

  test('stop and drop-db say there was nothing running', () => {
    stoppedCluster();
    const stop = citusSh('stop');
    expect(stop.status).toBe(0);
    expect(stop.stderr).toBe(`citus.sh: stop: no node of ${data} was running\n`);
    const drop = citusSh('drop-db', 'x');
    expect(drop.status).toBe(0);
    expect(drop.stderr).toMatch(/node2 \(127\.0\.0\.1:19792\) is not running: x not dropped there/);
    expect(drop.stderr).toMatch(/node0 \(127\.0\.0\.1:19790\) is not running: x not dropped there/);
  });
});
