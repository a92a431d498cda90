// Package sequence puts the live deliveries of a networked engine with
// history back in order before they reach the engine's Handler.
//
// PostgreSQL's LISTEN/NOTIFY and Redis pub/sub deliver at most once: a
// message sent while a node's connection is down, or dropped on the way,
// is gone. Both engines keep every publication of a channel with history
// in a stream with offsets and an epoch, so a node can tell from the
// offsets what it missed and read it back. A Sequencer is that logic,
// written once for both: one queue that a connection's reader fills and one
// goroutine that empties it into the Handler, refilling gaps and replaying
// after reconnects from the engine's History.
//
// # Delivery-order contract
//
// A Sequencer hands the Handler what was queued (Deliver, Subscribe,
// Unsubscribe, Resync, ResyncAll) in queue order, from one goroutine, and
// for each channel between its Subscribe and its Unsubscribe it promises:
//
//   - Publications with offsets arrive in strictly increasing offset order,
//     each at most once, and the StreamPosition handed with each is the
//     publication's offset and the stream's epoch.
//   - Nothing is skipped that history still holds: a live publication
//     whose offset is not the next one is preceded by the missing ones,
//     read from History. What history no longer holds (trimmed, expired)
//     is skipped, counted as lost and logged, so that subscribers recover.
//   - A different epoch means a new stream: offsets start again from the
//     new stream's first publication, and the change is logged.
//   - A resync delivers, at the point of the queue where it was queued,
//     every publication the stream holds beyond the last one delivered, in
//     order. Everything queued before it is delivered first, everything
//     queued after it (a reconnected connection's first messages) after it,
//     and live publications the replay already delivered are dropped.
//   - Publications without offsets (channels without history), join and
//     leave events are delivered in queue order, unchecked.
//
// Messages of channels that are not subscribed are dropped; one of a
// channel between its Expect and its Subscribe makes that Subscribe replay
// the channel from its base (Sequencer.Expect). Messages that
// belong to no channel (control messages) are always delivered, in queue
// order.
//
// A read from History that fails is retried with backoff until it
// succeeds or the Sequencer stops: skipping it would break the order, so
// an outage delays delivery of the Sequencer's channels instead.
package sequence
