package hub

import (
	"errors"
	"fmt"

	"github.com/heraldhq/herald/protocol"
)

// A unidirectional client cannot read an error reply to its connect: the
// hub closes it with a disconnect instead (uniConnectDisconnect), and a
// transport that can answer otherwise (an HTTP status, before its stream
// starts) is told the error first (ConnectRefusalWriter).

// UniDisconnectTransforms is Centrifugo's
// client.connect_code_to_unidirectional_disconnect (v6.9.1
// configtypes.UniConnectCodeToDisconnect): which disconnect a
// unidirectional client gets for a connect error code, before the
// built-in mapping.
type UniDisconnectTransforms struct {
	Enabled    bool                     `yaml:"enabled" doc:"close a unidirectional client whose connect is refused with the disconnect of 'transforms' for the error's code, instead of the built-in mapping (109 and 110 become 3005, 111 becomes 3008, 103 becomes 3501... other codes 3004)"`
	Transforms []UniDisconnectTransform `yaml:"transforms" doc:"a list of '{code: ERROR_CODE, to: {code: DISCONNECT_CODE, reason: TEXT}}'"`
}

// UniDisconnectTransform maps one connect error code to a disconnect.
type UniDisconnectTransform struct {
	Code uint32                `yaml:"code" doc:"the connect error code (e.g. 103, permission denied)"`
	To   DisconnectTransformTo `yaml:"to" doc:"the disconnect the client gets"`
}

// DisconnectTransformTo is a disconnect code and reason.
type DisconnectTransformTo struct {
	Code   uint32 `yaml:"code" doc:"the disconnect code (3000-4999)"`
	Reason string `yaml:"reason" doc:"the disconnect reason, ASCII, at most 123 bytes"`
}

// check adds the transforms' problems to ps, as Centrifugo's validation
// refuses them (internal/config/validate.go).
func (u UniDisconnectTransforms) check(prefix string, ps *optionProblems) {
	for i, t := range u.Transforms {
		field := fmt.Sprintf("ConnectCodeToUnidirectionalDisconnect.Transforms[%d]", i)
		switch {
		case t.Code == 0:
			ps.add(prefix, field+".Code", "want the connect error code to match")
		case t.To.Code == 0:
			ps.add(prefix, field+".To.Code", "want the disconnect code to send")
		case !isASCII(t.To.Reason) || len(t.To.Reason) > 123:
			ps.add(prefix, field+".To.Reason", "want ASCII text of at most 123 bytes (a WebSocket close reason)")
		}
	}
}

// ConnectRefusalWriter is a unidirectional Transport that answers a refused
// connect itself, such as an HTTP stream that has not sent its status yet
// and answers with an HTTP error instead. The hub calls ConnectRefused with
// the connect error's code and message (a disconnect's code and reason)
// before it closes the connection; a transport that answered sends nothing
// on the Close that follows.
type ConnectRefusalWriter interface {
	ConnectRefused(code uint32, message string)
}

// refuseUniConnect is what a unidirectional client gets for err, its
// refused connect: the transport is told (ConnectRefusalWriter), and the
// connection closes with the disconnect.
func (c *Client) refuseUniConnect(err error) *Disconnect {
	if w, ok := c.transport.(ConnectRefusalWriter); ok {
		code, msg := connectErrorCode(err)
		w.ConnectRefused(code, msg)
	}
	if t := c.hub.client.ConnectCodeToUnidirectionalDisconnect; t.Enabled {
		var e *Error
		if errors.As(err, &e) {
			for _, tr := range t.Transforms {
				if tr.Code == uint32(e.Code) {
					return &Disconnect{Code: tr.To.Code, Reason: tr.To.Reason}
				}
			}
		}
	}
	return uniConnectDisconnect(err)
}

// connectErrorCode is the code and message of a connect error: an error
// reply's, a disconnect's code and reason, or 100 (internal) for any
// other failure, as the client would have seen it.
func connectErrorCode(err error) (uint32, string) {
	var d *Disconnect
	if errors.As(err, &d) {
		return d.Code, d.Reason
	}
	var e *Error
	if errors.As(err, &e) {
		return uint32(e.Code), e.Message
	}
	internal := newError(protocol.ErrorInternal)
	return uint32(internal.Code), internal.Message
}
