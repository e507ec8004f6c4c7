-- Issue 30.6: what messages.header_json (the stored NDJSON fragment of a header row, model
-- header-row.js headerJson) weighs, on the Enron quarter of
-- `npm run bench:disk -- --only quarter --no-dovecot --keep`, psql as the mailgate role.
-- Result: bench/results/messages-header-json-2026-11-28.txt
CREATE TABLE nohj WITH (fillfactor=50, toast_tuple_target=512) AS SELECT * FROM messages_u1 ORDER BY mailbox_id, uid;
CREATE TABLE withhj WITH (fillfactor=50, toast_tuple_target=512) AS SELECT * FROM messages_u1 ORDER BY mailbox_id, uid;
ALTER TABLE nohj DROP COLUMN header_json;
VACUUM FULL nohj;
VACUUM FULL withhj;
SELECT relname, pg_relation_size(oid) heap, pg_total_relation_size(oid) total FROM pg_class WHERE relname IN ('nohj','withhj','messages_u1');
DROP TABLE nohj;
DROP TABLE withhj;
