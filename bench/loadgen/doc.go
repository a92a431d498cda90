// Package loadgen is the engine of `herald-bench`: a lean client for the
// Centrifugo client protocol (one epoll instance per shard, no goroutine
// and no buffer per idle connection), connection ramps spread over target
// URLs, source addresses and worker processes, and an end-to-end latency
// probe that schedules publications on an absolute timeline and measures
// every copy from its intended send time, so that a stalled server cannot
// hide its stall (coordinated omission).
//
// It works against Herald or any server that speaks the Centrifugo client
// protocol and server HTTP API.
package loadgen
