-- Where a batched indexer's saving would come from (issue 32): the text pieces of N corpus
-- messages inserted one statement per message (PL/pgSQL loop: the server's work only) against one statement for all, and the merge of
-- the pending list they leave, for N = 64, 200, 800, 2000. Rolled back; nothing kept.
\set QUIET on
SELECT gin_clean_pending_list('message_chunks_u1_t_idx') \g /dev/null
CREATE TEMP TABLE src AS SELECT m.uid, mailgate_message_text(1,1,uid,0::smallint) AS ht, mailgate_message_text(1,1,uid,1::smallint) AS bt FROM messages m WHERE user_id=1 AND mailbox_id=1 AND uid BETWEEN 21001 AND 23000;
CREATE TEMP TABLE res(n int, mode text, insert_ms float8, merge_ms float8, insert_cpu float8, merge_cpu float8);
-- This backend's CPU (user + system, ms) from /proc/self/stat (ticks of 10 ms).
CREATE OR REPLACE FUNCTION pg_temp.cpu() RETURNS float8 LANGUAGE sql AS $c$
  SELECT ((string_to_array(split_part(pg_read_file('/proc/self/stat'), ') ', 2), ' '))[12]::float8 +
          (string_to_array(split_part(pg_read_file('/proc/self/stat'), ') ', 2), ' '))[13]::float8) * 10 $c$;
CREATE OR REPLACE FUNCTION pg_temp.run(nn int, batched bool) RETURNS void LANGUAGE plpgsql AS $f$
DECLARE r record; t0 timestamptz; t1 timestamptz; t2 timestamptz; c0 float8; c1 float8; c2 float8;
BEGIN
  BEGIN
  PERFORM set_config('gin_pending_list_limit', '64MB', true);
  t0 := clock_timestamp(); c0 := pg_temp.cpu();
  IF batched THEN
    INSERT INTO message_chunks (user_id, mailbox_id, uid, kind, seq, t)
      SELECT 1,1,s.uid+1000000,k.kind,p.seq,p.piece FROM (SELECT * FROM src ORDER BY uid LIMIT nn) s,
        LATERAL (VALUES (0::smallint, s.ht),(1::smallint, s.bt)) k(kind,t), LATERAL mailgate_text_pieces(k.t) p WHERE k.t<>'';
  ELSE
    FOR r IN SELECT * FROM src ORDER BY uid LIMIT nn LOOP
      INSERT INTO message_chunks (user_id, mailbox_id, uid, kind, seq, t)
        SELECT 1,1,r.uid+1000000,k.kind,p.seq,p.piece FROM (VALUES (0::smallint, r.ht),(1::smallint, r.bt)) k(kind,t),
          LATERAL mailgate_text_pieces(k.t) p WHERE k.t<>'';
    END LOOP;
  END IF;
  t1 := clock_timestamp(); c1 := pg_temp.cpu();
  PERFORM gin_clean_pending_list('message_chunks_u1_t_idx');
  t2 := clock_timestamp(); c2 := pg_temp.cpu();
  RAISE EXCEPTION 'rollback' USING ERRCODE = 'P0001';
  EXCEPTION WHEN SQLSTATE 'P0001' THEN NULL;
  END;
  INSERT INTO res VALUES (nn, CASE WHEN batched THEN 'one statement' ELSE 'one per message' END,
    extract(epoch FROM t1 - t0) * 1000, extract(epoch FROM t2 - t1) * 1000, c1 - c0, c2 - c1);
END $f$;
SELECT pg_temp.run(n, b) FROM (VALUES (64,false),(64,true),(200,false),(200,true),(800,false),(800,true),(2000,false),(2000,true),
  (64,true),(64,false),(200,true),(200,false),(800,true),(800,false),(2000,true),(2000,false),
  (64,false),(64,true),(200,false),(200,true),(800,false),(800,true),(2000,false),(2000,true)) v(n,b) \g /dev/null
\set QUIET off
SELECT n, mode, count(*) AS runs, round(avg(insert_ms)::numeric,1) AS insert_ms, round((avg(insert_ms)/n)::numeric,3) AS insert_ms_per_msg,
  round(avg(merge_ms)::numeric,1) AS merge_ms, round((avg(merge_ms)/n)::numeric,3) AS merge_ms_per_msg,
  round((sum(insert_cpu)/sum(n))::numeric,3) AS insert_cpu_per_msg, round((sum(merge_cpu)/sum(n))::numeric,3) AS merge_cpu_per_msg,
  string_agg(round(insert_ms::numeric,1)::text || '/' || round(merge_ms::numeric,1)::text, ' ') AS samples
  FROM res GROUP BY n, mode ORDER BY n, mode;
