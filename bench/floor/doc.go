// Command floor is the physical floor of delivery that Herald's benchmark
// results are reported against: a server that speaks just enough of the
// Centrifugo client protocol for herald-bench (connect, subscribe, the
// server API's publish and batch) on the same connection layer as Herald
// (net, github.com/gobwas/ws, one write per frame), and does nothing else.
//
// Connect and subscribe get pre-encoded replies (no token check unless
// -secret is given, then an HS256/384/512 signature check with
// golang-jwt, as Herald's default). Subscribers of a channel sit in plain
// slices split over -writers goroutines. An API publication is encoded
// once per client format and appended to each writer's pending bytes; the
// writer writes everything pending to each socket in one write, so
// publications that arrive while it is busy coalesce into the next round.
// There is no hub, no per-client queue, no history, no presence, no ping.
// -round-interval makes a writer's rounds at least that far apart, so that
// it coalesces at a fixed interval: a floor for a server that coalesces
// writes, at the rates where it pays.
//
// -redis relays publications through Redis (relay.go): the API publishes
// into Redis and the subscribers get what Redis sends, so two floors on
// one Redis, the API on one and the subscribers on the other, are the
// floor of a two-node deployment on a Redis engine.
//
// -bare is the floor of the connection rate: accept, upgrade, answer the
// first frame with canned replies (a connect, then a subscribe for each
// further message in it, as herald-bench conns sends them; the frame is
// decoded only to check the token when -secret is set), and hold the
// connection without joining any channel.
//
// Every connection has a goroutine blocked in Read, so the floor's memory
// per connection is not a floor for Herald's (which reads with epoll and
// keeps no goroutine per idle connection); its CPU and latency are.
package main
