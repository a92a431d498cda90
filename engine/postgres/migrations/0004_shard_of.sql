-- Herald PostgreSQL engine, schema version 4: shard_of, the channel
-- placement of the sharded engine.
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
