-- Herald PostgreSQL engine, schema version 1.
--
-- {{schema}} is replaced by the configured schema name before this runs.
-- Every object lives in that schema, so several Herald clusters (or test
-- runs) can share one database under different schema names.

-- One row per channel stream: its position (top_offset, epoch) and what is
-- kept of it. Publications with offsets below first_offset, below
-- top_offset - size + 1, or all of them once expire_at has passed, are
-- logically gone even before the janitor deletes their rows. The expiry
-- columns change on every publication and are deliberately not indexed, so
-- that updates stay HOT; the janitor finds expired streams with a bounded
-- scan instead.
CREATE TABLE {{schema}}.streams (
    channel        text        COLLATE "C" PRIMARY KEY,
    epoch          text        NOT NULL,
    top_offset     bigint      NOT NULL,
    first_offset   bigint      NOT NULL DEFAULT 1,
    size           integer     NOT NULL DEFAULT 0,
    expire_at      timestamptz,
    meta_expire_at timestamptz NOT NULL
) WITH (fillfactor = 70);

-- Publications of channels with history. Rows leave through the size trim
-- in alloc, and the janitor's TTL and meta expiry sweeps; vacuum runs early
-- because the table churns constantly.
CREATE TABLE {{schema}}.history (
    channel    text   COLLATE "C" NOT NULL,
    pub_offset bigint NOT NULL,
    time_ms    bigint NOT NULL,
    data       bytea  NOT NULL,
    client_id  text,
    user_id    text,
    conn_info  bytea,
    chan_info  bytea,
    tags       jsonb,
    PRIMARY KEY (channel, pub_offset)
) WITH (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_insert_scale_factor = 0.05);

-- Records too large for one notification. The notification carries the id;
-- rows stay for an hour (the engine's SpillRetention) so that a node that
-- lags behind the notification queue still finds them.
CREATE TABLE {{schema}}.spill (
    id        bigserial   PRIMARY KEY,
    body      bytea       NOT NULL,
    expire_at timestamptz NOT NULL
);
CREATE INDEX spill_expire_at ON {{schema}}.spill (expire_at);

CREATE TABLE {{schema}}.presence (
    channel   text        COLLATE "C" NOT NULL,
    client_id text        NOT NULL,
    user_id   text        NOT NULL,
    conn_info bytea,
    chan_info bytea,
    node_id   text        NOT NULL,
    expire_at timestamptz NOT NULL,
    PRIMARY KEY (channel, client_id)
);
CREATE INDEX presence_expire_at ON {{schema}}.presence (expire_at);
CREATE INDEX presence_node_id ON {{schema}}.presence (node_id);

-- Live nodes. A node refreshes its row; once it stops, any node's janitor
-- deletes the row and the presence entries the node owned.
CREATE TABLE {{schema}}.nodes (
    id           text        PRIMARY KEY,
    started_at   timestamptz NOT NULL,
    heartbeat_at timestamptz NOT NULL,
    expire_at    timestamptz NOT NULL
);

-- Numbers the notifications sent from SQL, so that two identical
-- publications in one transaction are not collapsed by NOTIFY.
CREATE SEQUENCE {{schema}}.notify_seq;

CREATE FUNCTION {{schema}}.new_epoch() RETURNS text
LANGUAGE sql VOLATILE AS $fn$
    SELECT left(replace(gen_random_uuid()::text, '-', ''), 12)
$fn$;

-- ms converts an interval to whole milliseconds.
CREATE FUNCTION {{schema}}.ms(i interval) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $fn$
    SELECT (extract(epoch FROM i) * 1000)::bigint
$fn$;

-- alloc reserves p_counts[i] offsets in stream p_channels[i] (channels must
-- be distinct) and returns each stream's new top offset and epoch: the
-- reserved offsets are top_offset - count + 1 .. top_offset. The engine calls
-- it once per publishing transaction for all the channels of a batch, and
-- publish() calls it for one, so both paths number publications the same
-- way. The row locks it takes are held until the caller commits; that is
-- what makes one channel's offsets commit, and so notify, in order.
CREATE FUNCTION {{schema}}.alloc(
    p_channels text[], p_counts integer[], p_sizes integer[],
    p_ttls_ms bigint[], p_meta_ttls_ms bigint[])
RETURNS TABLE (channel text, top_offset bigint, epoch text)
LANGUAGE plpgsql VOLATILE
-- Every statement here touches a few rows per channel through the primary
-- keys. A generic plan that guesses wrong about the arrays (a hash join or
-- a scan of the whole history table) would make every publication pay for
-- the table's size, so the plans are pinned to index lookups.
SET enable_seqscan = off SET enable_hashjoin = off
SET enable_mergejoin = off SET enable_bitmapscan = off
AS $fn$
#variable_conflict use_column
DECLARE
    v_channels text[];
    v_tops     bigint[];
    v_epochs   text[];
    v_from     bigint[];
    v_below    bigint[];
BEGIN
    -- The upsert takes the streams' row locks in channel order (the input
    -- is sorted), so batches that share channels queue up instead of
    -- deadlocking. The epoch expression is written out rather than calling
    -- new_epoch(): it is evaluated for every row, and a SQL function call
    -- costs far more than the expression.
    WITH input AS (
        SELECT t.c, t.n, t.sz, t.ttl, t.mttl
          FROM unnest(p_channels, p_counts, p_sizes, p_ttls_ms, p_meta_ttls_ms) AS t (c, n, sz, ttl, mttl)
    ), up AS (
        INSERT INTO {{schema}}.streams AS s
               (channel, epoch, top_offset, first_offset, size, expire_at, meta_expire_at)
        SELECT i.c, left(replace(gen_random_uuid()::text, '-', ''), 12), i.n, 1, i.sz,
               now() + i.ttl * interval '1 millisecond',
               now() + i.mttl * interval '1 millisecond'
          FROM input i
         ORDER BY i.c
        ON CONFLICT (channel) DO UPDATE SET
            epoch = CASE WHEN s.meta_expire_at <= now() THEN excluded.epoch ELSE s.epoch END,
            top_offset = CASE WHEN s.meta_expire_at <= now() THEN excluded.top_offset
                              ELSE s.top_offset + excluded.top_offset END,
            first_offset = CASE WHEN s.meta_expire_at <= now() THEN 1
                                WHEN s.expire_at IS NULL OR s.expire_at <= now() THEN s.top_offset + 1
                                ELSE s.first_offset END,
            size = excluded.size,
            expire_at = excluded.expire_at,
            meta_expire_at = CASE WHEN s.meta_expire_at <= now() THEN excluded.meta_expire_at
                                  ELSE greatest(s.meta_expire_at, excluded.meta_expire_at) END
        RETURNING s.channel, s.top_offset, s.epoch, s.size, s.first_offset
    )
    -- What each stream must drop before this batch's rows go in:
    --   started (again) from offset 1 (first_offset = 1, top = count):
    --     every row, since the old epoch's offsets would collide;
    --   publications expired or removed (first_offset past the old top):
    --     every row below first_offset;
    --   otherwise the rows that fall out of the size window, exactly as
    --     many as the batch adds, so the index range scan never walks the
    --     dead entries earlier trims left behind. Rows left over when a
    --     stream's size shrinks are hidden from reads and go with its TTL.
    SELECT array_agg(up.channel), array_agg(up.top_offset), array_agg(up.epoch),
           array_agg(CASE WHEN up.first_offset > up.top_offset - i.n THEN 0
                          ELSE up.top_offset - up.size + 1 - i.n END),
           array_agg(CASE WHEN up.first_offset = 1 AND up.top_offset = i.n THEN 9223372036854775807
                          WHEN up.first_offset > up.top_offset - i.n THEN up.first_offset
                          ELSE up.top_offset - up.size + 1 END)
      INTO v_channels, v_tops, v_epochs, v_from, v_below
      FROM up JOIN input i ON i.c = up.channel;

    -- A new statement, so its snapshot sees every row committed before
    -- the row locks above were granted.
    DELETE FROM {{schema}}.history h
     USING unnest(v_channels, v_from, v_below) AS b (c, from_offset, below)
     WHERE h.channel = b.c AND h.pub_offset >= b.from_offset AND h.pub_offset < b.below;

    RETURN QUERY SELECT * FROM unnest(v_channels, v_tops, v_epochs);
END
$fn$;

-- touch makes sure p_channel has a stream position that lives at least 90%
-- of p_meta_ttl_ms from now, creating it (offset 0, new epoch) or starting
-- it over if it expired. Reads call it; it writes only when the position is
-- missing or due for extension.
CREATE FUNCTION {{schema}}.touch(p_channel text, p_meta_ttl_ms bigint) RETURNS void
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    r    {{schema}}.streams%ROWTYPE;
    want timestamptz := now() + p_meta_ttl_ms * interval '1 millisecond';
BEGIN
    SELECT * INTO r FROM {{schema}}.streams WHERE channel = p_channel;
    IF FOUND AND r.meta_expire_at > now()
       AND r.meta_expire_at >= now() + p_meta_ttl_ms * 0.9 * interval '1 millisecond' THEN
        RETURN;
    END IF;
    IF FOUND THEN
        SELECT * INTO r FROM {{schema}}.streams WHERE channel = p_channel FOR UPDATE;
        IF FOUND AND r.meta_expire_at <= now() THEN
            DELETE FROM {{schema}}.history WHERE channel = p_channel AND pub_offset <= r.top_offset;
            UPDATE {{schema}}.streams
               SET epoch = {{schema}}.new_epoch(), top_offset = 0, first_offset = 1, size = 0,
                   expire_at = NULL, meta_expire_at = want
             WHERE channel = p_channel;
            RETURN;
        ELSIF FOUND THEN
            UPDATE {{schema}}.streams SET meta_expire_at = greatest(meta_expire_at, want)
             WHERE channel = p_channel;
            RETURN;
        END IF;
    END IF;
    INSERT INTO {{schema}}.streams AS s (channel, epoch, top_offset, first_offset, size, expire_at, meta_expire_at)
    VALUES (p_channel, {{schema}}.new_epoch(), 0, 1, 0, NULL, want)
    ON CONFLICT (channel) DO UPDATE SET meta_expire_at = greatest(s.meta_expire_at, excluded.meta_expire_at);
END
$fn$;

-- The notification encoding (see codec.go): a record is a kind letter and
-- fields; a field is its length in bytes, then ':' and the bytes, or '!'
-- and their base64 when the bytes are not valid UTF-8 text.
CREATE FUNCTION {{schema}}.ns(t text) RETURNS text
LANGUAGE sql IMMUTABLE AS $fn$
    SELECT octet_length(t)::text || ':' || t
$fn$;

-- nb encodes bytes as a field: raw when they are UTF-8 text (which also
-- rules out NUL), base64 otherwise.
CREATE FUNCTION {{schema}}.nb(b bytea) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $fn$
DECLARE
    t text;
BEGIN
    BEGIN
        t := convert_from(b, 'UTF8');
    EXCEPTION WHEN character_not_in_repertoire OR untranslatable_character THEN
        t := encode(b, 'base64');
        RETURN octet_length(t)::text || '!' || t;
    END;
    RETURN octet_length(t)::text || ':' || t;
END
$fn$;

-- encode_pub builds a publication record without client info, with
-- p_data_field already encoded by ns or nb.
CREATE FUNCTION {{schema}}.encode_pub(
    p_channel text, p_offset bigint, p_epoch text, p_time_ms bigint,
    p_tags jsonb, p_data_field text) RETURNS text
LANGUAGE sql IMMUTABLE AS $fn$
    SELECT 'p' || {{schema}}.ns(p_channel) || {{schema}}.ns(p_offset::text)
        || {{schema}}.ns(p_epoch) || {{schema}}.ns(p_time_ms::text)
        || {{schema}}.ns(count(*)::text)
        || coalesce(string_agg({{schema}}.ns(key) || {{schema}}.ns(value), ''), '')
        || {{schema}}.ns('0') || p_data_field
      FROM jsonb_each_text(coalesce(p_tags, '{}'::jsonb))
$fn$;

-- publish_field is what publish and publish_bytes share: data_field is
-- data already encoded as a field.
CREATE FUNCTION {{schema}}.publish_field(
    p_channel text, p_data bytea, p_data_field text, p_history_size integer,
    p_history_ttl interval, p_tags jsonb, p_history_meta_ttl interval)
RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    v_offset bigint := 0;
    v_epoch  text := '';
    v_time   bigint := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
    v_hdr    text;
    v_rec    text;
    v_spill  bigint;
BEGIN
    IF p_channel IS NULL OR p_channel = '' OR p_data IS NULL THEN
        RAISE EXCEPTION 'herald publish: channel and data are required';
    END IF;
    IF p_tags IS NOT NULL AND jsonb_typeof(p_tags) <> 'object' THEN
        RAISE EXCEPTION 'herald publish: tags must be a JSON object';
    END IF;
    -- Tags are strings to Herald: other JSON values are kept as their text.
    p_tags := (SELECT jsonb_object_agg(key, value) FROM jsonb_each_text(p_tags));
    IF coalesce(p_history_size, 0) > 0 AND coalesce(p_history_ttl, interval '0') > interval '0' THEN
        SELECT a.top_offset, a.epoch INTO v_offset, v_epoch
          FROM {{schema}}.alloc(ARRAY[p_channel], ARRAY[1], ARRAY[p_history_size],
                                ARRAY[{{schema}}.ms(p_history_ttl)],
                                ARRAY[{{schema}}.ms(coalesce(p_history_meta_ttl, interval '30 days'))]) a;
        INSERT INTO {{schema}}.history (channel, pub_offset, time_ms, data, tags)
        VALUES (p_channel, v_offset, v_time, p_data, p_tags);
    END IF;
    v_rec := {{schema}}.encode_pub(p_channel, v_offset, v_epoch, v_time, p_tags, p_data_field);
    v_hdr := 'n' || {{schema}}.ns('s' || nextval('{{schema}}.notify_seq')::text);
    IF octet_length(v_hdr) + octet_length(v_rec) > 7999 THEN
        INSERT INTO {{schema}}.spill (body, expire_at)
        VALUES (convert_to(v_rec, 'UTF8'), now() + interval '1 hour')
        RETURNING id INTO v_spill;
        v_rec := 'r' || {{schema}}.ns(p_channel) || {{schema}}.ns(v_offset::text)
              || {{schema}}.ns(v_epoch) || {{schema}}.ns(v_spill::text);
    END IF;
    PERFORM pg_notify('{{schema}}_' || (hashtext(p_channel) & 15)::text, v_hdr || v_rec);
    RETURN v_offset;
END
$fn$;

-- publish sends data to channel's subscribers on every node if and only if
-- the calling transaction commits. With history_size and history_ttl both
-- positive the publication is appended to the channel's stream and its
-- offset returned (0 otherwise). It locks the channel's stream until the
-- transaction ends, so call it late in long transactions.
CREATE FUNCTION {{schema}}.publish(
    channel text, data jsonb, history_size integer DEFAULT 0,
    history_ttl interval DEFAULT '0', tags jsonb DEFAULT NULL,
    history_meta_ttl interval DEFAULT '30 days')
RETURNS bigint
LANGUAGE sql VOLATILE AS $fn$
    SELECT {{schema}}.publish_field(channel, convert_to(data::text, 'UTF8'),
                                    {{schema}}.ns(data::text), history_size,
                                    history_ttl, tags, history_meta_ttl)
$fn$;

-- publish_bytes is publish for payloads that are not JSON (Protobuf
-- clients, for example).
CREATE FUNCTION {{schema}}.publish_bytes(
    channel text, data bytea, history_size integer DEFAULT 0,
    history_ttl interval DEFAULT '0', tags jsonb DEFAULT NULL,
    history_meta_ttl interval DEFAULT '30 days')
RETURNS bigint
LANGUAGE sql VOLATILE AS $fn$
    SELECT {{schema}}.publish_field(channel, data, {{schema}}.nb(data), history_size,
                                    history_ttl, tags, history_meta_ttl)
$fn$;
