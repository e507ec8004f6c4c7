'use strict';

/*
 * The route plugins under /api/v1, one per resource. A new resource is a new module here
 * (its schemas in ../schemas/<resource>.js); each plugin reaches the backends through the
 * decorators of plugins/mail.js and declares its auth need in `config.auth`.
 */
module.exports = [
  require('./health'),
  require('./session'),
  require('./users'),
  require('./mailboxes'),
  require('./messages'),
  require('./message'),
  require('./search'),
  require('./flags'),
  require('./mailbox-admin'),
  require('./transfer'),
  require('./append'),
  require('./changes'),
  require('./sign-in-link'),
  require('./threads'),
  require('./migration'),
];
