-- Herald PostgreSQL engine, schema version 5: tables as live maps.
--
-- map_table makes a table the state of map channels: each row is the key
-- named by its key column in the channel its template names, with the row
-- (or the chosen columns) as the value. A row trigger changes the map in
-- the writing transaction through map_change, so a change is delivered
-- if and only if the transaction commits, and the state subscribers page
-- through (map_state) is the table's. The table's current rows are copied
-- into the state when map_table runs, under a lock that holds writers
-- back until the copy and the trigger are in place, so no row is missed
-- and none is counted twice: a subscriber gets the rows as its snapshot
-- and every committed change after it, paginated, with no gap.

CREATE TABLE {{schema}}.map_tables (
    table_oid    oid      PRIMARY KEY,
    table_name   text     NOT NULL,
    channel      text     NOT NULL,
    key_column   text     NOT NULL,
    columns      text[],
    stream_size  integer  NOT NULL,
    stream_ttl   interval NOT NULL
);

-- map_table_change sets (or, with p_removed, removes) the key of row r.
CREATE FUNCTION {{schema}}.map_table_change(t {{schema}}.map_tables, r jsonb, p_removed boolean)
RETURNS void
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    v_ch   text := {{schema}}.stream_channel(t.channel, r);
    v_key  text := r ->> t.key_column;
    v_data jsonb;
BEGIN
    IF v_key IS NULL OR v_key = '' THEN
        RAISE EXCEPTION 'herald map_table %: key column % is empty in a row', t.table_name, t.key_column;
    END IF;
    IF p_removed THEN
        PERFORM {{schema}}.map_change(v_ch, v_key, NULL, NULL, true, t.stream_size, {{schema}}.ms(t.stream_ttl),
                                      0, 0, NULL, NULL, NULL, NULL, true, false);
    ELSE
        v_data := {{schema}}.stream_pick(r, t.columns);
        PERFORM {{schema}}.map_change(v_ch, v_key, convert_to(v_data::text, 'UTF8'), {{schema}}.ns(v_data::text),
                                      false, t.stream_size, {{schema}}.ms(t.stream_ttl), 0, 0, NULL, NULL, NULL, NULL,
                                      false, false);
    END IF;
END
$fn$;

-- map_row is the row trigger. An update that moves a row to another key
-- or channel removes the old key and sets the new one.
CREATE FUNCTION {{schema}}.map_row() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    t     {{schema}}.map_tables;
    v_old jsonb;
    v_new jsonb;
BEGIN
    SELECT * INTO t FROM {{schema}}.map_tables WHERE table_oid = TG_RELID;
    IF NOT FOUND THEN
        RETURN NULL; -- the map was removed in this transaction
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        v_old := to_jsonb(OLD);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        v_new := to_jsonb(NEW);
    END IF;
    IF v_old IS NOT NULL AND (v_new IS NULL
        OR {{schema}}.stream_channel(t.channel, v_old) IS DISTINCT FROM {{schema}}.stream_channel(t.channel, v_new)
        OR v_old ->> t.key_column IS DISTINCT FROM v_new ->> t.key_column) THEN
        PERFORM {{schema}}.map_table_change(t, v_old, true);
    END IF;
    IF v_new IS NOT NULL THEN
        PERFORM {{schema}}.map_table_change(t, v_new, false);
    END IF;
    RETURN NULL;
END
$fn$;

-- map_table makes tbl a live map: channel is a template such as
-- 'boards:{board_id}', key_column the column whose value is the key;
-- columns, when given, are the columns in the value (all otherwise);
-- stream_size and stream_ttl are the map namespace's (map.stream_size,
-- map.stream_ttl). The namespace should be in the persistent mode: rows
-- do not expire. It copies the current rows into the maps, holding
-- writers of tbl back meanwhile (SHARE ROW EXCLUSIVE), so call it in a
-- transaction of its own.
CREATE FUNCTION {{schema}}.map_table(
    tbl regclass, channel text, key_column text, columns text[] DEFAULT NULL,
    stream_size integer DEFAULT 100, stream_ttl interval DEFAULT '1 minute')
RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    v_cols text[];
    v_name text;
    m      text[];
    t      {{schema}}.map_tables;
    r      record;
    n      bigint := 0;
BEGIN
    IF channel IS NULL OR channel = '' THEN
        RAISE EXCEPTION 'herald map_table: channel is required, e.g. ''boards:{board_id}''';
    END IF;
    IF coalesce(stream_size, 0) <= 0 OR coalesce(stream_ttl, interval '0') <= interval '0' THEN
        RAISE EXCEPTION 'herald map_table: stream_size and stream_ttl must be positive';
    END IF;
    SELECT array_agg(attname::text) INTO v_cols FROM pg_attribute
     WHERE attrelid = tbl AND attnum > 0 AND NOT attisdropped;
    IF key_column IS NULL OR NOT key_column = ANY (v_cols) THEN
        RAISE EXCEPTION 'herald map_table: key column % is not a column of %', key_column, tbl;
    END IF;
    FOR m IN SELECT regexp_matches(channel, '\{([^}]*)\}', 'g') LOOP
        IF NOT m[1] = ANY (v_cols) THEN
            RAISE EXCEPTION 'herald map_table: channel placeholder {%} is not a column of %', m[1], tbl;
        END IF;
    END LOOP;
    IF columns IS NOT NULL THEN
        FOREACH v_name IN ARRAY columns LOOP
            IF NOT v_name = ANY (v_cols) THEN
                RAISE EXCEPTION 'herald map_table: % is not a column of %', v_name, tbl;
            END IF;
        END LOOP;
    END IF;
    -- Writers wait from here to the end of the transaction: the copy
    -- below sees every committed row, and every later change goes through
    -- the trigger.
    EXECUTE format('LOCK TABLE %s IN SHARE ROW EXCLUSIVE MODE', tbl);
    INSERT INTO {{schema}}.map_tables (table_oid, table_name, channel, key_column, columns, stream_size, stream_ttl)
    VALUES (tbl, tbl::text, channel, key_column, columns, stream_size, stream_ttl)
    ON CONFLICT (table_oid) DO UPDATE
       SET table_name = excluded.table_name, channel = excluded.channel, key_column = excluded.key_column,
           columns = excluded.columns, stream_size = excluded.stream_size, stream_ttl = excluded.stream_ttl
    RETURNING * INTO t;
    EXECUTE format('DROP TRIGGER IF EXISTS %I ON %s', '{{schema}}_map', tbl);
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE ON %s
                    FOR EACH ROW EXECUTE FUNCTION {{schema}}.map_row()', '{{schema}}_map', tbl);
    FOR r IN EXECUTE format('SELECT to_jsonb(x) AS j FROM %s x', tbl) LOOP
        PERFORM {{schema}}.map_table_change(t, r.j, false);
        n := n + 1;
    END LOOP;
    RETURN n;
END
$fn$;

-- unmap_table removes a table's trigger; its maps keep their keys.
CREATE FUNCTION {{schema}}.unmap_table(tbl regclass) RETURNS void
LANGUAGE plpgsql VOLATILE AS $fn$
BEGIN
    EXECUTE format('DROP TRIGGER IF EXISTS %I ON %s', '{{schema}}_map', tbl);
    DELETE FROM {{schema}}.map_tables WHERE table_oid = tbl;
END
$fn$;
