-- Herald PostgreSQL engine, schema version 12: expired map keys removed a
-- channel at a time. expire_map_keys (0004) made each removal a
-- map_change call of its own (an alloc, a history row, a notification):
-- about 1,200 keys a second, so 30,000 keys expiring together went up to
-- 25 s late. This one takes each channel's stream lock once, deletes the
-- channel's due keys in one statement, allocates their offsets in one
-- alloc, writes history rows only for the offsets the stream's size keeps
-- (the others would be trimmed by the next change anyway) and emits one
-- removal per key, in offset order. Same signature and result: the number
-- of keys removed.
--
-- A channel's due keys are read through an index on (channel, expire_at):
-- through the primary key and map_state_expire_at, every due key of the
-- channel was read and sorted for each statement's few thousand.
CREATE INDEX map_state_channel_expire_at ON {{schema}}.map_state (channel, expire_at) WHERE expire_at IS NOT NULL;

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
    FOR c IN SELECT d.channel, count(*)::integer AS due
               FROM (SELECT m.channel FROM {{schema}}.map_state m
                      WHERE m.expire_at <= now() ORDER BY m.expire_at LIMIT p_limit) d
              GROUP BY d.channel ORDER BY d.channel LOOP
        -- The stream row's lock first, the order map_change uses.
        PERFORM 1 FROM {{schema}}.streams s WHERE s.channel = c.channel FOR UPDATE SKIP LOCKED;
        IF NOT FOUND AND EXISTS (SELECT 1 FROM {{schema}}.streams s WHERE s.channel = c.channel) THEN
            CONTINUE; -- a change is being made to the channel: the next sweep
        END IF;
        -- The stream options of the channel's latest change among them, as
        -- one change of all of them would carry.
        WITH due AS (
            SELECT m.key FROM {{schema}}.map_state m
             WHERE m.channel = c.channel AND m.expire_at <= now()
             ORDER BY m.expire_at LIMIT c.due
        ), gone AS (
            DELETE FROM {{schema}}.map_state m USING due
             WHERE m.channel = c.channel AND m.key = due.key
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
