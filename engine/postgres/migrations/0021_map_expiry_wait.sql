-- Herald PostgreSQL engine, schema version 21: expired map keys removed
-- while their channel is being written to. expire_map_keys (0012) took a
-- channel's stream lock with SKIP LOCKED and left the channel's due keys
-- for the next sweep when a change held it: under a steady flow of
-- map_publish to the channel the lock was almost never free, and 30,000
-- keys with key_ttl 3s set through the API (about 220 a second on the
-- shared test machine) were removed up to 20 s after their expiry. Now it
-- waits for the lock behind the changes queued before it (row lock
-- waiters are served in order), at most lock_timeout (500 ms, set for the
-- sweep's transaction), and only then leaves the channel for the next
-- sweep. And it deletes the due rows by their row ids rather than
-- joining them back on the primary key (an index lookup per key). The
-- rest is 0012's: same signature and result.

CREATE OR REPLACE FUNCTION {{schema}}.expire_map_keys(p_limit integer) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    c       record;
    v_keys  text[];
    v_size  integer;
    v_ttl   bigint;
    v_mttl  bigint;
    v_top   bigint;
    v_epoch text;
    v_time  bigint := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
    v_n     integer;
    v_topic text;
    v_head  text;
    v_mid   text;
    n       integer := 0;
BEGIN
    -- For this sweep's transaction only; below deadlock_timeout (1 s by
    -- default), so a wait that would deadlock gives up first.
    PERFORM set_config('lock_timeout', '500ms', true);
    FOR c IN SELECT d.channel, count(*)::integer AS due
               FROM (SELECT m.channel FROM {{schema}}.map_state m
                      WHERE m.expire_at <= now() ORDER BY m.expire_at LIMIT p_limit) d
              GROUP BY d.channel ORDER BY d.channel LOOP
        -- The stream row's lock first, the order map_change uses, waiting
        -- for it behind the changes already queued (at most lock_timeout,
        -- then the channel waits for the next sweep).
        BEGIN
            PERFORM 1 FROM {{schema}}.streams s WHERE s.channel = c.channel FOR UPDATE;
        EXCEPTION WHEN lock_not_available THEN
            CONTINUE;
        END;
        -- The due rows, deleted by their row ids (a TID scan): joined back
        -- on the primary key, each was an index lookup, most of the
        -- statement; the stream lock keeps the channel's rows from
        -- changing meanwhile. Then the stream options of the channel's
        -- latest change among them, as one change of all of them would
        -- carry.
        WITH gone AS (
            DELETE FROM {{schema}}.map_state m
             WHERE m.ctid = ANY (ARRAY(SELECT d.ctid FROM {{schema}}.map_state d
                                        WHERE d.channel = c.channel AND d.expire_at <= now()
                                        ORDER BY d.expire_at LIMIT c.due))
               AND m.channel = c.channel AND m.expire_at <= now()
            RETURNING m.key, m.expire_at, m.pub_offset, m.stream_size, m.stream_ttl_ms, m.meta_ttl_ms
        )
        SELECT array_agg(g.key ORDER BY g.expire_at, g.key),
               (array_agg(g.stream_size ORDER BY g.pub_offset DESC))[1],
               (array_agg(g.stream_ttl_ms ORDER BY g.pub_offset DESC))[1],
               (array_agg(g.meta_ttl_ms ORDER BY g.pub_offset DESC))[1]
          INTO v_keys, v_size, v_ttl, v_mttl
          FROM gone g;
        v_n := coalesce(array_length(v_keys, 1), 0);
        v_topic := '{{schema}}_' || (hashtext(c.channel) & 15)::text;
        IF v_n = 0 THEN
            CONTINUE;
        END IF;
        SELECT a.top_offset, a.epoch INTO v_top, v_epoch
          FROM {{schema}}.alloc(ARRAY[c.channel], ARRAY[v_n], ARRAY[v_size], ARRAY[v_ttl], ARRAY[v_mttl]) a;
        -- Key i (1-based) gets offset v_top - v_n + i.
        INSERT INTO {{schema}}.history (channel, pub_offset, time_ms, data, map_key, removed)
        SELECT c.channel, v_top - v_n + k.i, v_time, ''::bytea, k.key, true
          FROM unnest(v_keys) WITH ORDINALITY AS k (key, i)
         WHERE v_top - v_n + k.i > v_top - v_size;
        -- One notification per removal, in offset order, sent here rather
        -- than through emit_record (a PL/pgSQL call per key was most of
        -- the cost) unless a record is long enough to spill.
        IF (SELECT max(octet_length(k.key)) FROM unnest(v_keys) AS k (key)) + octet_length(c.channel) > 7800 THEN
            PERFORM {{schema}}.emit_record(c.channel, v_top - v_n + k.i, v_epoch,
                        {{schema}}.encode_map(c.channel, v_top - v_n + k.i, v_epoch, v_time, NULL, NULL, NULL, NULL,
                                              {{schema}}.ns(''), k.key, true))
               FROM unnest(v_keys) WITH ORDINALITY AS k (key, i)
              ORDER BY k.i;
        ELSE
            -- encode_map's record written out: only the offset and the key
            -- differ from one removal to the next.
            v_mid := {{schema}}.ns(v_epoch) || {{schema}}.ns(v_time::text) || {{schema}}.ns('0') || {{schema}}.ns('0')
                  || {{schema}}.ns('') || {{schema}}.ns('');
            v_head := 'k' || {{schema}}.ns(c.channel);
            PERFORM pg_notify(v_topic, 'n' || octet_length(r.seq) || ':' || r.seq
                                || v_head || octet_length(r.off) || ':' || r.off || v_mid
                                || octet_length(r.key) || ':' || r.key || '1:1')
               FROM (SELECT 's' || nextval('{{schema}}.notify_seq')::text AS seq, (v_top - v_n + k.i)::text AS off, k.key
                       FROM unnest(v_keys) WITH ORDINALITY AS k (key, i)
                      ORDER BY k.i) r;
        END IF;
        n := n + v_n;
    END LOOP;
    RETURN n;
END
$fn$;
