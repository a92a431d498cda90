-- Herald PostgreSQL engine, schema version 3: table change streams.
--
-- stream_table turns every INSERT, UPDATE and DELETE of a table into a
-- publication {"op", "old", "new"} on a channel computed from the row, made
-- by a row trigger inside the writing transaction with publish(): it is
-- delivered if and only if the transaction commits, in commit order per
-- channel (publish holds the channel's stream row until commit), with
-- history and recovery like any other publication, and large rows take the
-- spill path.

-- One row per streamed table.
CREATE TABLE {{schema}}.table_streams (
    table_oid    oid      PRIMARY KEY,
    table_name   text     NOT NULL,
    channel      text     NOT NULL,
    columns      text[],
    history_size integer  NOT NULL,
    history_ttl  interval NOT NULL
);

-- stream_row is the trigger: it reads the table's stream definition and
-- publishes the change.
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
        PERFORM {{schema}}.publish(v_och, v_data, s.history_size, s.history_ttl);
    END IF;
    IF v_ch IS NOT NULL THEN
        PERFORM {{schema}}.publish(v_ch, v_data, s.history_size, s.history_ttl);
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
