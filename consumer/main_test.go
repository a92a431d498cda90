package consumer_test

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// The Pub/Sub client's dependency go.opencensus.io starts its
		// stats worker in an init function, for the life of the process.
		goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"),
		// The Pub/Sub client's stream keep-alive goroutine (v2.9.0,
		// iterator.go streamKeepAliveHandler) sees that its Receive ended
		// only at its ping ticker's next tick, seconds after Receive
		// returned and the client closed.
		goleak.IgnoreTopFunction("cloud.google.com/go/pubsub/v2.(*messageIterator).streamKeepAliveHandler"))
}
