package protocol

import (
	"encoding/json"
	"fmt"
)

// DecodeReplies and json.Unmarshal into any message use encoding/json with
// the generated structs' tags (snake_case names); DecodeCommands has faster
// hand-written decoders that must agree with this path. Messages with bytes fields get UnmarshalJSON methods
// that take those fields as json.RawMessage, so payloads stay the exact raw
// JSON the client sent (encoding/json would expect base64). Each method
// decodes the remaining fields through a method-less copy of the type,
// embedded so that its fields are promoted and the raw field, being less
// nested, takes precedence. As in the reference server, unknown fields are
// skipped and null leaves a field unset.

// rawValue returns a payload decoded as json.RawMessage (present in the
// input), treating null as unset like encoding/json does for other fields.
// encoding/json hands over a copy, so it does not alias the frame.
func rawValue(m json.RawMessage) []byte {
	if len(m) == 0 || string(m) == "null" {
		return nil
	}
	return m
}

// decodeObject unmarshals the JSON object b into v, naming the message in
// errors. encoding/json hands UnmarshalJSON the value without surrounding
// whitespace, so the first byte tells an object.
func decodeObject(name string, b []byte, v any) error {
	if len(b) == 0 || b[0] != '{' {
		return fmt.Errorf("%s: not a JSON object", name)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// UnmarshalJSON decodes the Centrifugo JSON form, keeping data verbatim.
func (x *ConnectRequest) UnmarshalJSON(b []byte) error {
	type plain ConnectRequest
	v := struct {
		*plain
		Data json.RawMessage `json:"data"`
	}{plain: (*plain)(x)}
	if err := decodeObject("connect", b, &v); err != nil {
		return err
	}
	if v.Data != nil {
		x.Data = rawValue(v.Data)
	}
	return nil
}

// UnmarshalJSON decodes the Centrifugo JSON form, keeping data verbatim.
func (x *SubscribeRequest) UnmarshalJSON(b []byte) error {
	type plain SubscribeRequest
	v := struct {
		*plain
		Data json.RawMessage `json:"data"`
	}{plain: (*plain)(x)}
	if err := decodeObject("subscribe", b, &v); err != nil {
		return err
	}
	if v.Data != nil {
		x.Data = rawValue(v.Data)
	}
	return nil
}

// UnmarshalJSON decodes the Centrifugo JSON form, keeping data verbatim.
func (x *PublishRequest) UnmarshalJSON(b []byte) error {
	type plain PublishRequest
	v := struct {
		*plain
		Data json.RawMessage `json:"data"`
	}{plain: (*plain)(x)}
	if err := decodeObject("publish", b, &v); err != nil {
		return err
	}
	if v.Data != nil {
		x.Data = rawValue(v.Data)
	}
	return nil
}

// UnmarshalJSON decodes the Centrifugo JSON form, keeping data verbatim.
func (x *RPCRequest) UnmarshalJSON(b []byte) error {
	type plain RPCRequest
	v := struct {
		*plain
		Data json.RawMessage `json:"data"`
	}{plain: (*plain)(x)}
	if err := decodeObject("rpc", b, &v); err != nil {
		return err
	}
	if v.Data != nil {
		x.Data = rawValue(v.Data)
	}
	return nil
}

// UnmarshalJSON decodes the Centrifugo JSON form, keeping data verbatim.
func (x *SendRequest) UnmarshalJSON(b []byte) error {
	type plain SendRequest
	v := struct {
		*plain
		Data json.RawMessage `json:"data"`
	}{plain: (*plain)(x)}
	if err := decodeObject("send", b, &v); err != nil {
		return err
	}
	if v.Data != nil {
		x.Data = rawValue(v.Data)
	}
	return nil
}

// UnmarshalJSON decodes the Centrifugo JSON form, keeping conn_info and
// chan_info verbatim.
func (x *ClientInfo) UnmarshalJSON(b []byte) error {
	type plain ClientInfo
	v := struct {
		*plain
		ConnInfo json.RawMessage `json:"conn_info"`
		ChanInfo json.RawMessage `json:"chan_info"`
	}{plain: (*plain)(x)}
	if err := decodeObject("client info", b, &v); err != nil {
		return err
	}
	if v.ConnInfo != nil {
		x.ConnInfo = rawValue(v.ConnInfo)
	}
	if v.ChanInfo != nil {
		x.ChanInfo = rawValue(v.ChanInfo)
	}
	return nil
}

// UnmarshalJSON decodes the Centrifugo JSON form, keeping data and
// prev_data verbatim.
func (x *Publication) UnmarshalJSON(b []byte) error {
	type plain Publication
	v := struct {
		*plain
		Data     json.RawMessage `json:"data"`
		PrevData json.RawMessage `json:"prev_data"`
	}{plain: (*plain)(x)}
	if err := decodeObject("publication", b, &v); err != nil {
		return err
	}
	if v.Data != nil {
		x.Data = rawValue(v.Data)
	}
	if v.PrevData != nil {
		x.PrevData = rawValue(v.PrevData)
	}
	return nil
}

// UnmarshalJSON decodes the Centrifugo JSON form, keeping data verbatim.
func (x *Subscribe) UnmarshalJSON(b []byte) error {
	type plain Subscribe
	v := struct {
		*plain
		Data json.RawMessage `json:"data"`
	}{plain: (*plain)(x)}
	if err := decodeObject("subscribe push", b, &v); err != nil {
		return err
	}
	if v.Data != nil {
		x.Data = rawValue(v.Data)
	}
	return nil
}

// UnmarshalJSON decodes the Centrifugo JSON form, keeping data verbatim.
func (x *Message) UnmarshalJSON(b []byte) error {
	type plain Message
	v := struct {
		*plain
		Data json.RawMessage `json:"data"`
	}{plain: (*plain)(x)}
	if err := decodeObject("message push", b, &v); err != nil {
		return err
	}
	if v.Data != nil {
		x.Data = rawValue(v.Data)
	}
	return nil
}

// UnmarshalJSON decodes the Centrifugo JSON form, keeping data verbatim.
func (x *Connect) UnmarshalJSON(b []byte) error {
	type plain Connect
	v := struct {
		*plain
		Data json.RawMessage `json:"data"`
	}{plain: (*plain)(x)}
	if err := decodeObject("connect push", b, &v); err != nil {
		return err
	}
	if v.Data != nil {
		x.Data = rawValue(v.Data)
	}
	return nil
}

// UnmarshalJSON decodes the Centrifugo JSON form, keeping data verbatim.
func (x *ConnectResult) UnmarshalJSON(b []byte) error {
	type plain ConnectResult
	v := struct {
		*plain
		Data json.RawMessage `json:"data"`
	}{plain: (*plain)(x)}
	if err := decodeObject("connect result", b, &v); err != nil {
		return err
	}
	if v.Data != nil {
		x.Data = rawValue(v.Data)
	}
	return nil
}

// UnmarshalJSON decodes the Centrifugo JSON form, keeping data verbatim.
func (x *SubscribeResult) UnmarshalJSON(b []byte) error {
	type plain SubscribeResult
	v := struct {
		*plain
		Data json.RawMessage `json:"data"`
	}{plain: (*plain)(x)}
	if err := decodeObject("subscribe result", b, &v); err != nil {
		return err
	}
	if v.Data != nil {
		x.Data = rawValue(v.Data)
	}
	return nil
}

// UnmarshalJSON decodes the Centrifugo JSON form, keeping data verbatim.
func (x *RPCResult) UnmarshalJSON(b []byte) error {
	type plain RPCResult
	v := struct {
		*plain
		Data json.RawMessage `json:"data"`
	}{plain: (*plain)(x)}
	if err := decodeObject("rpc result", b, &v); err != nil {
		return err
	}
	if v.Data != nil {
		x.Data = rawValue(v.Data)
	}
	return nil
}
