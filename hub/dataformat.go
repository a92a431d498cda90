package hub

import (
	"bytes"
	"fmt"

	"github.com/heraldhq/herald/protocol"
)

// The payload model. A JSON connection embeds publication data in its
// frames as JSON, so it cannot carry bytes that are not JSON; a Protobuf
// connection carries anything. A namespace's publication_data_format says
// what its channels carry, with Centrifugo's values and meanings
// (centrifugo v6.9.1 internal/config/format.go); the data is checked when
// it enters the channel, not when it leaves, so that a publication some
// subscriber could not decode is refused at publish time and nothing
// published later can cost a subscriber its subscription.
//
// Centrifugo's default takes any non-empty bytes and leaves JSON
// subscribers to fail on what they cannot decode. Herald's default takes
// any non-empty bytes too, but non-JSON bytes only while no JSON client of
// this node is subscribed to the channel; delivery skips, for JSON
// clients, what still reaches them (from another node, or from history
// written before they subscribed) instead of closing them (canDecodeFrom).

// DataFormat is what a namespace's publications carry.
type DataFormat string

const (
	// DataFormatAny (the default, Centrifugo's empty value) accepts any
	// non-empty data: JSON always, other bytes while no JSON client of
	// this node is subscribed to the channel. JSON and Protobuf clients
	// may subscribe.
	DataFormatAny DataFormat = ""
	// DataFormatJSON accepts one JSON value in valid UTF-8; JSON and
	// Protobuf clients may subscribe.
	DataFormatJSON DataFormat = "json"
	// DataFormatJSONObject accepts only a JSON object.
	DataFormatJSONObject DataFormat = "json_object"
	// DataFormatBinary accepts any bytes, empty ones too; only Protobuf
	// clients may subscribe, since JSON clients could not decode them.
	DataFormatBinary DataFormat = "binary"
)

func (f DataFormat) valid() bool {
	switch f {
	case DataFormatAny, DataFormatJSON, DataFormatJSONObject, DataFormatBinary:
		return true
	}
	return false
}

func (f DataFormat) binary() bool { return f == DataFormatBinary }

// checkPublicationData refuses data the namespace does not carry, or that
// a JSON subscriber of ch on this node could not decode, with a bad
// request error that says why (clients and the API show it).
func (h *Hub) checkPublicationData(ch string, r *rule, data []byte) *Error {
	switch r.PublicationDataFormat {
	case DataFormatBinary:
		return nil
	case DataFormatJSONObject:
		if !protocol.ValidJSONPayload(data) || !bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{")) {
			return dataError("data must be a JSON object (the namespace's publication_data_format is json_object)")
		}
	case DataFormatJSON:
		if !protocol.ValidJSONPayload(data) {
			return dataError("data must be valid JSON in UTF-8 (the namespace's publication_data_format is json)")
		}
	default:
		if len(data) == 0 {
			return dataError("data required (set publication_data_format: binary for empty data)")
		}
		if !protocol.ValidJSONPayload(data) && h.hasJSONSubscriber(ch) {
			return dataError("data is not valid JSON in UTF-8 and JSON clients subscribe to this channel, which could not decode it (set publication_data_format: binary for a channel of Protobuf clients only)")
		}
	}
	return nil
}

// hasJSONSubscriber reports whether a JSON client of this node is
// subscribed to ch. It runs only for non-JSON data, and stops at the
// first JSON client.
func (h *Hub) hasJSONSubscriber(ch string) bool {
	return h.subs.some(ch, func(c *Client) bool { return c.proto == protocol.TypeJSON })
}

// checkSubscriber refuses a JSON client a channel whose data it could not
// decode.
func (r *rule) checkSubscriber(t protocol.Type) *Error {
	if r.PublicationDataFormat.binary() && t == protocol.TypeJSON {
		return dataError("the channel carries binary data (publication_data_format: binary): connect with the Protobuf protocol to subscribe")
	}
	return nil
}

func dataError(why string) *Error {
	return &Error{Code: protocol.ErrorBadRequest, Message: fmt.Sprintf("%s: %s", protocol.ErrorBadRequest.Message(), why)}
}
