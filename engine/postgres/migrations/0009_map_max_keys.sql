-- map_change_bounded is map_change refusing the publication of a new key in
-- a channel that already holds p_max_keys keys (0: no bound), with SQLSTATE
-- HM429 and nothing changed. It takes the stream row's lock first, as every
-- change does, so concurrent changes of the channel count in turn. Keys
-- past their TTL that the janitor has not removed yet count. The scan stops
-- at p_max_keys rows.

CREATE FUNCTION {{schema}}.map_change_bounded(
    p_channel text, p_key text, p_data bytea, p_data_field text, p_removed boolean,
    p_stream_size integer, p_stream_ttl_ms bigint, p_meta_ttl_ms bigint, p_key_ttl_ms bigint,
    p_user text, p_client text, p_conn_info bytea, p_chan_info bytea,
    p_skip_missing boolean, p_touch boolean, p_max_keys integer)
RETURNS TABLE (change_offset bigint, change_epoch text)
LANGUAGE plpgsql VOLATILE AS $fn$
BEGIN
    IF NOT p_removed AND coalesce(p_max_keys, 0) > 0 THEN
        PERFORM {{schema}}.touch(p_channel, coalesce(nullif(p_meta_ttl_ms, 0), 2592000000));
        PERFORM 1 FROM {{schema}}.streams s WHERE s.channel = p_channel FOR UPDATE;
        IF NOT EXISTS (SELECT 1 FROM {{schema}}.map_state m WHERE m.channel = p_channel AND m.key = p_key)
           AND (SELECT count(*) FROM (SELECT 1 FROM {{schema}}.map_state m WHERE m.channel = p_channel
                                       LIMIT p_max_keys) n) >= p_max_keys THEN
            RAISE EXCEPTION 'herald map: channel % holds % keys', p_channel, p_max_keys USING ERRCODE = 'HM429';
        END IF;
    END IF;
    RETURN QUERY SELECT c.change_offset, c.change_epoch FROM {{schema}}.map_change(p_channel, p_key, p_data,
        p_data_field, p_removed, p_stream_size, p_stream_ttl_ms, p_meta_ttl_ms, p_key_ttl_ms, p_user, p_client,
        p_conn_info, p_chan_info, p_skip_missing, p_touch) c;
END
$fn$;
