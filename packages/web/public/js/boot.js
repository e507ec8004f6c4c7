/*
 * Start-up requests, sent while the page is still being parsed. The only classic (non-module)
 * script of the page, loaded first in <head>: when a session token is there already, it asks
 * for the mailbox list and the open mailbox's first header page at once, instead of after
 * every module has loaded and run (about 100 ms later). api.js adopts these responses (same
 * method and URL, used once); when the app asks for something else, they are simply unused.
 * It never touches the DOM and holds nothing but pending fetches.
 */
(function boot() {
  'use strict';
  var token = null;
  try {
    token = sessionStorage.getItem('mailgate.token');
  } catch (e) {
    return;
  }
  // A one-time sign-in link is redeemed by the app first; no token, no early request.
  if (!token || /(?:^#|&)link=/.test(location.hash)) return;
  var m = /^#mailbox=(.+)$/.exec(location.hash);
  var mailbox = 'INBOX';
  if (m) {
    try {
      mailbox = decodeURIComponent(m[1]);
    } catch (e) {
      return;
    }
  }
  // Must build the URLs exactly as api.js does for the app's first requests: the first page
  // is message-list.js's FIRST_PAGE rows in the default order (-date: newest first).
  var urls = [
    '/api/v1/mailboxes/' + encodeURIComponent(mailbox) + '/messages?order=-date&limit=60',
    '/api/v1/mailboxes',
  ];
  var early = {};
  for (var i = 0; i < urls.length; i++) {
    var response = fetch(urls[i], {
      headers: { accept: 'application/json', authorization: 'Bearer ' + token },
    });
    // Handled here so that an unused, failed request is not an unhandled rejection; the app
    // still sees the failure when it adopts the request.
    response.catch(function () {});
    early['GET ' + urls[i]] = { token: token, t0: performance.now(), response: response };
  }
  window.mailgateEarly = early;
})();
