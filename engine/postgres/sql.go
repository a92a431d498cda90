package postgres

import (
	"github.com/heraldhq/herald/engine/internal/precheck"

	"strconv"
	"strings"
)

// statements holds the engine's SQL with the schema name filled in. The
// texts are constant for an engine, so pgx prepares each once per
// connection.
type statements struct {
	schema         string
	notifyChannels []string
	listen         string

	alloc         string
	insertHistory string
	notify        string
	insertSpill   string
	readSpill     string

	touch          string
	readForward    string
	readReverse    string
	removeHistory  string
	streamTop      string
	streamTops     string
	historyBetween string
	historyReplay  string

	presenceAdd    string
	presenceRemove string
	presenceList   string
	presenceStats  string

	forgetNode string

	sweepPresence string
	sweepSpill    string
	sweepPubs     string
	sweepMeta     string
	queueUsage    string
	historyDead   string
	vacuumHistory string

	idemClaim        string
	idemRead         string
	idemStore        string
	sweepIdempotency string
}

// historyColumns are the columns every history read returns, in the order
// scanHistoryRow expects.
const historyColumns = `h.pub_offset, h.time_ms, h.data, h.client_id, h.user_id, h.conn_info, h.chan_info, h.tags::text, h.map_key, h.removed`

func newStatements(schema, nodeID string) *statements {
	q := func(s string) string { return strings.ReplaceAll(s, "{{schema}}", schema) }
	st := &statements{schema: schema}
	listen := make([]string, notifyChannels)
	for i := range notifyChannels {
		name := schema + "_" + strconv.Itoa(i)
		st.notifyChannels = append(st.notifyChannels, name)
		listen[i] = `LISTEN "` + name + `"`
	}
	// The node's own channel carries the control messages addressed to it
	// alone (PublishControl with a node), which no other node decodes.
	listen = append(listen, `LISTEN "`+st.nodeChannel(nodeID)+`"`)
	st.listen = strings.Join(listen, "; ")

	st.alloc = q(`SELECT channel, top_offset, epoch FROM {{schema}}.alloc($1::text[], $2::int4[], $3::int4[], $4::int8[], $5::int8[])`)
	st.insertHistory = q(`INSERT INTO {{schema}}.history
		(channel, pub_offset, time_ms, data, client_id, user_id, conn_info, chan_info, tags)
		SELECT c, o, t, d, ci, u, cn, chn, tg::jsonb
		  FROM unnest($1::text[], $2::int8[], $3::int8[], $4::bytea[], $5::text[], $6::text[], $7::bytea[], $8::bytea[], $9::text[])
		       AS x (c, o, t, d, ci, u, cn, chn, tg)`)
	// The function scan yields rows in array order, so the notifications
	// are queued in the order the engine packed them.
	st.notify = `SELECT pg_notify(c, p) FROM unnest($1::text[], $2::text[]) AS x (c, p)`
	st.insertSpill = q(`INSERT INTO {{schema}}.spill (id, body, expire_at)
		SELECT i, b, now() + $3::int8 * interval '1 millisecond'
		  FROM unnest($1::int8[], $2::bytea[]) AS x (i, b)`)
	st.readSpill = q(`SELECT body FROM {{schema}}.spill WHERE id = $1`)

	st.touch = q(`SELECT {{schema}}.touch($1, $2)`)
	// The window of publications still kept: none once they expired,
	// otherwise from the later of first_offset and the size limit.
	const window = `h.pub_offset >= CASE WHEN s.expire_at > now()
		THEN greatest(s.first_offset, s.top_offset - s.size + 1) ELSE s.top_offset + 1 END`
	st.readForward = q(`SELECT s.top_offset, s.epoch, ` + historyColumns + `
		  FROM {{schema}}.streams s
		  LEFT JOIN LATERAL (
		       SELECT * FROM {{schema}}.history h
		        WHERE h.channel = s.channel AND ` + window + `
		          AND h.pub_offset > $2 AND h.pub_offset <= s.top_offset
		        ORDER BY h.pub_offset
		        LIMIT $3) h ON true
		 WHERE s.channel = $1`)
	st.readReverse = q(`SELECT s.top_offset, s.epoch, ` + historyColumns + `
		  FROM {{schema}}.streams s
		  LEFT JOIN LATERAL (
		       SELECT * FROM {{schema}}.history h
		        WHERE h.channel = s.channel AND ` + window + `
		          AND h.pub_offset <= least(s.top_offset, $2)
		        ORDER BY h.pub_offset DESC
		        LIMIT $3) h ON true
		 WHERE s.channel = $1`)
	st.removeHistory = q(`WITH s AS (
		       UPDATE {{schema}}.streams SET first_offset = top_offset + 1
		        WHERE channel = $1 RETURNING channel, top_offset)
		DELETE FROM {{schema}}.history h USING s
		 WHERE h.channel = s.channel AND h.pub_offset <= s.top_offset`)
	st.streamTop = q(`SELECT top_offset, epoch FROM {{schema}}.streams WHERE channel = $1`)
	st.streamTops = q(`SELECT channel, top_offset, epoch FROM {{schema}}.streams WHERE channel = ANY ($1::text[])`)
	st.historyBetween = q(`SELECT ` + historyColumns + ` FROM {{schema}}.history h
		 WHERE h.channel = $1 AND h.pub_offset > $2 AND h.pub_offset < $3
		   AND EXISTS (SELECT 1 FROM {{schema}}.streams s WHERE s.channel = $1 AND s.epoch = $4)
		 ORDER BY h.pub_offset`)
	st.historyReplay = q(`SELECT h.channel, ` + historyColumns + `
		  FROM unnest($1::text[], $2::int8[], $3::int8[]) AS u (c, after, upto)
		  JOIN {{schema}}.history h ON h.channel = u.c AND h.pub_offset > u.after AND h.pub_offset <= u.upto
		 ORDER BY h.channel, h.pub_offset`)

	st.presenceAdd = q(`INSERT INTO {{schema}}.presence
		(channel, client_id, user_id, conn_info, chan_info, node_id, expire_at)
		VALUES ($1, $2, $3, $4, $5, $6, now() + $7::int8 * interval '1 microsecond')
		ON CONFLICT (channel, client_id) DO UPDATE SET
		    user_id = excluded.user_id, conn_info = excluded.conn_info, chan_info = excluded.chan_info,
		    node_id = excluded.node_id, expire_at = excluded.expire_at`)
	st.presenceRemove = q(`DELETE FROM {{schema}}.presence WHERE channel = $1 AND client_id = $2`)
	st.presenceList = q(`SELECT client_id, user_id, conn_info, chan_info FROM {{schema}}.presence
		 WHERE channel = $1 AND expire_at > now()`)
	st.presenceStats = q(`SELECT count(*), count(DISTINCT user_id) FROM {{schema}}.presence
		 WHERE channel = $1 AND expire_at > now()`)

	st.forgetNode = q(`DELETE FROM {{schema}}.presence WHERE node_id = $1`)

	st.sweepPresence = q(`DELETE FROM {{schema}}.presence WHERE (channel, client_id) IN (
		SELECT channel, client_id FROM {{schema}}.presence WHERE expire_at <= now() LIMIT $1)`)
	st.sweepSpill = q(`DELETE FROM {{schema}}.spill WHERE id IN (
		SELECT id FROM {{schema}}.spill WHERE expire_at <= now() ORDER BY expire_at LIMIT $1)`)
	// Streams are locked with SKIP LOCKED so that sweeping never waits for
	// (or holds up) a publishing transaction.
	st.sweepPubs = q(`WITH s AS (
		       SELECT channel, top_offset FROM {{schema}}.streams
		        WHERE expire_at <= now() LIMIT $1 FOR UPDATE SKIP LOCKED),
		     d AS (DELETE FROM {{schema}}.history h USING s
		        WHERE h.channel = s.channel AND h.pub_offset <= s.top_offset)
		UPDATE {{schema}}.streams t SET expire_at = NULL, first_offset = s.top_offset + 1
		  FROM s WHERE t.channel = s.channel`)
	st.sweepMeta = q(`WITH s AS (
		       SELECT channel FROM {{schema}}.streams
		        WHERE meta_expire_at <= now() LIMIT $1 FOR UPDATE SKIP LOCKED),
		     d AS (DELETE FROM {{schema}}.history h USING s WHERE h.channel = s.channel)
		DELETE FROM {{schema}}.streams t USING s WHERE t.channel = s.channel`)
	st.queueUsage = `SELECT pg_notification_queue_usage()`
	// VACUUM by a role that may not vacuum the table is not an error, only
	// a warning and no work, so whether the role may is asked first: the
	// owner (or a member of its role), a superuser, or from PostgreSQL 17 a
	// role granted MAINTAIN (CASE keeps older servers from parsing it).
	st.historyDead = q(`SELECT coalesce(s.n_dead_tup, 0), coalesce(s.n_live_tup, 0),
		 pg_has_role(current_user, c.relowner, 'USAGE')
		 OR coalesce((SELECT rolsuper FROM pg_roles WHERE rolname = current_user), false)
		 OR CASE WHEN current_setting('server_version_num')::int >= 170000
		         THEN has_table_privilege(c.oid, 'MAINTAIN') ELSE false END
		 FROM pg_class c LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
		 WHERE c.oid = '{{schema}}.history'::regclass`)
	st.vacuumHistory = q(`VACUUM (SKIP_LOCKED) {{schema}}.history`)

	// Keys are claimed in a fixed order, so that two batches claiming the
	// same keys wait on each other instead of deadlocking. A row past its
	// expiry is taken over as if new.
	st.idemClaim = q(`INSERT INTO {{schema}}.idempotency AS d (channel, key, expire_at)
		SELECT c, k, now() + t * interval '1 millisecond'
		  FROM unnest($1::text[], $2::text[], $3::int8[]) AS u(c, k, t) ORDER BY c, k
		ON CONFLICT (channel, key) DO UPDATE
		   SET expire_at = excluded.expire_at, pub_offset = NULL, epoch = NULL
		 WHERE d.expire_at <= now()
		RETURNING channel, key`)
	st.idemRead = q(`SELECT d.channel, d.key, coalesce(d.pub_offset, 0), coalesce(d.epoch, '')
		  FROM {{schema}}.idempotency d
		  JOIN unnest($1::text[], $2::text[]) AS u(c, k) ON d.channel = u.c AND d.key = u.k`)
	st.idemStore = q(`UPDATE {{schema}}.idempotency d SET pub_offset = u.o, epoch = u.e
		  FROM unnest($1::text[], $2::text[], $3::int8[], $4::text[]) AS u(c, k, o, e)
		 WHERE d.channel = u.c AND d.key = u.k`)
	st.sweepIdempotency = q(`DELETE FROM {{schema}}.idempotency WHERE (channel, key) IN (
		SELECT channel, key FROM {{schema}}.idempotency WHERE expire_at <= now() ORDER BY expire_at LIMIT $1)`)
	return st
}

// nodeChannel is the notification channel of one node's targeted control
// messages: <schema>_n_<digest of the node id>, at most 63 bytes (the
// schema has at most 40), PostgreSQL's limit for a channel name.
func (st *statements) nodeChannel(nodeID string) string {
	return st.schema + "_n_" + precheck.NodeToken(nodeID)
}
