'use strict';

const path = require('node:path');
const { spawn } = require('node:child_process');
const { useCliSuite, CLI } = require('@mailgate/test-support/db');

// `npm run demo` on a terminal ends with the webmail page's URL and a one-time sign-in link.
const suite = useCliSuite('demo-page');

test('demo on a terminal prints the page URL and a sign-in link that works once', async () => {
  // script(1) gives the demo a terminal, so it serves (PORT=0: any free port).
  const child = spawn(
    'script',
    ['-qec', `${process.execPath} ${CLI} demo --user pageuser`, '/dev/null'],
    {
      env: {
        ...process.env,
        DATABASE_URL: suite.db.url,
        MAILGATE_HOME: path.join(suite.tmp, 'home'),
        LOG_LEVEL: 'error',
        PORT: '0',
        HOST: '127.0.0.1',
      },
      detached: true,
    },
  );
  let out = '';
  try {
    const m = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no sign-in link in: ${out}`)), 110000);
      child.stdout.on('data', (d) => {
        out += d;
        const found =
          /Webmail page: (http:\/\/\S+)\/\r?\n.*sign-in link.*: (\S+)\/#link=(\S+)\r?\n/.exec(out);
        if (found) {
          clearTimeout(timer);
          resolve(found);
        }
      });
      child.once('exit', (c) => reject(new Error(`demo exited ${c}: ${out}`)));
    });
    const [, pageUrl, linkBase, link] = m;
    expect(linkBase).toBe(pageUrl);
    const page = await fetch(`${pageUrl}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<mg-message-list');
    const redeem = () =>
      fetch(`${pageUrl}/api/v1/session/link`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ link }),
      });
    const first = await redeem();
    expect(first.status).toBe(201);
    const { token } = await first.json();
    const boxes = await fetch(`${pageUrl}/api/v1/mailboxes`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect((await boxes.json()).mailboxes.map((b) => b.name)).toContain('INBOX');
    expect((await redeem()).status).toBe(401);
  } finally {
    // The whole process group: script(1), node and its server.
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
});
