-- A map change made with Publication.Delta (the server API's per-publish
-- delta flag) carries it to every node as Go-built publication records do
-- (codec.go, deltaMark): a header record with the token '+delta' just
-- before the change's record. The change's record is built and sent here,
-- by emit_record, so the node making the change says so with the
-- transaction-local setting {{schema}}.delta = '1' before calling
-- map_change_bounded (mapstate.go). Nodes that never set it, older ones
-- included, emit the same records as before; nodes that predate the mark
-- skip it as any header record and deliver the change in full. The mark is
-- part of the record, so a spilled record keeps it.
--
-- emit_record (0003) otherwise as before.

CREATE OR REPLACE FUNCTION {{schema}}.emit_record(p_channel text, p_offset bigint, p_epoch text, p_rec text)
RETURNS void
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    v_hdr   text := 'n' || {{schema}}.ns('s' || nextval('{{schema}}.notify_seq')::text);
    v_rec   text := p_rec;
    v_spill bigint;
BEGIN
    IF current_setting('{{schema}}.delta', true) = '1' THEN
        v_rec := 'n' || {{schema}}.ns('+delta') || v_rec;
    END IF;
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
