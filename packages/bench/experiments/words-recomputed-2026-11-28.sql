-- Issue 30.6, the stored word vectors without positions (20261203240100_words_stripped.js): the
-- ES mirror now computes each message's positioned vector again from its row and its body text
-- (read back from its pieces) with mailgate_words, the insert trigger's expression. Is that
-- exactly the vector the code before stored, positions and weights included? On a database of
-- the code before (vectors with positions), in a transaction rolled back (the function is the
-- migration's, created here only for the check):
--   psql "$URL" -f words-recomputed-2026-11-28.sql
BEGIN;
CREATE FUNCTION mailgate_words(subject text, addrs text, body text)
  RETURNS tsvector LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  RETURN setweight(to_tsvector('simple', left(coalesce(subject, ''), 20000)), 'A') ||
    setweight(to_tsvector('simple', left(addrs, 200000)), 'B') ||
    to_tsvector('simple', left(body, 200000));
EXCEPTION WHEN program_limit_exceeded THEN
  RETURN setweight(to_tsvector('simple', left(coalesce(subject, ''), 2000)), 'A') ||
    setweight(to_tsvector('simple', left(addrs, 20000)), 'B') ||
    to_tsvector('simple', left(body, 50000));
END $$;
\timing on
SELECT count(*) AS messages,
       count(*) FILTER (WHERE w.tsv = mailgate_words(m.subject,
         m.from_text || ' ' || m.to_text || ' ' || m.cc_text,
         CASE WHEN m.body_text <> '' THEN m.body_text
              ELSE mailgate_join_pieces(ARRAY(SELECT p.t FROM message_chunks p
                     WHERE p.user_id = m.user_id AND p.mailbox_id = m.mailbox_id
                       AND p.uid = m.uid AND p.kind = 1 ORDER BY p.seq)) END)) AS equal
  FROM messages m JOIN message_words w USING (user_id, mailbox_id, uid);
ROLLBACK;
