-- Herald PostgreSQL engine, schema version 3: table change streams.
--
-- stream_table turns every INSERT, UPDATE and DELETE of a table into a
-- publication {"op", "old", "new"} on a channel computed from the row. A
-- row trigger queues the change in table_changes, in the writing
-- transaction; a deferred trigger publishes the transaction's queued
-- changes when it commits, all at once: one offset allocation per channel
-- (allocating per row would update the channel's stream row once per row,
-- and a transaction that updates one row many times slows down with every
-- update), the history rows in one insert, then the notifications. So a
-- change is delivered if and only if the transaction commits, in commit
-- order per channel (the stream row stays locked from the allocation to
-- the commit, which is now only the end of the commit), with history and
-- recovery like any other publication; large rows take the spill path.

-- Changes queued by the running transactions, published at their commit.
CREATE TABLE {{schema}}.table_changes (
    txid         xid8     NOT NULL DEFAULT pg_current_xact_id(),
    seq          bigint   GENERATED ALWAYS AS IDENTITY,
    channel      text     NOT NULL,
    data         jsonb    NOT NULL,
    history_size integer  NOT NULL,
    history_ttl  interval NOT NULL,
    PRIMARY KEY (txid, seq)
);

-- emit_record sends one encoded publication record (encode_pub) to the
-- nodes, through the spill table when it is too large for a notification.
CREATE FUNCTION {{schema}}.emit_record(p_channel text, p_offset bigint, p_epoch text, p_rec text)
RETURNS void
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    v_hdr   text := 'n' || {{schema}}.ns('s' || nextval('{{schema}}.notify_seq')::text);
    v_rec   text := p_rec;
    v_spill bigint;
BEGIN
    IF octet_length(v_hdr) + octet_length(v_rec) > 7999 THEN
        INSERT INTO {{schema}}.spill (body, expire_at)
        VALUES (convert_to(v_rec, 'UTF8'), now() + interval '1 hour')
        RETURNING id INTO v_spill;
        v_rec := 'r' || {{schema}}.ns(p_channel) || {{schema}}.ns(p_offset::text)
              || {{schema}}.ns(p_epoch) || {{schema}}.ns(v_spill::text);
    END IF;
    PERFORM pg_notify('{{schema}}_' || (hashtext(p_channel) & 15)::text, v_hdr || v_rec);
END
$fn$;

-- flush_changes publishes the queued changes of the running transaction,
-- in the order they were made. It is a deferred constraint trigger, so it
-- fires once per queued row at commit; the first firing publishes them
-- all and notes the last sequence number in a transaction-local setting,
-- and the later firings return at once.
CREATE FUNCTION {{schema}}.flush_changes() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    v_done  text := current_setting('{{schema}}.flushed_seq', true);
    v_time  bigint;
    v_seqs  bigint[];
    v_chans text[];
    v_datas jsonb[];
    v_max   bigint;
    a_ch    text[];
    a_n     integer[];
    a_sz    integer[];
    a_ttl   bigint[];
    al_ch   text[];
    al_top  bigint[];
    al_ep   text[];
    r       record;
BEGIN
    IF v_done IS NOT NULL AND v_done <> '' AND NEW.seq <= v_done::bigint THEN
        RETURN NULL;
    END IF;
    v_time := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
    WITH d AS (DELETE FROM {{schema}}.table_changes WHERE txid = pg_current_xact_id()
               RETURNING seq, channel, data, history_size, history_ttl),
         h AS (SELECT channel, count(*)::integer AS n, max(history_size) AS sz,
                      max({{schema}}.ms(history_ttl)) AS ttl
                 FROM d WHERE history_size > 0 AND history_ttl > interval '0' GROUP BY channel)
    SELECT (SELECT array_agg(seq ORDER BY seq) FROM d), (SELECT array_agg(channel ORDER BY seq) FROM d),
           (SELECT array_agg(data ORDER BY seq) FROM d), (SELECT max(seq) FROM d),
           (SELECT array_agg(channel ORDER BY channel) FROM h), (SELECT array_agg(n ORDER BY channel) FROM h),
           (SELECT array_agg(sz ORDER BY channel) FROM h), (SELECT array_agg(ttl ORDER BY channel) FROM h)
      INTO v_seqs, v_chans, v_datas, v_max, a_ch, a_n, a_sz, a_ttl;
    IF v_max IS NULL THEN
        RETURN NULL;
    END IF;
    PERFORM set_config('{{schema}}.flushed_seq', v_max::text, true);
    -- One allocation for all the channels with history.
    IF a_ch IS NOT NULL THEN
        SELECT array_agg(x.channel), array_agg(x.top_offset), array_agg(x.epoch)
          INTO al_ch, al_top, al_ep
          FROM {{schema}}.alloc(a_ch, a_n, a_sz, a_ttl,
                                array_fill({{schema}}.ms(interval '30 days'), ARRAY[cardinality(a_ch)])) x;
    END IF;
    FOR r IN
        WITH u AS (SELECT * FROM unnest(v_seqs, v_chans, v_datas) AS u (seq, channel, data)),
             al AS (SELECT * FROM unnest(al_ch, al_top, al_ep, a_n) AS al (channel, top, epoch, n)),
             pos AS (SELECT u.seq, u.channel, u.data,
                            CASE WHEN al.channel IS NULL THEN 0
                                 ELSE al.top - al.n + row_number() OVER (PARTITION BY u.channel ORDER BY u.seq) END AS off,
                            coalesce(al.epoch, '') AS epoch
                       FROM u LEFT JOIN al ON al.channel = u.channel),
             hist AS (INSERT INTO {{schema}}.history (channel, pub_offset, time_ms, data)
                      SELECT channel, off, v_time, convert_to(data::text, 'UTF8') FROM pos WHERE off > 0)
        SELECT seq, channel, off, epoch,
               {{schema}}.encode_pub(channel, off, epoch, v_time, NULL, {{schema}}.ns(data::text)) AS rec
          FROM pos ORDER BY seq
    LOOP
        PERFORM {{schema}}.emit_record(r.channel, r.off, r.epoch, r.rec);
    END LOOP;
    RETURN NULL;
END
$fn$;

CREATE CONSTRAINT TRIGGER {{schema}}_flush AFTER INSERT ON {{schema}}.table_changes
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION {{schema}}.flush_changes();

-- One row per streamed table.
CREATE TABLE {{schema}}.table_streams (
    table_oid    oid      PRIMARY KEY,
    table_name   text     NOT NULL,
    channel      text     NOT NULL,
    columns      text[],
    history_size integer  NOT NULL,
    history_ttl  interval NOT NULL
);

-- stream_row is the row trigger: it reads the table's stream definition
-- and queues the change for flush_changes.
CREATE FUNCTION {{schema}}.stream_row() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    s       {{schema}}.table_streams;
    v_old   jsonb;
    v_new   jsonb;
    v_data  jsonb;
    v_ch    text;
    v_och   text;
BEGIN
    SELECT * INTO s FROM {{schema}}.table_streams WHERE table_oid = TG_RELID;
    IF NOT FOUND THEN
        RETURN NULL; -- the stream was removed in this transaction
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        v_old := {{schema}}.stream_pick(to_jsonb(OLD), s.columns);
        v_och := {{schema}}.stream_channel(s.channel, to_jsonb(OLD));
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        v_new := {{schema}}.stream_pick(to_jsonb(NEW), s.columns);
        v_ch := {{schema}}.stream_channel(s.channel, to_jsonb(NEW));
    END IF;
    v_data := jsonb_build_object('op', lower(TG_OP));
    IF v_old IS NOT NULL THEN
        v_data := v_data || jsonb_build_object('old', v_old);
    END IF;
    IF v_new IS NOT NULL THEN
        v_data := v_data || jsonb_build_object('new', v_new);
    END IF;
    -- An update that moves a row to another channel is told to both.
    IF v_och IS NOT NULL AND v_och IS DISTINCT FROM v_ch THEN
        INSERT INTO {{schema}}.table_changes (channel, data, history_size, history_ttl)
        VALUES (v_och, v_data, s.history_size, s.history_ttl);
    END IF;
    IF v_ch IS NOT NULL THEN
        INSERT INTO {{schema}}.table_changes (channel, data, history_size, history_ttl)
        VALUES (v_ch, v_data, s.history_size, s.history_ttl);
    END IF;
    RETURN NULL;
END
$fn$;

-- stream_pick keeps the chosen columns of a row (all when columns is NULL).
CREATE FUNCTION {{schema}}.stream_pick(r jsonb, columns text[]) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $fn$
    SELECT CASE WHEN columns IS NULL THEN r
                ELSE coalesce((SELECT jsonb_object_agg(key, value) FROM jsonb_each(r)
                                WHERE key = ANY (columns)), '{}'::jsonb) END
$fn$;

-- stream_channel fills a channel template: each {column} is replaced by
-- the row's value of that column as text (empty when NULL).
CREATE FUNCTION {{schema}}.stream_channel(template text, r jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $fn$
DECLARE
    v_out text := template;
    m     text[];
BEGIN
    FOR m IN SELECT regexp_matches(template, '\{([A-Za-z_][A-Za-z0-9_$]*)\}', 'g') LOOP
        v_out := replace(v_out, '{' || m[1] || '}', coalesce(r ->> m[1], ''));
    END LOOP;
    RETURN v_out;
END
$fn$;

-- stream_table starts (or redefines) the stream of a table: channel is a
-- template such as 'orders:{customer_id}'; columns, when given, are the
-- columns sent in old and new (all otherwise); history_size and
-- history_ttl keep the publications in their channels' streams, as for
-- publish. Placeholders and columns must name columns of the table.
CREATE FUNCTION {{schema}}.stream_table(
    tbl regclass, channel text, columns text[] DEFAULT NULL,
    history_size integer DEFAULT 0, history_ttl interval DEFAULT '0')
RETURNS void
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    v_cols text[];
    v_name text;
    m      text[];
BEGIN
    IF channel IS NULL OR channel = '' THEN
        RAISE EXCEPTION 'herald stream_table: channel is required, e.g. ''orders:{customer_id}''';
    END IF;
    SELECT array_agg(attname::text) INTO v_cols FROM pg_attribute
     WHERE attrelid = tbl AND attnum > 0 AND NOT attisdropped;
    FOR m IN SELECT regexp_matches(channel, '\{([^}]*)\}', 'g') LOOP
        IF NOT m[1] = ANY (v_cols) THEN
            RAISE EXCEPTION 'herald stream_table: channel placeholder {%} is not a column of %', m[1], tbl;
        END IF;
    END LOOP;
    IF columns IS NOT NULL THEN
        FOREACH v_name IN ARRAY columns LOOP
            IF NOT v_name = ANY (v_cols) THEN
                RAISE EXCEPTION 'herald stream_table: % is not a column of %', v_name, tbl;
            END IF;
        END LOOP;
    END IF;
    INSERT INTO {{schema}}.table_streams (table_oid, table_name, channel, columns, history_size, history_ttl)
    VALUES (tbl, tbl::text, channel, columns, coalesce(history_size, 0), coalesce(history_ttl, interval '0'))
    ON CONFLICT (table_oid) DO UPDATE
       SET table_name = excluded.table_name, channel = excluded.channel, columns = excluded.columns,
           history_size = excluded.history_size, history_ttl = excluded.history_ttl;
    EXECUTE format('DROP TRIGGER IF EXISTS %I ON %s', '{{schema}}_stream', tbl);
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE ON %s
                    FOR EACH ROW EXECUTE FUNCTION {{schema}}.stream_row()', '{{schema}}_stream', tbl);
END
$fn$;

-- unstream_table removes a table's stream and its trigger.
CREATE FUNCTION {{schema}}.unstream_table(tbl regclass) RETURNS void
LANGUAGE plpgsql VOLATILE AS $fn$
BEGIN
    EXECUTE format('DROP TRIGGER IF EXISTS %I ON %s', '{{schema}}_stream', tbl);
    DELETE FROM {{schema}}.table_streams WHERE table_oid = tbl;
END
$fn$;
