// Package hubtest connects clients to a hub.Hub without sockets, for tests
// of the hub and of applications that embed it.
//
// A Conn is an in-memory hub.Transport with the client's end attached: the
// test sends frames of commands with Send, as a transport's reader would
// hand them to Client.HandleFrame, and reads the frames the hub wrote with
// Next, exactly as the hub batched them. The hub's close comes out of Next
// as a *CloseError after the frames written before it; Drop makes the
// client go away.
//
// The Conn keeps the contract a real transport gives the hub (see
// hub.Transport and transport/websocket): frames reach HandleFrame one at a
// time and stop once it returned false or the connection closed; a frame
// is valid only during HandleFrame (the Conn overwrites it afterwards, so a
// hub that keeps it sees garbage at once rather than on a busy server);
// HandleClose follows exactly once when the connection is gone, never
// concurrently with HandleFrame and never inside Close or WriteFrame. It
// also checks the hub's side: two WriteFrame calls at once on one Conn
// panic.
//
// Replies may be written after Send returns (the hub may run commands on
// goroutines of its own), so tests wait for them with Next and a deadline
// rather than expecting them on return.
//
// Stall and FailWrites stand in for a client that stopped reading and for
// a broken connection, to test slow clients and write errors.
package hubtest
