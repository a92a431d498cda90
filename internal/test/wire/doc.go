// Package wire is the connection Herald's test clients speak on: frames
// go out and come in exactly as sent and written, over an in-memory
// hub/hubtest connection attached to a hub or over a real WebSocket to a
// server, so one test can run both ways and the JSON client (jsonclient)
// and the Protobuf client (pbclient) share it. It also waits for the
// server's close, for tests that check close codes.
//
// It is for tests only.
package wire
