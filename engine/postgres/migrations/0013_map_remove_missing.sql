-- A removal with p_skip_missing of a key that is not in the state is
-- refused as a key mode refusal is (HM404), instead of answering the
-- stream's position: the caller tells it from a removal made, as
-- Centrifugo answers it suppressed with key_not_found and appends nothing
-- (centrifuge v0.40.1 map_broker_memory.go remove, map_broker_add.lua).
--
-- map_change_bounded (0011) otherwise as before.

CREATE OR REPLACE FUNCTION {{schema}}.map_change_bounded(
    p_channel text, p_key text, p_data bytea, p_data_field text, p_removed boolean,
    p_stream_size integer, p_stream_ttl_ms bigint, p_meta_ttl_ms bigint, p_key_ttl_ms bigint,
    p_user text, p_client text, p_conn_info bytea, p_chan_info bytea,
    p_skip_missing boolean, p_touch boolean, p_max_keys integer, p_tags jsonb, p_key_mode text,
    p_version bigint, p_version_epoch text)
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
    IF p_tags IS NOT NULL AND jsonb_typeof(p_tags) <> 'object' THEN
        RAISE EXCEPTION 'herald map: tags must be a JSON object';
    END IF;
    IF (p_removed AND p_skip_missing) OR (NOT p_removed AND (p_touch OR coalesce(p_max_keys, 0) > 0
            OR coalesce(p_key_mode, '') <> '' OR coalesce(p_version, 0) > 0)) THEN
        -- The stream row's lock first, as every change takes it.
        PERFORM {{schema}}.touch(p_channel, coalesce(nullif(p_meta_ttl_ms, 0), 2592000000));
        PERFORM 1 FROM {{schema}}.streams WHERE channel = p_channel FOR UPDATE;
        IF p_removed AND NOT EXISTS (SELECT 1 FROM {{schema}}.map_state m
                WHERE m.channel = p_channel AND m.key = p_key AND (m.expire_at IS NULL OR m.expire_at > now())) THEN
            RAISE EXCEPTION 'herald map: key % not found', p_key USING ERRCODE = 'HM404';
        END IF;
        IF NOT p_removed AND p_touch THEN
            UPDATE {{schema}}.map_state m
               SET expire_at = CASE WHEN coalesce(p_key_ttl_ms, 0) > 0
                                    THEN now() + p_key_ttl_ms * interval '1 millisecond' END
             WHERE m.channel = p_channel AND m.key = p_key AND (m.expire_at IS NULL OR m.expire_at > now());
            IF FOUND THEN
                RETURN QUERY SELECT s.top_offset, s.epoch FROM {{schema}}.streams s WHERE s.channel = p_channel;
                RETURN;
            END IF;
        END IF;
        IF NOT p_removed AND coalesce(p_key_mode, '') <> '' THEN
            IF EXISTS (SELECT 1 FROM {{schema}}.map_state m
                    WHERE m.channel = p_channel AND m.key = p_key AND (m.expire_at IS NULL OR m.expire_at > now())) THEN
                IF p_key_mode = 'if_new' THEN
                    RAISE EXCEPTION 'herald map: key % exists', p_key USING ERRCODE = 'HM409';
                END IF;
            ELSIF p_key_mode = 'if_exists' THEN
                RAISE EXCEPTION 'herald map: key % not found', p_key USING ERRCODE = 'HM404';
            END IF;
        END IF;
        IF NOT p_removed AND coalesce(p_version, 0) > 0 AND EXISTS (SELECT 1 FROM {{schema}}.map_state m
                WHERE m.channel = p_channel AND m.key = p_key AND (m.expire_at IS NULL OR m.expire_at > now())
                  AND m.version >= p_version AND m.version_epoch = coalesce(p_version_epoch, '')) THEN
            RAISE EXCEPTION 'herald map: key % holds version % or newer', p_key, p_version USING ERRCODE = 'HM412';
        END IF;
        IF NOT p_removed AND coalesce(p_max_keys, 0) > 0
           AND NOT EXISTS (SELECT 1 FROM {{schema}}.map_state m WHERE m.channel = p_channel AND m.key = p_key)
           AND (SELECT count(*) FROM (SELECT 1 FROM {{schema}}.map_state m WHERE m.channel = p_channel
                                       LIMIT p_max_keys) n) >= p_max_keys THEN
            RAISE EXCEPTION 'herald map: channel % holds % keys', p_channel, p_max_keys USING ERRCODE = 'HM429';
        END IF;
    END IF;
    SELECT a.top_offset, a.epoch INTO v_offset, v_epoch
      FROM {{schema}}.alloc(ARRAY[p_channel], ARRAY[1], ARRAY[p_stream_size],
                            ARRAY[p_stream_ttl_ms], ARRAY[coalesce(nullif(p_meta_ttl_ms, 0), 2592000000)]) a;
    INSERT INTO {{schema}}.history (channel, pub_offset, time_ms, data, client_id, user_id, conn_info, chan_info, tags, map_key, removed)
    VALUES (p_channel, v_offset, v_time, CASE WHEN p_removed THEN ''::bytea ELSE p_data END,
            p_client, p_user, p_conn_info, p_chan_info, p_tags, p_key, p_removed);
    IF p_removed THEN
        DELETE FROM {{schema}}.map_state m WHERE m.channel = p_channel AND m.key = p_key;
    ELSE
        INSERT INTO {{schema}}.map_state AS m (channel, key, pub_offset, time_ms, data, client_id, user_id,
               conn_info, chan_info, tags, version, version_epoch, expire_at, stream_size, stream_ttl_ms, meta_ttl_ms)
        VALUES (p_channel, p_key, v_offset, v_time, p_data, p_client, p_user, p_conn_info, p_chan_info, p_tags,
                nullif(p_version, 0), CASE WHEN coalesce(p_version, 0) > 0 THEN coalesce(p_version_epoch, '') END,
                CASE WHEN coalesce(p_key_ttl_ms, 0) > 0 THEN now() + p_key_ttl_ms * interval '1 millisecond' END,
                p_stream_size, p_stream_ttl_ms, coalesce(nullif(p_meta_ttl_ms, 0), 2592000000))
        ON CONFLICT (channel, key) DO UPDATE SET
            pub_offset = excluded.pub_offset, time_ms = excluded.time_ms, data = excluded.data,
            client_id = excluded.client_id, user_id = excluded.user_id, conn_info = excluded.conn_info,
            chan_info = excluded.chan_info, tags = excluded.tags,
            version = CASE WHEN excluded.version IS NOT NULL THEN excluded.version
                           WHEN m.expire_at IS NULL OR m.expire_at > now() THEN m.version END,
            version_epoch = CASE WHEN excluded.version IS NOT NULL THEN excluded.version_epoch
                                 WHEN m.expire_at IS NULL OR m.expire_at > now() THEN m.version_epoch END,
            expire_at = excluded.expire_at,
            stream_size = excluded.stream_size, stream_ttl_ms = excluded.stream_ttl_ms,
            meta_ttl_ms = excluded.meta_ttl_ms;
    END IF;
    PERFORM {{schema}}.emit_record(p_channel, v_offset, v_epoch,
        {{schema}}.encode_map_tags(p_channel, v_offset, v_epoch, v_time, p_tags, p_user, p_client, p_conn_info, p_chan_info,
                                   CASE WHEN p_removed THEN {{schema}}.ns('') ELSE p_data_field END, p_key, p_removed));
    RETURN QUERY SELECT v_offset, v_epoch;
END
$fn$;
