-- Herald PostgreSQL engine, schema version 6: the placement of the sharded
-- engine (shard_of) and the refusal of publications for another shard.
--
-- shard_of(channel, n) is the shard, in [0, n), that owns channel when a
-- cluster spreads its channels over n databases (engine.postgres.shards):
-- the same answer as the Go function sharded.ShardOf, so SQL that
-- publishes with publish() can call it on the database of the right shard.
-- It is jump consistent hashing over the first 8 bytes (big-endian) of the
-- channel's MD5 digest. The 64-bit multiplication wraps, so it is done in
-- numeric modulo 2^64; the division is done in double precision, as the Go
-- version does, so both agree bit for bit. The channel's bytes are those
-- of the database encoding: UTF-8 databases agree with Go for every name.
CREATE FUNCTION {{schema}}.shard_of(p_channel text, p_shards integer) RETURNS integer
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
DECLARE
    v_key numeric := ('x' || substr(md5(p_channel), 1, 16))::bit(64)::bigint;
    v_b   bigint  := -1;
    v_j   bigint  := 0;
BEGIN
    IF p_shards <= 1 THEN
        RETURN 0;
    END IF;
    IF v_key < 0 THEN
        v_key := v_key + 18446744073709551616;
    END IF;
    WHILE v_j < p_shards LOOP
        v_b := v_j;
        v_key := mod(v_key * 2862933555777941757 + 1, 18446744073709551616);
        v_j := floor((v_b + 1)::float8 * (2147483648::float8 / (div(v_key, 8589934592) + 1)::float8))::bigint;
    END LOOP;
    RETURN v_b::integer;
END
$fn$;

-- shard_layout says which shard of how many this database is, when the
-- cluster is sharded: the sharded engine writes it on every start (and
-- it is absent with one database). publish() and publish_bytes() read it
-- to refuse a channel that another shard owns: published here, it would
-- reach no node, since every node listens for a channel on its shard only.
CREATE TABLE {{schema}}.shard_layout (
    id     boolean PRIMARY KEY DEFAULT true CHECK (id),
    shard  integer NOT NULL,
    shards integer NOT NULL,
    CHECK (shards >= 1 AND shard >= 0 AND shard < shards)
);

-- check_shard raises an error naming the right shard when channel belongs
-- to another shard than this database.
CREATE FUNCTION {{schema}}.check_shard(p_channel text) RETURNS void
LANGUAGE plpgsql STABLE AS $fn$
DECLARE
    v_shard  integer;
    v_shards integer;
    v_home   integer;
BEGIN
    SELECT shard, shards INTO v_shard, v_shards FROM {{schema}}.shard_layout;
    IF NOT FOUND OR v_shards <= 1 OR p_channel IS NULL THEN
        RETURN;
    END IF;
    v_home := {{schema}}.shard_of(p_channel, v_shards);
    IF v_home <> v_shard THEN
        RAISE EXCEPTION 'herald publish: channel "%" belongs to shard % of %, and this database is shard %',
            p_channel, v_home, v_shards, v_shard
            USING HINT = format('publish on the database of shard %s (engine.postgres.shards[%s]); {{schema}}.shard_of(channel, %s) names a channel''s shard', v_home, v_home, v_shards);
    END IF;
END
$fn$;

CREATE OR REPLACE FUNCTION {{schema}}.publish(
    channel text, data jsonb, history_size integer DEFAULT 0,
    history_ttl interval DEFAULT '0', tags jsonb DEFAULT NULL,
    history_meta_ttl interval DEFAULT '30 days')
RETURNS bigint
LANGUAGE sql VOLATILE AS $fn$
    SELECT {{schema}}.check_shard(channel);
    SELECT {{schema}}.publish_field(channel, convert_to(data::text, 'UTF8'),
                                    {{schema}}.ns(data::text), history_size,
                                    history_ttl, tags, history_meta_ttl)
$fn$;

CREATE OR REPLACE FUNCTION {{schema}}.publish_bytes(
    channel text, data bytea, history_size integer DEFAULT 0,
    history_ttl interval DEFAULT '0', tags jsonb DEFAULT NULL,
    history_meta_ttl interval DEFAULT '30 days')
RETURNS bigint
LANGUAGE sql VOLATILE AS $fn$
    SELECT {{schema}}.check_shard(channel);
    SELECT {{schema}}.publish_field(channel, data, {{schema}}.nb(data), history_size,
                                    history_ttl, tags, history_meta_ttl)
$fn$;
