package sequence

import (
	"context"

	"github.com/heraldhq/herald/engine"
)

// Kind says what a Message is.
type Kind uint8

const (
	// Publication is a publication on Channel; Pub.Offset is its offset in
	// the stream of Epoch, 0 for channels without history.
	Publication Kind = iota
	// Join and Leave are presence events on Channel.
	Join
	Leave
	// Control is a control message, which belongs to no channel.
	Control
)

// Message is a queued message, resolved: what the Handler is given.
// Channel and Epoch may point into a received payload; the Sequencer hands
// the Handler the channel name it keeps itself and copies an epoch it
// keeps.
type Message struct {
	Kind    Kind
	Channel string
	Epoch   string
	Pub     *engine.Publication // Publication
	Info    *engine.ClientInfo  // Join, Leave
	Data    []byte              // Control
}

// Cursor is a channel's place in its stream: the last offset delivered
// (or known to be covered) in stream Epoch.
type Cursor struct {
	Channel string
	After   uint64
	Epoch   string
}

// Tail is what History found of a stream beyond a Cursor.
type Tail struct {
	// Top and Epoch are the stream's position when it was read; Epoch is
	// empty when the channel has no stream (nothing was published since it
	// went away).
	Top   uint64
	Epoch string
	// Pubs are publications of Epoch in ascending offset order, up to Top:
	// those after the Cursor when Epoch is the Cursor's, and otherwise
	// either the new stream's from its start or none, with More set.
	Pubs []*engine.Publication
	// More says that Pubs may stop short of Top (a read cut at a batch
	// size), so the stream must be read again after the last of them.
	More bool
}

// History reads the streams a Sequencer refills gaps and replays from.
// Its methods run on the Sequencer's goroutine, under Retry: an error is
// logged and the read made again.
type History interface {
	// Between returns channel's publications of stream epoch with offsets
	// after after, up to upto inclusive, in ascending order; none when the
	// stream has another epoch now. more says that the read was cut short
	// (at a batch size) and may have left publications before upto.
	Between(ctx context.Context, channel, epoch string, after, upto uint64) (pubs []*engine.Publication, more bool, err error)
	// Tails reads, for each cursor, the stream's position and publications
	// beyond the cursor (see Tail); it returns one Tail per cursor, in
	// order. A store answers all of them in one round trip where it can.
	Tails(ctx context.Context, cursors []Cursor) ([]Tail, error)
}

// Metrics counts what a Sequencer repaired; the engine exports the totals.
type Metrics interface {
	// GapRepaired counts a live publication that arrived after a gap.
	GapRepaired()
	// Replayed counts publications delivered from History.
	Replayed(n int)
	// Lost counts publications History no longer held when they were
	// needed; their subscribers have to recover.
	Lost(n uint64)
}

// noMetrics is the Metrics of a Config without any.
type noMetrics struct{}

func (noMetrics) GapRepaired() {}
func (noMetrics) Replayed(int) {}
func (noMetrics) Lost(uint64)  {}
