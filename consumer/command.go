package consumer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Command is one API command: the method name and its JSON request.
type Command struct {
	Method  string
	Payload []byte
}

// envelope is Centrifugo's consumer message when the method is not given
// apart (a header, field or column): {"method":"publish","payload":{…}}.
// payload may also be a JSON string holding the request, as Centrifugo
// accepts.
type envelope struct {
	Method  string          `json:"method"`
	Payload json.RawMessage `json:"payload"`
}

// ErrMalformed marks a message that is not a command; it is never retried.
var ErrMalformed = errors.New("malformed message")

// Decode returns the command of a message. method is the method given
// apart from the data (an outbox row's method column, a centrifugo-method
// header, a Redis stream's method field); when it is empty, data is the
// envelope {"method":…,"payload":…}.
func Decode(method string, data []byte) (Command, error) {
	if method != "" {
		return Command{Method: method, Payload: data}, nil
	}
	var e envelope
	if err := json.Unmarshal(data, &e); err != nil {
		return Command{}, fmt.Errorf("%w: not a {\"method\",\"payload\"} JSON object: %v", ErrMalformed, err)
	}
	if e.Method == "" {
		return Command{}, fmt.Errorf("%w: method is missing", ErrMalformed)
	}
	payload := bytes.TrimSpace(e.Payload)
	if len(payload) > 0 && payload[0] == '"' {
		var s string
		if err := json.Unmarshal(payload, &s); err != nil {
			return Command{}, fmt.Errorf("%w: payload: %v", ErrMalformed, err)
		}
		payload = []byte(s)
	}
	return Command{Method: e.Method, Payload: payload}, nil
}
