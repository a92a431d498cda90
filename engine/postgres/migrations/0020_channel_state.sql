-- Herald PostgreSQL engine, schema version 20: channel state events
-- (engine.ChannelStates). Which nodes have subscribers in which channels
-- (channel_occupancy, each node under a lease in channel_state_nodes),
-- each channel's cluster-wide state (channel_state), and the events not
-- yet delivered, a transactional outbox (channel_state_events).
--
-- Every change of a channel takes its channel_state row lock, so changes
-- of one channel are decided one at a time, each exactly once, and its
-- events get ids (and times) in the order they were decided: a deliverer
-- that reads in id order sees them in order. A node that dies stops
-- renewing its lease; the sweep then removes its occupancy as if its
-- subscribers had left.
CREATE TABLE {{schema}}.channel_state_nodes (
    node_id   text        COLLATE "C" PRIMARY KEY,
    expire_at timestamptz NOT NULL
);

CREATE TABLE {{schema}}.channel_occupancy (
    channel text COLLATE "C" NOT NULL,
    node_id text COLLATE "C" NOT NULL,
    PRIMARY KEY (channel, node_id)
);
CREATE INDEX channel_occupancy_node ON {{schema}}.channel_occupancy (node_id);

-- A row per channel that is occupied, or was until lately: last_ms, the
-- time of its last event, makes the next one later (times name events).
CREATE TABLE {{schema}}.channel_state (
    channel   text        COLLATE "C" PRIMARY KEY,
    occupied  boolean     NOT NULL,
    last_ms   bigint      NOT NULL,
    delay_ms  bigint      NOT NULL,
    vacate_at timestamptz
);
CREATE INDEX channel_state_vacate_at ON {{schema}}.channel_state (vacate_at) WHERE vacate_at IS NOT NULL;

CREATE TABLE {{schema}}.channel_state_events (
    id      bigserial PRIMARY KEY,
    channel text      COLLATE "C" NOT NULL,
    type    text      NOT NULL,
    time_ms bigint    NOT NULL
);

-- channel_state_emit queues an event of a channel whose row the caller
-- holds locked, and returns its time: now, but after p_last.
CREATE FUNCTION {{schema}}.channel_state_emit(p_channel text, p_type text, p_last bigint) RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    v_ms bigint := greatest((extract(epoch FROM clock_timestamp()) * 1000)::bigint, p_last + 1);
BEGIN
    INSERT INTO {{schema}}.channel_state_events (channel, type, time_ms) VALUES (p_channel, p_type, v_ms);
    RETURN v_ms;
END
$fn$;

-- channel_state_left: a node has left p_channel. If no node is left in
-- it, it is vacated after its delay (at once for none).
CREATE FUNCTION {{schema}}.channel_state_left(p_channel text) RETURNS void
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    s record;
BEGIN
    SELECT * INTO s FROM {{schema}}.channel_state WHERE channel = p_channel FOR UPDATE;
    -- Checked after the lock: a node that joins meanwhile inserted its
    -- occupancy before it asks for the lock, so either it is seen here or
    -- it finds the vacate pending (or done) when it gets the lock.
    IF NOT FOUND OR NOT s.occupied OR s.vacate_at IS NOT NULL
       OR EXISTS (SELECT 1 FROM {{schema}}.channel_occupancy WHERE channel = p_channel) THEN
        RETURN;
    END IF;
    IF s.delay_ms <= 0 THEN
        UPDATE {{schema}}.channel_state
           SET occupied = false, last_ms = {{schema}}.channel_state_emit(p_channel, 'vacated', s.last_ms)
         WHERE channel = p_channel;
    ELSE
        UPDATE {{schema}}.channel_state SET vacate_at = clock_timestamp() + s.delay_ms * interval '1 millisecond'
         WHERE channel = p_channel;
    END IF;
END
$fn$;

-- channel_state_set records that p_node has (p_occupied) or no longer has
-- subscribers in p_channel, and makes the channel's change, if any.
CREATE FUNCTION {{schema}}.channel_state_set(p_channel text, p_node text, p_occupied boolean, p_delay_ms bigint, p_ttl_ms bigint) RETURNS void
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    s record;
BEGIN
    -- The lease is only created here (KeepChannelOccupancy renews it):
    -- updating it on every change would make all of a node's changes
    -- wait for one another on its row.
    INSERT INTO {{schema}}.channel_state_nodes (node_id, expire_at)
    VALUES (p_node, clock_timestamp() + p_ttl_ms * interval '1 millisecond')
    ON CONFLICT (node_id) DO NOTHING;
    IF NOT p_occupied THEN
        DELETE FROM {{schema}}.channel_occupancy WHERE channel = p_channel AND node_id = p_node;
        UPDATE {{schema}}.channel_state SET delay_ms = p_delay_ms WHERE channel = p_channel AND delay_ms <> p_delay_ms;
        PERFORM {{schema}}.channel_state_left(p_channel);
        RETURN;
    END IF;
    INSERT INTO {{schema}}.channel_occupancy (channel, node_id) VALUES (p_channel, p_node) ON CONFLICT DO NOTHING;
    INSERT INTO {{schema}}.channel_state (channel, occupied, last_ms, delay_ms) VALUES (p_channel, false, 0, p_delay_ms)
    ON CONFLICT (channel) DO NOTHING;
    SELECT * INTO s FROM {{schema}}.channel_state WHERE channel = p_channel FOR UPDATE;
    IF NOT s.occupied THEN
        UPDATE {{schema}}.channel_state
           SET occupied = true, vacate_at = NULL, delay_ms = p_delay_ms,
               last_ms = {{schema}}.channel_state_emit(p_channel, 'occupied', s.last_ms)
         WHERE channel = p_channel;
    ELSIF s.vacate_at IS NOT NULL THEN
        UPDATE {{schema}}.channel_state SET vacate_at = NULL WHERE channel = p_channel;
    END IF;
END
$fn$;

-- channel_state_release drops p_node's records, as if its subscribers had
-- all left: a node that stops, or whose lease lapsed.
CREATE FUNCTION {{schema}}.channel_state_release(p_node text) RETURNS void
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    c record;
BEGIN
    DELETE FROM {{schema}}.channel_state_nodes WHERE node_id = p_node;
    FOR c IN DELETE FROM {{schema}}.channel_occupancy WHERE node_id = p_node RETURNING channel LOOP
        PERFORM {{schema}}.channel_state_left(c.channel);
    END LOOP;
END
$fn$;

-- channel_state_sweep releases the nodes whose lease lapsed and vacates
-- the channels whose delay ran out (at most p_limit). p_full also looks
-- for what a race can leave behind (occupancy of a node without a lease,
-- an occupied channel without occupancy) and forgets old vacated rows.
CREATE FUNCTION {{schema}}.channel_state_sweep(p_limit integer, p_full boolean) RETURNS void
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    c record;
BEGIN
    FOR c IN SELECT node_id FROM {{schema}}.channel_state_nodes WHERE expire_at < clock_timestamp() LIMIT p_limit LOOP
        PERFORM {{schema}}.channel_state_release(c.node_id);
    END LOOP;
    IF p_full THEN
        FOR c IN DELETE FROM {{schema}}.channel_occupancy o
                  WHERE NOT EXISTS (SELECT 1 FROM {{schema}}.channel_state_nodes n WHERE n.node_id = o.node_id)
                 RETURNING channel LOOP
            PERFORM {{schema}}.channel_state_left(c.channel);
        END LOOP;
        FOR c IN SELECT channel FROM {{schema}}.channel_state s
                  WHERE occupied AND vacate_at IS NULL
                    AND NOT EXISTS (SELECT 1 FROM {{schema}}.channel_occupancy o WHERE o.channel = s.channel)
                  LIMIT p_limit LOOP
            PERFORM {{schema}}.channel_state_left(c.channel);
        END LOOP;
        DELETE FROM {{schema}}.channel_state
         WHERE NOT occupied AND last_ms < (extract(epoch FROM clock_timestamp()) * 1000)::bigint - 60000;
    END IF;
    FOR c IN SELECT * FROM {{schema}}.channel_state WHERE vacate_at <= clock_timestamp()
              ORDER BY vacate_at LIMIT p_limit FOR UPDATE SKIP LOCKED LOOP
        IF EXISTS (SELECT 1 FROM {{schema}}.channel_occupancy WHERE channel = c.channel) THEN
            UPDATE {{schema}}.channel_state SET vacate_at = NULL WHERE channel = c.channel;
        ELSE
            UPDATE {{schema}}.channel_state
               SET occupied = false, vacate_at = NULL,
                   last_ms = {{schema}}.channel_state_emit(c.channel, 'vacated', c.last_ms)
             WHERE channel = c.channel;
        END IF;
    END LOOP;
END
$fn$;
