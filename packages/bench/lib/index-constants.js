'use strict';

// Names the CLI needs without loading the backends (and their dependencies) at start-up.
const { SIZES } = require('./mailboxes');

const ALL_BACKENDS = ['pg', 'es', 'mbox', 'maildir', 'dovecot-mbox', 'dovecot-maildir'];

module.exports = { SIZES, ALL_BACKENDS };
