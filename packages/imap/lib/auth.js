'use strict';

/*
 * The one way a session becomes authenticated (LOGIN and AUTHENTICATE both end here): the
 * limiter is asked first, the password is checked by the service, then the user's backend is
 * opened — or, for a user routed to `proxy`, the session handed to the migration proxy.
 * Failure text never says whether the user exists (RFC 5530 AUTHENTICATIONFAILED), except for a
 * user without a password, told the one step to take (service users.verifyLogin says why).
 */

const { no } = require('./errors');
const { proxyLogin } = require('./proxy');

/**
 * @param {import('./session').Session} s
 * @param {string} user
 * @param {string} password
 */
async function authenticate(s, user, password) {
  if (!user || user.length > 256) throw no('Authentication failed', 'AUTHENTICATIONFAILED');
  const login = await s.server.checkLogin(user, password, s.socket.remoteAddress || '');
  const { verdict } = login;
  if (verdict === 'blocked') throw no('Too many failed logins; try again later', 'UNAVAILABLE');
  // The one step for a user an import made (service users.verifyLogin says why this may name it).
  if (verdict === 'nopassword') throw no(login.text, 'AUTHENTICATIONFAILED');
  if (verdict !== 'ok') {
    s.log.info({ user }, 'imap login failed');
    throw no('Authentication failed', 'AUTHENTICATIONFAILED');
  }
  if (!s.server.claimUser(s, user)) throw no('Too many connections for this user', 'LIMIT');
  try {
    const res = await open(s, user, login.stamp);
    s.loggedIn();
    return res;
  } catch (err) {
    // The session stays unauthenticated and may LOGIN again: the slot goes back now, or a
    // client retrying against an unavailable upstream would lock its user out.
    s.server.releaseUser(s);
    throw err;
  }
}

/** After the slot is held: the user's backend, or the proxy for a user routed to `proxy`. */
async function open(s, user, stamp) {
  // A user being moved is relayed to their upstream account (proxy.js), after the same checks.
  if ((await s.server.routeOf(user)) === 'proxy') return proxyLogin(s, user);
  const be = await s.server.service.openBackend(s.server.backendKind, user);
  if (s.closed) {
    await be.close();
    return { answered: true };
  }
  // INBOX always exists for an IMAP client (RFC 3501 5.1); a user made by `user add` may have
  // no mailbox yet. Asked of INBOX's own row, without counts: listing the mailboxes counted
  // every message of the user at each login (issue 35.3: ~240 ms cold on 21,282 messages,
  // which also warmed the cache for the SELECT timed after it).
  const inbox = await be.status('INBOX', { counts: false }).catch((err) => {
    if (err && err.code === 'MAILBOX_NOT_FOUND') return null;
    throw err;
  });
  if (!inbox) {
    await be.createMailbox('INBOX').catch((err) => {
      if (!err || err.code !== 'MAILBOX_EXISTS') throw err;
    });
  }
  s.user = user;
  s.backend = be;
  s.state = 'auth';
  // Closed when the user's password changes (server.watchCredentials).
  s.credentialStamp = stamp || null;
  if (s.credentialStamp) s.server.watchCredentials();
  s.resetTimer();
  s.log.info({ user }, 'imap login');
  return {
    code: `CAPABILITY ${s.server.capabilities(s).join(' ')}`,
    text: 'Logged in',
  };
}

module.exports = { authenticate };
