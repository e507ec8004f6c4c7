-- Issue 30.6: text pieces of ~4 KB and ~8 KB compressed in place, against the shipped ~2 KB ones.
-- Run on the database kept by: npm run bench:disk -- --only quarter --keep --no-dovecot (main at d8b793f),
-- then MAILGATE_HOME=<kept home> npx mailgate db start and psql as role mailgate on database mailgate:
--   psql -f compressed-pieces-2026-11-28.sql > bench/results/disk-quarter-2026-11-28-pieces.txt
-- User 1 is the imported user. Sizes in bytes; times: psql \timing of 6 warm runs each (the load of
-- the shared machine moves them: compare within the file only).
CREATE OR REPLACE FUNCTION x_pieces(t text, step int, len int) RETURNS TABLE (seq int, piece text)
  LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE b bytea; n int; i int := 0; a int; e int;
BEGIN
  IF octet_length(t) <= len THEN seq := 0; piece := t; RETURN NEXT; RETURN; END IF;
  b := convert_to(t, 'UTF8'); n := length(b);
  LOOP
    a := i * step;
    WHILE a < n AND get_byte(b, a) BETWEEN 128 AND 191 LOOP a := a + 1; END LOOP;
    e := least(i * step + len, n);
    WHILE e < n AND get_byte(b, e) BETWEEN 128 AND 191 LOOP e := e + 1; END LOOP;
    seq := i; piece := convert_from(substring(b FROM a + 1 FOR e - a), 'UTF8');
    RETURN NEXT;
    EXIT WHEN e >= n;
    i := i + 1;
  END LOOP;
END $$;
DROP TABLE IF EXISTS xc4;
CREATE TABLE xc4 (user_id int, mailbox_id int, uid bigint, kind smallint, seq int, t text NOT NULL, PRIMARY KEY (user_id, mailbox_id, uid, kind, seq)) WITH (toast_tuple_target=128);
ALTER TABLE xc4 ALTER COLUMN t SET STORAGE MAIN;
INSERT INTO xc4 SELECT a.user_id, a.mailbox_id, a.uid, k.kind, p.seq, p.piece FROM messages a, LATERAL (VALUES (0::smallint, a.header_text), (1::smallint, a.body_text)) AS k(kind, t), LATERAL x_pieces(k.t, 3800, 4050) p WHERE k.t <> '' ORDER BY 1,2,3,4,5;
CREATE INDEX xc4_t ON xc4 USING gin (t gin_trgm_ops);
DROP TABLE IF EXISTS xc8;
CREATE TABLE xc8 (user_id int, mailbox_id int, uid bigint, kind smallint, seq int, t text NOT NULL, PRIMARY KEY (user_id, mailbox_id, uid, kind, seq)) WITH (toast_tuple_target=128);
ALTER TABLE xc8 ALTER COLUMN t SET STORAGE MAIN;
INSERT INTO xc8 SELECT a.user_id, a.mailbox_id, a.uid, k.kind, p.seq, p.piece FROM messages a, LATERAL (VALUES (0::smallint, a.header_text), (1::smallint, a.body_text)) AS k(kind, t), LATERAL x_pieces(k.t, 7700, 7950) p WHERE k.t <> '' ORDER BY 1,2,3,4,5;
CREATE INDEX xc8_t ON xc8 USING gin (t gin_trgm_ops);
CHECKPOINT;
SET max_parallel_workers_per_gather = 0;
SELECT c AS relation, pg_relation_size(c) AS heap, pg_indexes_size(c) AS indexes, pg_total_relation_size(c) AS total FROM unnest(array['message_chunks_u1','xc4','xc8']::regclass[]) c;
\timing on
\o /dev/null
SELECT 'message_chunks would', count(DISTINCT (mailbox_id, uid)) FROM message_chunks WHERE user_id = 1 AND t LIKE '%would%';
SELECT 'message_chunks would', count(DISTINCT (mailbox_id, uid)) FROM message_chunks WHERE user_id = 1 AND t LIKE '%would%';
SELECT 'message_chunks would', count(DISTINCT (mailbox_id, uid)) FROM message_chunks WHERE user_id = 1 AND t LIKE '%would%';
SELECT 'message_chunks would', count(DISTINCT (mailbox_id, uid)) FROM message_chunks WHERE user_id = 1 AND t LIKE '%would%';
SELECT 'message_chunks would', count(DISTINCT (mailbox_id, uid)) FROM message_chunks WHERE user_id = 1 AND t LIKE '%would%';
SELECT 'message_chunks would', count(DISTINCT (mailbox_id, uid)) FROM message_chunks WHERE user_id = 1 AND t LIKE '%would%';
SELECT 'message_chunks depending', count(DISTINCT (mailbox_id, uid)) FROM message_chunks WHERE user_id = 1 AND t LIKE '%depending%';
SELECT 'message_chunks depending', count(DISTINCT (mailbox_id, uid)) FROM message_chunks WHERE user_id = 1 AND t LIKE '%depending%';
SELECT 'message_chunks depending', count(DISTINCT (mailbox_id, uid)) FROM message_chunks WHERE user_id = 1 AND t LIKE '%depending%';
SELECT 'message_chunks depending', count(DISTINCT (mailbox_id, uid)) FROM message_chunks WHERE user_id = 1 AND t LIKE '%depending%';
SELECT 'message_chunks depending', count(DISTINCT (mailbox_id, uid)) FROM message_chunks WHERE user_id = 1 AND t LIKE '%depending%';
SELECT 'message_chunks depending', count(DISTINCT (mailbox_id, uid)) FROM message_chunks WHERE user_id = 1 AND t LIKE '%depending%';
SELECT 'xc4 would', count(DISTINCT (mailbox_id, uid)) FROM xc4 WHERE user_id = 1 AND t LIKE '%would%';
SELECT 'xc4 would', count(DISTINCT (mailbox_id, uid)) FROM xc4 WHERE user_id = 1 AND t LIKE '%would%';
SELECT 'xc4 would', count(DISTINCT (mailbox_id, uid)) FROM xc4 WHERE user_id = 1 AND t LIKE '%would%';
SELECT 'xc4 would', count(DISTINCT (mailbox_id, uid)) FROM xc4 WHERE user_id = 1 AND t LIKE '%would%';
SELECT 'xc4 would', count(DISTINCT (mailbox_id, uid)) FROM xc4 WHERE user_id = 1 AND t LIKE '%would%';
SELECT 'xc4 would', count(DISTINCT (mailbox_id, uid)) FROM xc4 WHERE user_id = 1 AND t LIKE '%would%';
SELECT 'xc4 depending', count(DISTINCT (mailbox_id, uid)) FROM xc4 WHERE user_id = 1 AND t LIKE '%depending%';
SELECT 'xc4 depending', count(DISTINCT (mailbox_id, uid)) FROM xc4 WHERE user_id = 1 AND t LIKE '%depending%';
SELECT 'xc4 depending', count(DISTINCT (mailbox_id, uid)) FROM xc4 WHERE user_id = 1 AND t LIKE '%depending%';
SELECT 'xc4 depending', count(DISTINCT (mailbox_id, uid)) FROM xc4 WHERE user_id = 1 AND t LIKE '%depending%';
SELECT 'xc4 depending', count(DISTINCT (mailbox_id, uid)) FROM xc4 WHERE user_id = 1 AND t LIKE '%depending%';
SELECT 'xc4 depending', count(DISTINCT (mailbox_id, uid)) FROM xc4 WHERE user_id = 1 AND t LIKE '%depending%';
SELECT 'xc8 would', count(DISTINCT (mailbox_id, uid)) FROM xc8 WHERE user_id = 1 AND t LIKE '%would%';
SELECT 'xc8 would', count(DISTINCT (mailbox_id, uid)) FROM xc8 WHERE user_id = 1 AND t LIKE '%would%';
SELECT 'xc8 would', count(DISTINCT (mailbox_id, uid)) FROM xc8 WHERE user_id = 1 AND t LIKE '%would%';
SELECT 'xc8 would', count(DISTINCT (mailbox_id, uid)) FROM xc8 WHERE user_id = 1 AND t LIKE '%would%';
SELECT 'xc8 would', count(DISTINCT (mailbox_id, uid)) FROM xc8 WHERE user_id = 1 AND t LIKE '%would%';
SELECT 'xc8 would', count(DISTINCT (mailbox_id, uid)) FROM xc8 WHERE user_id = 1 AND t LIKE '%would%';
SELECT 'xc8 depending', count(DISTINCT (mailbox_id, uid)) FROM xc8 WHERE user_id = 1 AND t LIKE '%depending%';
SELECT 'xc8 depending', count(DISTINCT (mailbox_id, uid)) FROM xc8 WHERE user_id = 1 AND t LIKE '%depending%';
SELECT 'xc8 depending', count(DISTINCT (mailbox_id, uid)) FROM xc8 WHERE user_id = 1 AND t LIKE '%depending%';
SELECT 'xc8 depending', count(DISTINCT (mailbox_id, uid)) FROM xc8 WHERE user_id = 1 AND t LIKE '%depending%';
SELECT 'xc8 depending', count(DISTINCT (mailbox_id, uid)) FROM xc8 WHERE user_id = 1 AND t LIKE '%depending%';
SELECT 'xc8 depending', count(DISTINCT (mailbox_id, uid)) FROM xc8 WHERE user_id = 1 AND t LIKE '%depending%';
