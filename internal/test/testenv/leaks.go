package testenv

import "go.uber.org/goleak"

// ProcessGoroutines are goleak options for goroutines a dependency starts
// for the life of the process, which no test can end: go.opencensus.io
// (brought by the Google Cloud Pub/Sub client the consumers link) starts
// its stats worker in an init function, in every test binary that links
// the consumer package.
func ProcessGoroutines() []goleak.Option {
	return []goleak.Option{goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start")}
}
