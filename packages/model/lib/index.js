'use strict';

/**
 * @mailgate/model — the message model, on the lowest floor (no I/O, no SQL, no dependency):
 * a parsed message → its column row (column-row.js) → its header row, the one shape every path
 * serves → its list row and the list snapshot's packing of it (header-row.js), and the preview.
 * The store, the importer, the legacy backends and the Elasticsearch mirror all build their
 * rows here, so the shape exists once. README.md.
 */

module.exports = {
  ...require('./column-row'),
  ...require('./header-row'),
};
