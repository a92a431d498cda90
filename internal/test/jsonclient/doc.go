// Package jsonclient is the Centrifugo JSON protocol client that Herald's
// tests share: it sends commands as written, reads frames as the server
// wrote them (several messages joined with newlines), matches replies to
// commands by id and checks close codes. It speaks on a wire.Wire, to a
// hub in memory or to a server over a real WebSocket.
//
// It is for tests only: every Client method fails the test it was made
// for instead of returning an error, except where the method says so.
package jsonclient
