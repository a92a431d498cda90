-- Herald PostgreSQL engine, schema version 5: table change streams read
-- from logical replication, and publication tags from row columns.
--
-- stream_table gains two parameters. mode => 'logical' streams a table
-- without a trigger: the table joins the PostgreSQL publication
-- <schema>_streams, and the node that owns the replication slot of the
-- same name (see logrepl.go) decodes its changes with pgoutput and hands
-- each committed transaction to logical_apply, which queues them in
-- table_changes like the trigger does, so flush_changes publishes them at
-- the end of that (Herald's) transaction with offsets, history and
-- recovery. tags => ARRAY['status'] sends those columns' values as the
-- publications' tags, for the clients' tags filter, in both modes.

ALTER TABLE {{schema}}.table_streams
    ADD COLUMN mode text NOT NULL DEFAULT 'trigger',
    ADD COLUMN tags text[];

ALTER TABLE {{schema}}.table_changes ADD COLUMN tags jsonb;

-- logical_progress is, per replication slot, the end of the last
-- transaction logical_apply published. The slot's confirmed position is
-- sent after Herald's transaction commits, so after a crash between the
-- two the slot sends that transaction again: logical_apply skips it.
-- That is what makes delivery exactly once across restarts.
CREATE TABLE {{schema}}.logical_progress (
    slot text   PRIMARY KEY,
    lsn  pg_lsn NOT NULL
);

-- stream_queue queues one row change of a streamed table: old_row and
-- new_row are the whole rows as jsonb (NULL when absent).
CREATE FUNCTION {{schema}}.stream_queue(s {{schema}}.table_streams, op text, old_row jsonb, new_row jsonb)
RETURNS void
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    v_data jsonb := jsonb_build_object('op', op);
    v_ch   text;
    v_och  text;
    v_tags jsonb;
BEGIN
    IF old_row IS NOT NULL THEN
        v_data := v_data || jsonb_build_object('old', {{schema}}.stream_pick(old_row, s.columns));
        v_och := {{schema}}.stream_channel(s.channel, old_row);
    END IF;
    IF new_row IS NOT NULL THEN
        v_data := v_data || jsonb_build_object('new', {{schema}}.stream_pick(new_row, s.columns));
        v_ch := {{schema}}.stream_channel(s.channel, new_row);
    END IF;
    -- Tags describe the row as it is now (as it was, for a delete), as
    -- text; a NULL column is left out.
    IF s.tags IS NOT NULL THEN
        SELECT jsonb_object_agg(key, value #>> '{}') INTO v_tags
          FROM jsonb_each(coalesce(new_row, old_row))
         WHERE key = ANY (s.tags) AND jsonb_typeof(value) <> 'null';
    END IF;
    -- An update that moves a row to another channel is told to both.
    IF v_och IS NOT NULL AND v_och IS DISTINCT FROM v_ch THEN
        INSERT INTO {{schema}}.table_changes (channel, data, history_size, history_ttl, tags)
        VALUES (v_och, v_data, s.history_size, s.history_ttl, v_tags);
    END IF;
    IF v_ch IS NOT NULL THEN
        INSERT INTO {{schema}}.table_changes (channel, data, history_size, history_ttl, tags)
        VALUES (v_ch, v_data, s.history_size, s.history_ttl, v_tags);
    END IF;
END
$fn$;

-- stream_row, the trigger of trigger mode, now goes through stream_queue.
CREATE OR REPLACE FUNCTION {{schema}}.stream_row() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    s {{schema}}.table_streams;
BEGIN
    SELECT * INTO s FROM {{schema}}.table_streams WHERE table_oid = TG_RELID AND mode = 'trigger';
    IF NOT FOUND THEN
        RETURN NULL; -- the stream was removed or moved to logical mode in this transaction
    END IF;
    PERFORM {{schema}}.stream_queue(s, lower(TG_OP),
        CASE WHEN TG_OP IN ('UPDATE', 'DELETE') THEN to_jsonb(OLD) END,
        CASE WHEN TG_OP IN ('INSERT', 'UPDATE') THEN to_jsonb(NEW) END);
    RETURN NULL;
END
$fn$;

-- flush_changes as in version 3, with the queued tags sent and kept in
-- history.
CREATE OR REPLACE FUNCTION {{schema}}.flush_changes() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    v_done  text := current_setting('{{schema}}.flushed_seq', true);
    v_time  bigint;
    v_seqs  bigint[];
    v_chans text[];
    v_datas jsonb[];
    v_tags  jsonb[];
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
               RETURNING seq, channel, data, history_size, history_ttl, tags),
         h AS (SELECT channel, count(*)::integer AS n, max(history_size) AS sz,
                      max({{schema}}.ms(history_ttl)) AS ttl
                 FROM d WHERE history_size > 0 AND history_ttl > interval '0' GROUP BY channel)
    SELECT (SELECT array_agg(seq ORDER BY seq) FROM d), (SELECT array_agg(channel ORDER BY seq) FROM d),
           (SELECT array_agg(data ORDER BY seq) FROM d), (SELECT array_agg(tags ORDER BY seq) FROM d),
           (SELECT max(seq) FROM d),
           (SELECT array_agg(channel ORDER BY channel) FROM h), (SELECT array_agg(n ORDER BY channel) FROM h),
           (SELECT array_agg(sz ORDER BY channel) FROM h), (SELECT array_agg(ttl ORDER BY channel) FROM h)
      INTO v_seqs, v_chans, v_datas, v_tags, v_max, a_ch, a_n, a_sz, a_ttl;
    IF v_max IS NULL THEN
        RETURN NULL;
    END IF;
    PERFORM set_config('{{schema}}.flushed_seq', v_max::text, true);
    IF a_ch IS NOT NULL THEN
        SELECT array_agg(x.channel), array_agg(x.top_offset), array_agg(x.epoch)
          INTO al_ch, al_top, al_ep
          FROM {{schema}}.alloc(a_ch, a_n, a_sz, a_ttl,
                                array_fill({{schema}}.ms(interval '30 days'), ARRAY[cardinality(a_ch)])) x;
    END IF;
    FOR r IN
        WITH u AS (SELECT * FROM unnest(v_seqs, v_chans, v_datas, v_tags) AS u (seq, channel, data, tags)),
             al AS (SELECT * FROM unnest(al_ch, al_top, al_ep, a_n) AS al (channel, top, epoch, n)),
             pos AS (SELECT u.seq, u.channel, u.data, u.tags,
                            CASE WHEN al.channel IS NULL THEN 0
                                 ELSE al.top - al.n + row_number() OVER (PARTITION BY u.channel ORDER BY u.seq) END AS off,
                            coalesce(al.epoch, '') AS epoch
                       FROM u LEFT JOIN al ON al.channel = u.channel),
             hist AS (INSERT INTO {{schema}}.history (channel, pub_offset, time_ms, data, tags)
                      SELECT channel, off, v_time, convert_to(data::text, 'UTF8'), tags FROM pos WHERE off > 0)
        SELECT seq, channel, off, epoch,
               {{schema}}.encode_pub(channel, off, epoch, v_time, tags, {{schema}}.ns(data::text)) AS rec
          FROM pos ORDER BY seq
    LOOP
        PERFORM {{schema}}.emit_record(r.channel, r.off, r.epoch, r.rec);
    END LOOP;
    RETURN NULL;
END
$fn$;

-- logical_apply publishes one decoded transaction: for change i, rels[i]
-- is the table's oid, ops[i] insert, update or delete, and olds[i] and
-- news[i] the rows with every value as text (json and jsonb values as
-- JSON), which jsonb_populate_record turns into the values to_jsonb gives
-- in trigger mode. It returns false, doing nothing, when the transaction
-- ending at lsn was already published through this slot.
CREATE FUNCTION {{schema}}.logical_apply(p_slot text, p_lsn pg_lsn, p_rels oid[], p_ops text[], p_olds jsonb[], p_news jsonb[])
RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    v_done pg_lsn;
    s      {{schema}}.table_streams;
    v_old  jsonb;
    v_new  jsonb;
BEGIN
    INSERT INTO {{schema}}.logical_progress (slot, lsn) VALUES (p_slot, '0/0') ON CONFLICT DO NOTHING;
    -- The row lock also serializes two consumers of one slot, should an
    -- old owner still be running when a new one starts.
    SELECT lsn INTO v_done FROM {{schema}}.logical_progress WHERE slot = p_slot FOR UPDATE;
    IF v_done >= p_lsn THEN
        RETURN false;
    END IF;
    FOR i IN 1 .. coalesce(cardinality(p_rels), 0) LOOP
        SELECT * INTO s FROM {{schema}}.table_streams WHERE table_oid = p_rels[i] AND mode = 'logical';
        CONTINUE WHEN NOT FOUND;
        -- A table dropped since the change was made can no longer type
        -- its row; failing here would stop the stream for good.
        CONTINUE WHEN NOT EXISTS (SELECT 1 FROM pg_class WHERE oid = p_rels[i]);
        v_old := NULL;
        v_new := NULL;
        IF p_olds[i] IS NOT NULL THEN
            EXECUTE format('SELECT to_jsonb(jsonb_populate_record(NULL::%s, $1))', s.table_oid::regclass)
               INTO v_old USING p_olds[i];
        END IF;
        IF p_news[i] IS NOT NULL THEN
            EXECUTE format('SELECT to_jsonb(jsonb_populate_record(NULL::%s, $1))', s.table_oid::regclass)
               INTO v_new USING p_news[i];
        END IF;
        PERFORM {{schema}}.stream_queue(s, p_ops[i], v_old, v_new);
    END LOOP;
    UPDATE {{schema}}.logical_progress SET lsn = p_lsn WHERE slot = p_slot;
    RETURN true;
END
$fn$;

-- stream_table as in version 3, with mode ('trigger' or 'logical') and
-- tags (columns sent as publication tags).
DROP FUNCTION {{schema}}.stream_table(regclass, text, text[], integer, interval);
CREATE FUNCTION {{schema}}.stream_table(
    tbl regclass, channel text, columns text[] DEFAULT NULL,
    history_size integer DEFAULT 0, history_ttl interval DEFAULT '0',
    mode text DEFAULT 'trigger', tags text[] DEFAULT NULL)
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
    IF mode IS NULL OR mode NOT IN ('trigger', 'logical') THEN
        RAISE EXCEPTION 'herald stream_table: mode must be ''trigger'' or ''logical'', not %', coalesce(quote_literal(mode), 'NULL');
    END IF;
    IF mode = 'logical' AND current_setting('wal_level') <> 'logical' THEN
        RAISE EXCEPTION 'herald stream_table: mode ''logical'' needs wal_level = logical (it is %)', current_setting('wal_level');
    END IF;
    SELECT array_agg(attname::text) INTO v_cols FROM pg_attribute
     WHERE attrelid = tbl AND attnum > 0 AND NOT attisdropped;
    FOR m IN SELECT regexp_matches(channel, '\{([^}]*)\}', 'g') LOOP
        IF NOT m[1] = ANY (v_cols) THEN
            RAISE EXCEPTION 'herald stream_table: channel placeholder {%} is not a column of %', m[1], tbl;
        END IF;
    END LOOP;
    FOREACH v_name IN ARRAY coalesce(columns, '{}') || coalesce(tags, '{}') LOOP
        IF NOT v_name = ANY (v_cols) THEN
            RAISE EXCEPTION 'herald stream_table: % is not a column of %', v_name, tbl;
        END IF;
    END LOOP;
    INSERT INTO {{schema}}.table_streams (table_oid, table_name, channel, columns, history_size, history_ttl, mode, tags)
    VALUES (tbl, tbl::text, channel, columns, coalesce(history_size, 0), coalesce(history_ttl, interval '0'), mode, tags)
    ON CONFLICT (table_oid) DO UPDATE
       SET table_name = excluded.table_name, channel = excluded.channel, columns = excluded.columns,
           history_size = excluded.history_size, history_ttl = excluded.history_ttl,
           mode = excluded.mode, tags = excluded.tags;
    EXECUTE format('DROP TRIGGER IF EXISTS %I ON %s', '{{schema}}_stream', tbl);
    IF mode = 'trigger' THEN
        IF EXISTS (SELECT 1 FROM pg_publication_rel pr JOIN pg_publication p ON p.oid = pr.prpubid
                    WHERE p.pubname = '{{schema}}_streams' AND pr.prrelid = tbl) THEN
            EXECUTE format('ALTER PUBLICATION %I DROP TABLE %s', '{{schema}}_streams', tbl);
        END IF;
        EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE ON %s
                        FOR EACH ROW EXECUTE FUNCTION {{schema}}.stream_row()', '{{schema}}_stream', tbl);
        RETURN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = '{{schema}}_streams') THEN
        -- A node starting creates it too (logrepl.go): whoever comes
        -- second finds it made, which is what it wanted.
        BEGIN
            EXECUTE format('CREATE PUBLICATION %I', '{{schema}}_streams');
        EXCEPTION WHEN duplicate_object OR unique_violation THEN
            NULL;
        END;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_publication_rel pr JOIN pg_publication p ON p.oid = pr.prpubid
                    WHERE p.pubname = '{{schema}}_streams' AND pr.prrelid = tbl) THEN
        EXECUTE format('ALTER PUBLICATION %I ADD TABLE %s', '{{schema}}_streams', tbl);
    END IF;
    -- Updates and deletes then carry the whole old row, as the trigger
    -- gives it (and the channel of a row that moves is known).
    EXECUTE format('ALTER TABLE %s REPLICA IDENTITY FULL', tbl);
END
$fn$;

-- unstream_table removes a table's stream, its trigger and its place in
-- the publication.
CREATE OR REPLACE FUNCTION {{schema}}.unstream_table(tbl regclass) RETURNS void
LANGUAGE plpgsql VOLATILE AS $fn$
BEGIN
    EXECUTE format('DROP TRIGGER IF EXISTS %I ON %s', '{{schema}}_stream', tbl);
    IF EXISTS (SELECT 1 FROM pg_publication_rel pr JOIN pg_publication p ON p.oid = pr.prpubid
                WHERE p.pubname = '{{schema}}_streams' AND pr.prrelid = tbl) THEN
        EXECUTE format('ALTER PUBLICATION %I DROP TABLE %s', '{{schema}}_streams', tbl);
    END IF;
    DELETE FROM {{schema}}.table_streams WHERE table_oid = tbl;
END
$fn$;
