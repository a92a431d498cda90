package hub

import (
	"bytes"
	"fmt"

	"github.com/heraldhq/herald/protocol"
)

// The payload model. A JSON connection embeds publication data in its
// frames as JSON, so it cannot carry bytes that are not JSON; a Protobuf
// connection carries anything. Whether a channel's publications must be
// JSON is therefore decided once, by its namespace, and enforced when
// data enters the channel, not when it leaves: a publication that some
// subscriber could not decode is refused at publish time, and a JSON
// client is refused a binary channel at subscribe time, so that nothing
// published later can cost a subscriber its subscription.

// DataFormat is what a namespace's publications carry.
type DataFormat string

const (
	// DataFormatJSON (the default, also written "") accepts one JSON
	// value in valid UTF-8; JSON and Protobuf clients may subscribe.
	DataFormatJSON DataFormat = "json"
	// DataFormatJSONObject accepts only a JSON object.
	DataFormatJSONObject DataFormat = "json_object"
	// DataFormatBinary accepts any bytes; only Protobuf clients may
	// subscribe, since JSON clients could not decode them.
	DataFormatBinary DataFormat = "binary"
)

func (f DataFormat) valid() bool {
	switch f {
	case "", DataFormatJSON, DataFormatJSONObject, DataFormatBinary:
		return true
	}
	return false
}

func (f DataFormat) binary() bool { return f == DataFormatBinary }

// checkPublicationData refuses data the namespace does not carry, with a
// bad request error that says why (clients and the API show it).
func (r *rule) checkPublicationData(data []byte) *Error {
	switch r.PublicationDataFormat {
	case DataFormatBinary:
		return nil
	case DataFormatJSONObject:
		if !protocol.ValidJSONPayload(data) || !bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{")) {
			return dataError("data must be a JSON object (the namespace's publication_data_format is json_object)")
		}
	default:
		if !protocol.ValidJSONPayload(data) {
			return dataError("data must be valid JSON in UTF-8 (the namespace carries JSON; set publication_data_format: binary for other bytes)")
		}
	}
	return nil
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
