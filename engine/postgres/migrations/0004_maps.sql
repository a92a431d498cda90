-- Herald PostgreSQL engine, schema version 4: map channels.
--
-- A map channel keeps keyed state in map_state, next to its stream in
-- streams and history, whose rows for a map channel carry the key they
-- change (map_key) and whether they remove it. map_change records a change
-- in all three within the caller's transaction and queues its
-- notification, so a change made from SQL (map_publish, map_remove) is
-- delivered if and only if the transaction commits, like publish. A state
-- read in one snapshot sees exactly the changes up to the stream's top in
-- that snapshot: a change takes the stream row's lock (alloc) before it
-- touches map_state and keeps it to its commit.

ALTER TABLE {{schema}}.history
    ADD COLUMN map_key text,
    ADD COLUMN removed boolean NOT NULL DEFAULT false;

-- One row per key: its latest publication, the offset of the change that
-- set it, and when it expires (NULL: never). The stream options of the
-- last change are kept for the removal that expiry makes.
CREATE TABLE {{schema}}.map_state (
    channel        text        COLLATE "C" NOT NULL,
    key            text        COLLATE "C" NOT NULL,
    pub_offset     bigint      NOT NULL,
    time_ms        bigint      NOT NULL,
    data           bytea       NOT NULL,
    client_id      text,
    user_id        text,
    conn_info      bytea,
    chan_info      bytea,
    expire_at      timestamptz,
    stream_size    integer     NOT NULL,
    stream_ttl_ms  bigint      NOT NULL,
    meta_ttl_ms    bigint      NOT NULL,
    PRIMARY KEY (channel, key)
);
CREATE INDEX map_state_expire_at ON {{schema}}.map_state (expire_at) WHERE expire_at IS NOT NULL;

-- encode_map builds a map change record (codec.go, kind 'k'): the fields
-- of a publication record with its client info, an empty except-client,
-- then the key and '1' for a removal or '0'.
CREATE FUNCTION {{schema}}.encode_map(
    p_channel text, p_offset bigint, p_epoch text, p_time_ms bigint,
    p_user text, p_client text, p_conn_info bytea, p_chan_info bytea,
    p_data_field text, p_key text, p_removed boolean) RETURNS text
LANGUAGE sql IMMUTABLE AS $fn$
    SELECT 'k' || {{schema}}.ns(p_channel) || {{schema}}.ns(p_offset::text)
        || {{schema}}.ns(p_epoch) || {{schema}}.ns(p_time_ms::text) || {{schema}}.ns('0')
        || CASE WHEN p_client IS NULL THEN {{schema}}.ns('0')
                ELSE {{schema}}.ns('1') || {{schema}}.ns(coalesce(p_user, '')) || {{schema}}.ns(p_client)
                     || {{schema}}.nb(coalesce(p_conn_info, ''::bytea)) || {{schema}}.nb(coalesce(p_chan_info, ''::bytea))
           END
        || p_data_field || {{schema}}.ns('') || {{schema}}.ns(p_key)
        || {{schema}}.ns(CASE WHEN p_removed THEN '1' ELSE '0' END)
$fn$;

-- map_change sets p_key of p_channel to p_data (p_data_field: the same,
-- encoded by ns or nb), or removes it when p_removed, and returns the
-- change's offset and epoch. With p_skip_missing a removal of a key that
-- is not there, and with p_touch a publication of a key that is there,
-- change nothing (the touch restarts the key's TTL) and return the
-- stream's current position.
CREATE FUNCTION {{schema}}.map_change(
    p_channel text, p_key text, p_data bytea, p_data_field text, p_removed boolean,
    p_stream_size integer, p_stream_ttl_ms bigint, p_meta_ttl_ms bigint, p_key_ttl_ms bigint,
    p_user text, p_client text, p_conn_info bytea, p_chan_info bytea,
    p_skip_missing boolean, p_touch boolean)
RETURNS TABLE (change_offset bigint, change_epoch text)
LANGUAGE plpgsql VOLATILE AS $fn$
#variable_conflict use_column
DECLARE
    v_offset bigint;
    v_epoch  text;
    v_time   bigint := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
BEGIN
    IF p_channel IS NULL OR p_channel = '' OR p_key IS NULL OR p_key = '' THEN
        RAISE EXCEPTION 'herald map: channel and key are required';
    END IF;
    IF NOT p_removed AND p_data IS NULL THEN
        RAISE EXCEPTION 'herald map: data is required';
    END IF;
    IF coalesce(p_stream_size, 0) <= 0 OR coalesce(p_stream_ttl_ms, 0) <= 0 THEN
        RAISE EXCEPTION 'herald map: stream_size and stream_ttl must be positive';
    END IF;
    IF (p_removed AND p_skip_missing) OR (NOT p_removed AND p_touch) THEN
        -- The stream row's lock first, as every change takes it.
        PERFORM {{schema}}.touch(p_channel, coalesce(nullif(p_meta_ttl_ms, 0), 2592000000));
        PERFORM 1 FROM {{schema}}.streams WHERE channel = p_channel FOR UPDATE;
        IF p_removed AND NOT EXISTS (SELECT 1 FROM {{schema}}.map_state m
                WHERE m.channel = p_channel AND m.key = p_key AND (m.expire_at IS NULL OR m.expire_at > now())) THEN
            RETURN QUERY SELECT s.top_offset, s.epoch FROM {{schema}}.streams s WHERE s.channel = p_channel;
            RETURN;
        END IF;
        IF NOT p_removed THEN
            UPDATE {{schema}}.map_state m
               SET expire_at = CASE WHEN coalesce(p_key_ttl_ms, 0) > 0
                                    THEN now() + p_key_ttl_ms * interval '1 millisecond' END
             WHERE m.channel = p_channel AND m.key = p_key AND (m.expire_at IS NULL OR m.expire_at > now());
            IF FOUND THEN
                RETURN QUERY SELECT s.top_offset, s.epoch FROM {{schema}}.streams s WHERE s.channel = p_channel;
                RETURN;
            END IF;
        END IF;
    END IF;
    SELECT a.top_offset, a.epoch INTO v_offset, v_epoch
      FROM {{schema}}.alloc(ARRAY[p_channel], ARRAY[1], ARRAY[p_stream_size],
                            ARRAY[p_stream_ttl_ms], ARRAY[coalesce(nullif(p_meta_ttl_ms, 0), 2592000000)]) a;
    INSERT INTO {{schema}}.history (channel, pub_offset, time_ms, data, client_id, user_id, conn_info, chan_info, map_key, removed)
    VALUES (p_channel, v_offset, v_time, CASE WHEN p_removed THEN ''::bytea ELSE p_data END,
            p_client, p_user, p_conn_info, p_chan_info, p_key, p_removed);
    IF p_removed THEN
        DELETE FROM {{schema}}.map_state m WHERE m.channel = p_channel AND m.key = p_key;
    ELSE
        INSERT INTO {{schema}}.map_state AS m (channel, key, pub_offset, time_ms, data, client_id, user_id,
               conn_info, chan_info, expire_at, stream_size, stream_ttl_ms, meta_ttl_ms)
        VALUES (p_channel, p_key, v_offset, v_time, p_data, p_client, p_user, p_conn_info, p_chan_info,
                CASE WHEN coalesce(p_key_ttl_ms, 0) > 0 THEN now() + p_key_ttl_ms * interval '1 millisecond' END,
                p_stream_size, p_stream_ttl_ms, coalesce(nullif(p_meta_ttl_ms, 0), 2592000000))
        ON CONFLICT (channel, key) DO UPDATE SET
            pub_offset = excluded.pub_offset, time_ms = excluded.time_ms, data = excluded.data,
            client_id = excluded.client_id, user_id = excluded.user_id, conn_info = excluded.conn_info,
            chan_info = excluded.chan_info, expire_at = excluded.expire_at, stream_size = excluded.stream_size,
            stream_ttl_ms = excluded.stream_ttl_ms, meta_ttl_ms = excluded.meta_ttl_ms;
    END IF;
    PERFORM {{schema}}.emit_record(p_channel, v_offset, v_epoch,
        {{schema}}.encode_map(p_channel, v_offset, v_epoch, v_time, p_user, p_client, p_conn_info, p_chan_info,
                              CASE WHEN p_removed THEN {{schema}}.ns('') ELSE p_data_field END, p_key, p_removed));
    RETURN QUERY SELECT v_offset, v_epoch;
END
$fn$;

-- map_publish sets key of the map channel to data for its subscribers on
-- every node if and only if the calling transaction commits, and returns
-- the change's offset. The stream and key options are the channel's
-- namespace options (map.stream_size, map.stream_ttl, map.key_ttl; NULL
-- key_ttl: the key never expires). It locks the channel's stream until the
-- transaction ends, so call it late in long transactions.
CREATE FUNCTION {{schema}}.map_publish(
    channel text, key text, data jsonb, key_ttl interval DEFAULT NULL,
    stream_size integer DEFAULT 100, stream_ttl interval DEFAULT '1 minute',
    meta_ttl interval DEFAULT '30 days')
RETURNS bigint
LANGUAGE sql VOLATILE AS $fn$
    SELECT change_offset FROM {{schema}}.map_change(channel, key, convert_to(data::text, 'UTF8'),
        {{schema}}.ns(data::text), false, stream_size, {{schema}}.ms(stream_ttl), {{schema}}.ms(meta_ttl),
        coalesce({{schema}}.ms(key_ttl), 0), NULL, NULL, NULL, NULL, false, false)
$fn$;

-- map_remove removes key from the map channel, as map_publish sets it.
CREATE FUNCTION {{schema}}.map_remove(
    channel text, key text, stream_size integer DEFAULT 100,
    stream_ttl interval DEFAULT '1 minute', meta_ttl interval DEFAULT '30 days')
RETURNS bigint
LANGUAGE sql VOLATILE AS $fn$
    SELECT change_offset FROM {{schema}}.map_change(channel, key, NULL, NULL, true, stream_size,
        {{schema}}.ms(stream_ttl), {{schema}}.ms(meta_ttl), 0, NULL, NULL, NULL, NULL, false, false)
$fn$;

-- expire_map_keys removes up to p_limit keys whose TTL passed, each as a
-- change, and returns how many it removed. It takes each channel's stream
-- lock before the key's row, the order map_change uses, and skips keys
-- another transaction holds.
CREATE FUNCTION {{schema}}.expire_map_keys(p_limit integer) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    r   record;
    n   integer := 0;
BEGIN
    FOR r IN SELECT m.channel, m.key FROM {{schema}}.map_state m
              WHERE m.expire_at <= now() ORDER BY m.expire_at LIMIT p_limit LOOP
        PERFORM 1 FROM {{schema}}.streams s WHERE s.channel = r.channel FOR UPDATE SKIP LOCKED;
        IF NOT FOUND AND EXISTS (SELECT 1 FROM {{schema}}.streams s WHERE s.channel = r.channel) THEN
            CONTINUE; -- a change is being made to the channel: the next sweep
        END IF;
        PERFORM {{schema}}.map_change(r.channel, r.key, NULL, NULL, true, m.stream_size, m.stream_ttl_ms,
                                      m.meta_ttl_ms, 0, NULL, NULL, NULL, NULL, false, false)
           FROM {{schema}}.map_state m
          WHERE m.channel = r.channel AND m.key = r.key AND m.expire_at <= now();
        IF FOUND THEN
            n := n + 1;
        END IF;
    END LOOP;
    RETURN n;
END
$fn$;
