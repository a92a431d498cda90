// Package jsonclient is the Centrifugo JSON protocol client that the tests
// of the hub, proxy, api and server packages share: it sends commands as
// written, reads frames as the server wrote them (several messages joined
// with newlines), matches replies to commands by id and checks close codes.
// It speaks to a hub over an in-memory hubtest connection or to a server
// over a real WebSocket, through the same Wire, so one test can run both
// ways.
//
// It is for tests only: every Client method fails the test it was made
// for instead of returning an error, except where the method says so.
package jsonclient
