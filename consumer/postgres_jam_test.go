package consumer_test

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
)

// writeBytes inserts one row whose payload is raw bytes (a bytea column),
// as write does.
func (o *outbox) writeBytes(t *testing.T, partition int, method string, payload []byte) {
	t.Helper()
	o.exec(t, `INSERT INTO `+o.table+` (method, payload, partition) VALUES ($1, $2, $3)`, method, payload, partition)
	o.exec(t, `SELECT pg_notify($1, $2)`, o.chans, strconv.Itoa(partition))
}

// TestPostgresOutboxBytePayloadMovedAside: an outbox whose payload column
// is bytea holds a row of bytes that are not UTF-8 and one with a NUL. Both
// are refused and moved aside with their bytes as they were; the rows
// around them are applied once each, in order. Before the dead-letter
// payload was bytea, moving the first aside failed (text refuses those
// bytes): the partition's transaction was rolled back and retried for
// ever, the row before it published again each time, the rows after it
// never.
func TestPostgresOutboxBytePayloadMovedAside(t *testing.T) {
	o := newOutboxOf(t, "bytea")
	n := startNode(t)
	sub := subscribe(t, n.hub, "news")
	bad := [][]byte{{0xff, 0xfe, '{', 0x80}, []byte("{\"channel\":\"news\",\x00\"data\":{}}")}
	o.writeBytes(t, 0, "publish", []byte(publishCmd("news", 1, "")))
	o.writeBytes(t, 0, "publish", bad[0])
	o.writeBytes(t, 0, "publish", []byte(publishCmd("news", 2, "")))
	o.writeBytes(t, 0, "publish", bad[1])
	o.writeBytes(t, 0, "publish", []byte(publishCmd("news", 3, "")))
	g := runGroup(t, o.config("outbox", 1, "a"), n.exec, "a")
	equal(t, sub.waitFor(t, 3, 10*time.Second), nums(3))
	eventually(t, 5*time.Second, "outbox emptied", func() bool { return o.count(t, o.table) == 0 })
	rows, err := o.pool.Query(context.Background(), `SELECT payload FROM `+o.table+`_dead_letter ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]byte
	for rows.Next() {
		var p []byte
		if err := rows.Scan(&p); err != nil {
			t.Fatal(err)
		}
		got = append(got, p)
	}
	if len(got) != 2 || !bytes.Equal(got[0], bad[0]) || !bytes.Equal(got[1], bad[1]) {
		t.Fatalf("dead letters %q, want the refused rows' bytes %q", got, bad)
	}
	equal(t, sub.settle(t, 3, 300*time.Millisecond), nums(3))
	if h := g.Health()["outbox"]; h != "" {
		t.Fatalf("health %q, want up", h)
	}
}

// TestPostgresOutboxStuckPartitionAppliesOnce: a row that cannot be moved
// aside (the dead-letter table refuses it) stops its partition there. The
// rows before it are applied once and deleted, not again at each retry;
// the partition is down in the consumer's health and in
// herald_consumer_up while it is stuck, even as another partition makes
// progress; once the dead-letter table takes the row, the partition goes
// on. Before, the partition's whole transaction was rolled back at each
// retry, publishing the rows before the stuck one again, and any other
// partition's progress showed the consumer up.
func TestPostgresOutboxStuckPartitionAppliesOnce(t *testing.T) {
	o := newOutbox(t)
	n := startNode(t)
	sub := subscribe(t, n.hub, "news")
	other := subscribe(t, n.hub, "other")
	o.exec(t, `CREATE TABLE `+o.table+`_dead_letter (
		id bigint NOT NULL, method text NOT NULL, payload bytea NOT NULL, partition integer NOT NULL,
		error text NOT NULL, failed_at timestamptz NOT NULL DEFAULT now(),
		CONSTRAINT refuse_poison CHECK (method <> 'poison'))`)
	o.write(t, 0, "publish", publishCmd("news", 1, ""))
	o.write(t, 0, "publish", publishCmd("news", 2, ""))
	o.write(t, 0, "poison", `{}`) // an unknown method: moved aside, where the table refuses it
	o.write(t, 0, "publish", publishCmd("news", 3, ""))
	g := runGroup(t, o.config("outbox", 2, "a"), n.exec, "a")
	equal(t, sub.waitFor(t, 2, 10*time.Second), nums(2))
	eventually(t, 5*time.Second, "partition 0 down", func() bool {
		return strings.Contains(g.Health()["outbox"], "partition 0")
	})
	// Partition 1 makes progress meanwhile; the consumer stays down.
	o.write(t, 1, "publish", publishCmd("other", 1, ""))
	equal(t, other.waitFor(t, 1, 10*time.Second), nums(1))
	// Retries at 100, 200, 400 and 800 ms: each used to publish 1 and 2
	// again.
	equal(t, sub.settle(t, 2, 1500*time.Millisecond), nums(2))
	if h := g.Health()["outbox"]; !strings.Contains(h, "partition 0") || !strings.Contains(h, "refuse_poison") {
		t.Fatalf("health %q, want partition 0 down on the dead-letter table's refusal", h)
	}
	if up := counter(t, g, "herald_consumer_up", "outbox"); up != 0 {
		t.Fatalf("herald_consumer_up %v while partition 0 is stuck, want 0", up)
	}
	if left := o.count(t, o.table); left != 2 {
		t.Fatalf("%d rows left, want 2 (the stuck row and the one after it)", left)
	}
	o.exec(t, `ALTER TABLE `+o.table+`_dead_letter DROP CONSTRAINT refuse_poison`)
	equal(t, sub.waitFor(t, 3, 15*time.Second), nums(3))
	eventually(t, 10*time.Second, "healthy again", func() bool { return g.Health()["outbox"] == "" })
	if up := counter(t, g, "herald_consumer_up", "outbox"); up != 1 {
		t.Fatalf("herald_consumer_up %v after the partition moved on, want 1", up)
	}
	equal(t, sub.settle(t, 3, 200*time.Millisecond), nums(3))
}

// TestPostgresOutboxColumnTypesChecked: an outbox table whose columns are
// not of the documented types is named at the start, in the consumer's
// health, with the column and the types wanted; before, the start passed
// and each batch failed on a scan error.
func TestPostgresOutboxColumnTypesChecked(t *testing.T) {
	o := newOutboxOf(t, "integer")
	n := startNode(t)
	g := runGroup(t, o.config("outbox", 1, "a"), n.exec, "a")
	eventually(t, 5*time.Second, "the column named", func() bool {
		h := g.Health()["outbox"]
		return strings.Contains(h, "payload is integer") && strings.Contains(h, "jsonb")
	})
	if up := counter(t, g, "herald_consumer_up", "outbox"); up != 0 {
		t.Fatalf("herald_consumer_up %v, want 0", up)
	}
}

// TestPostgresOutboxDeadLetterTextConverted: a dead-letter table made by
// an earlier version, its payload text, is converted to bytea at the
// start, its rows kept.
func TestPostgresOutboxDeadLetterTextConverted(t *testing.T) {
	o := newOutboxOf(t, "bytea")
	n := startNode(t)
	sub := subscribe(t, n.hub, "news")
	o.exec(t, `CREATE TABLE `+o.table+`_dead_letter (
		id bigint NOT NULL, method text NOT NULL, payload text NOT NULL, partition integer NOT NULL,
		error text NOT NULL, failed_at timestamptz NOT NULL DEFAULT now())`)
	o.exec(t, `INSERT INTO `+o.table+`_dead_letter (id, method, payload, partition, error) VALUES (0, 'publish', '{"é":1}', 0, 'old')`)
	o.writeBytes(t, 0, "publish", []byte{0xff})
	o.writeBytes(t, 0, "publish", []byte(publishCmd("news", 1, "")))
	runGroup(t, o.config("outbox", 1, "a"), n.exec, "a")
	equal(t, sub.waitFor(t, 1, 10*time.Second), nums(1))
	eventually(t, 5*time.Second, "outbox emptied", func() bool { return o.count(t, o.table) == 0 })
	var old []byte
	if err := o.pool.QueryRow(context.Background(), `SELECT payload FROM `+o.table+`_dead_letter WHERE id = 0`).Scan(&old); err != nil {
		t.Fatal(err)
	}
	if string(old) != `{"é":1}` {
		t.Fatalf("the earlier dead letter became %q", old)
	}
	if got := o.count(t, o.table+"_dead_letter"); got != 2 {
		t.Fatalf("%d dead letters, want 2", got)
	}
}
