package consumer_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/heraldhq/herald/internal/test/testenv"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, append(testenv.ProcessGoroutines(),
		// The Pub/Sub client's stream keep-alive goroutine (v2.9.0,
		// iterator.go streamKeepAliveHandler) sees that its Receive ended
		// only at its ping ticker's next tick, seconds after Receive
		// returned and the client closed.
		goleak.IgnoreTopFunction("cloud.google.com/go/pubsub/v2.(*messageIterator).streamKeepAliveHandler"))...)
}
