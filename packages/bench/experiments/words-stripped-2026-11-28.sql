-- Issue 30.6, lever "word index without positions": what strip() saves on message_words and
-- what a phrase costs when its candidates come from the stripped vectors (every word present)
-- and each candidate is confirmed against its text's vector recomputed from the columns and
-- the pieces, with the trigger's own expression (20261130610400_words_update_pieces.js).
-- On a kept `npm run bench:disk -- --only quarter --no-dovecot --keep` database (user 1):
--   psql "$URL" -v p='would like' -f words-stripped-2026-11-28.sql   (once per phrase)
\pset footer off
DROP TABLE IF EXISTS w_strip, w_full;
CREATE TABLE w_full (LIKE message_words_u1 INCLUDING ALL) WITH (toast_tuple_target = 128);
INSERT INTO w_full SELECT * FROM message_words_u1;
CREATE TABLE w_strip (LIKE message_words_u1 INCLUDING ALL) WITH (toast_tuple_target = 128);
INSERT INTO w_strip SELECT user_id, mailbox_id, uid, strip(tsv) FROM message_words_u1;
VACUUM ANALYZE w_full;
VACUUM ANALYZE w_strip;
SELECT c.relname, round(pg_relation_size(c.oid) / 1e6, 1) AS heap_mb,
  round(pg_relation_size(c.reltoastrelid) / 1e6, 1) AS toast_mb,
  round(pg_indexes_size(c.oid) / 1e6, 1) AS index_mb,
  round(pg_total_relation_size(c.oid) / 1e6, 1) AS total_mb
  FROM pg_class c WHERE c.relname IN ('w_full', 'w_strip') ORDER BY 1;
SELECT :'p' AS phrase,
  (SELECT count(*) FROM w_full w WHERE w.user_id = 1 AND w.tsv @@ phraseto_tsquery('simple', :'p')) AS stored,
  (SELECT count(*) FROM w_strip w WHERE w.user_id = 1 AND w.tsv @@ plainto_tsquery('simple', :'p')) AS candidates;
\timing on
-- three rounds, stored positions and candidates + confirmation alternating
\o /dev/null
SELECT count(*) FROM w_full w WHERE w.user_id = 1 AND w.tsv @@ phraseto_tsquery('simple', :'p');
\o
\echo confirmed:
SELECT count(*) FROM w_strip w JOIN messages_u1 m
    ON m.user_id = w.user_id AND m.mailbox_id = w.mailbox_id AND m.uid = w.uid
 WHERE w.user_id = 1 AND w.tsv @@ plainto_tsquery('simple', :'p')
   AND (to_tsvector('simple', left(coalesce(m.subject, ''), 20000)) ||
        to_tsvector('simple', left(m.from_text || ' ' || m.to_text || ' ' || m.cc_text, 200000)) ||
        to_tsvector('simple', left(coalesce(mailgate_join_pieces((SELECT array_agg(c.t ORDER BY c.seq)
          FROM message_chunks c WHERE c.user_id = 1 AND c.mailbox_id = w.mailbox_id
           AND c.uid = w.uid AND c.kind = 1)), ''), 200000))) @@ phraseto_tsquery('simple', :'p');
\o /dev/null
SELECT count(*) FROM w_full w WHERE w.user_id = 1 AND w.tsv @@ phraseto_tsquery('simple', :'p');
SELECT count(*) FROM w_strip w JOIN messages_u1 m
    ON m.user_id = w.user_id AND m.mailbox_id = w.mailbox_id AND m.uid = w.uid
 WHERE w.user_id = 1 AND w.tsv @@ plainto_tsquery('simple', :'p')
   AND (to_tsvector('simple', left(coalesce(m.subject, ''), 20000)) ||
        to_tsvector('simple', left(m.from_text || ' ' || m.to_text || ' ' || m.cc_text, 200000)) ||
        to_tsvector('simple', left(coalesce(mailgate_join_pieces((SELECT array_agg(c.t ORDER BY c.seq)
          FROM message_chunks c WHERE c.user_id = 1 AND c.mailbox_id = w.mailbox_id
           AND c.uid = w.uid AND c.kind = 1)), ''), 200000))) @@ phraseto_tsquery('simple', :'p');
SELECT count(*) FROM w_full w WHERE w.user_id = 1 AND w.tsv @@ phraseto_tsquery('simple', :'p');
SELECT count(*) FROM w_strip w JOIN messages_u1 m
    ON m.user_id = w.user_id AND m.mailbox_id = w.mailbox_id AND m.uid = w.uid
 WHERE w.user_id = 1 AND w.tsv @@ plainto_tsquery('simple', :'p')
   AND (to_tsvector('simple', left(coalesce(m.subject, ''), 20000)) ||
        to_tsvector('simple', left(m.from_text || ' ' || m.to_text || ' ' || m.cc_text, 200000)) ||
        to_tsvector('simple', left(coalesce(mailgate_join_pieces((SELECT array_agg(c.t ORDER BY c.seq)
          FROM message_chunks c WHERE c.user_id = 1 AND c.mailbox_id = w.mailbox_id
           AND c.uid = w.uid AND c.kind = 1)), ''), 200000))) @@ phraseto_tsquery('simple', :'p');
\o
DROP TABLE w_strip, w_full;
