-- map_publish and map_remove refuse, as publish does since 0006, a channel
-- that belongs to another shard than this database: a change written on the
-- wrong shard would reach no subscriber of the channel and leave its state
-- split over two databases. Bodies as in 0004, with the check first.

CREATE OR REPLACE FUNCTION {{schema}}.map_publish(
    channel text, key text, data jsonb, key_ttl interval DEFAULT NULL,
    stream_size integer DEFAULT 100, stream_ttl interval DEFAULT '1 minute',
    meta_ttl interval DEFAULT '30 days')
RETURNS bigint
LANGUAGE sql VOLATILE AS $fn$
    SELECT {{schema}}.check_shard(channel);
    SELECT change_offset FROM {{schema}}.map_change(channel, key, convert_to(data::text, 'UTF8'),
        {{schema}}.ns(data::text), false, stream_size, {{schema}}.ms(stream_ttl), {{schema}}.ms(meta_ttl),
        coalesce({{schema}}.ms(key_ttl), 0), NULL, NULL, NULL, NULL, false, false)
$fn$;

CREATE OR REPLACE FUNCTION {{schema}}.map_remove(
    channel text, key text, stream_size integer DEFAULT 100,
    stream_ttl interval DEFAULT '1 minute', meta_ttl interval DEFAULT '30 days')
RETURNS bigint
LANGUAGE sql VOLATILE AS $fn$
    SELECT {{schema}}.check_shard(channel);
    SELECT change_offset FROM {{schema}}.map_change(channel, key, NULL, NULL, true, stream_size,
        {{schema}}.ms(stream_ttl), {{schema}}.ms(meta_ttl), 0, NULL, NULL, NULL, NULL, false, false)
$fn$;
