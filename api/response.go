package api

import (
	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/protocol"
)

// A method's result can be far larger than its request: a 28-byte
// history request with limit -1 once answered 200 MB, and a node held
// 1.2 GB for it. So every result is bounded by Config.MaxResponseSize,
// as a batch's replies are by MaxBatchResponseSize, and answered with
// error 106 naming the limit when it would pass it; the reference has no
// such limit, and a truncated answer would look complete to a caller
// that asked for everything. The bound is applied twice: the methods
// whose result grows with the data (history, presence, channels) count
// an estimate as they build it, so that they stop before holding it all,
// and the HTTP and gRPC answers check the exact encoded size of every
// result.

// entryOverhead is a lower bound of the bytes a result entry takes
// besides its payloads (keys, quotes, offsets), so that the estimates
// stay below the encoded size.
const entryOverhead = 16

// responseTooLarge is error 106 for a result of method past the limit;
// what tells the caller how to ask for less.
func (a *handler) responseTooLarge(method, what string) *Error {
	return newError(protocol.ErrorLimitExceeded, "limit exceeded: the %s result passes the limit of %d bytes (http_api.max_response_size)%s", method, a.cfg.MaxResponseSize, what)
}

// resultTooLarge is the error of a result whose encoded size passed the
// limit when the method's own estimate did not.
func (a *handler) resultTooLarge(method string) *Error {
	return a.responseTooLarge(method, resultHint(method))
}

// resultHint says how to ask method for less.
func resultHint(method string) string {
	switch method {
	case "history":
		return ": ask with a smaller limit and page with since"
	case "presence":
		return ": use presence_stats, or connections with the channel (paged)"
	case "channels":
		return ": use a narrower pattern"
	case "connections", "map_read_state", "map_read_stream":
		return ": ask with a smaller limit"
	}
	return ""
}

// clientInfoSize is a lower bound of ci's encoded size.
func clientInfoSize(ci *engine.ClientInfo) int64 {
	if ci == nil {
		return 0
	}
	return int64(len(ci.User)+len(ci.Client)+len(ci.ConnInfo)+len(ci.ChanInfo)) + entryOverhead
}

// publicationSize is a lower bound of p's encoded size.
func publicationSize(p *engine.Publication) int64 {
	n := int64(len(p.Data)) + entryOverhead + clientInfoSize(p.Info)
	for k, v := range p.Tags {
		n += int64(len(k) + len(v))
	}
	return n
}
