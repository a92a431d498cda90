// Package test roots the helpers that Herald's tests share, kept apart from
// the product code under internal/ so that the layers stay readable: a
// helper here may import any product package (it stands above them all),
// but no product code imports a helper, which TestProductImportsNoTestHelper
// checks. The tests of the clients themselves are in this package too,
// against one in-memory hub.
//
//   - jsonclient: the Centrifugo JSON protocol test client (Client, which
//     fails the test, and Conn, which returns errors, for goroutines).
//   - pbclient: the Centrifugo Protobuf protocol test client.
//   - wire: the connection both clients speak on, in memory (hub/hubtest)
//     or over a real WebSocket.
//   - testtoken: connection and subscription tokens signed with a secret.
//   - ssetest: reads server-sent events as a browser does.
//   - testenv: the test services (PostgreSQL, Redis, NATS), polling, logs.
//   - testcerts: throwaway certificate authorities and certificates.
//   - otlptest: an OTLP receiver that collects exported spans.
//   - kafkatest: an Apache Kafka broker of the test's own.
//   - protogen: checks that generated Protobuf code is current.
//   - golden: checks generated files the repository keeps (docs tables),
//     and rewrites them with -update.
//   - servertest: a whole node (package server) started in the test's
//     process and shut down when the test ends.
package test
