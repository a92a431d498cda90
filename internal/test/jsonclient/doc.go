// Package jsonclient is the Centrifugo JSON protocol client that Herald's
// tests share: it sends commands as written, reads frames as the server
// wrote them (several messages joined with newlines), matches replies to
// commands by id and checks close codes. It speaks on a wire.Wire, to a
// hub in memory or to a server over a real WebSocket.
//
// It is for tests only: every Client method fails the test it was made
// for instead of returning an error, except where the method says so.
// Conn is the same client for goroutines other than the test's and for
// clients that must live through errors: it returns errors, decodes
// messages into Message and answers the server's pings.
package jsonclient
