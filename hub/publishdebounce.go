package hub

import (
	"fmt"
	"math"
	"time"

	"github.com/heraldhq/herald/protocol"
)

// A namespace's ClientPublishDebounceInterval reaches its subscribers as
// SubscribeResult.publish_debounce (field 19, milliseconds), as
// Centrifugo's client_publish_debounce_interval does (centrifuge v0.40.1
// SubscribeOptions.ClientPublishDebounceInterval): centrifuge-js 5.8 then
// sends the first publish of a key at once and coalesces the next ones
// within the interval into one. The server only announces it.

// checkPublishDebounce adds the problem of a debounce interval that is
// negative, not whole milliseconds, or too long for the field.
func checkPublishDebounce(o NamespaceOptions, field string, ps *optionProblems) {
	d := o.ClientPublishDebounceInterval
	switch {
	case d < 0:
		ps.add(field, "ClientPublishDebounceInterval", fmt.Sprintf("%s: must not be negative", d))
	case d%time.Millisecond != 0:
		ps.add(field, "ClientPublishDebounceInterval", fmt.Sprintf("%s: whole milliseconds, as the client counts", d))
	case d.Milliseconds() > math.MaxUint32:
		ps.add(field, "ClientPublishDebounceInterval", fmt.Sprintf("%s: at most %d ms", d, uint32(math.MaxUint32)))
	}
}

// announcePublishDebounce sets the subscribe result's publish_debounce.
func (o NamespaceOptions) announcePublishDebounce(res *protocol.SubscribeResult) {
	res.PublishDebounce = uint32(o.ClientPublishDebounceInterval.Milliseconds())
}
