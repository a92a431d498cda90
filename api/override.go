package api

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/heraldhq/herald/auth"
)

// overrideJSON is subscribe's override, Centrifugo's
// SubscribeOptionOverride: each option a {"value": bool} object, absent
// to keep the namespace's.
type overrideJSON struct {
	Presence           *boolValue `json:"presence,omitempty"`
	JoinLeave          *boolValue `json:"join_leave,omitempty"`
	ForceRecovery      *boolValue `json:"force_recovery,omitempty"`
	ForcePositioning   *boolValue `json:"force_positioning,omitempty"`
	ForcePushJoinLeave *boolValue `json:"force_push_join_leave,omitempty"`
}

type boolValue struct {
	Value bool `json:"value"`
}

func (b *boolValue) ptr() *bool {
	if b == nil {
		return nil
	}
	v := b.Value
	return &v
}

// parseOverride reads subscribe's override; nil when absent. An unknown
// option is refused, naming it, rather than silently left out.
func parseOverride(raw json.RawMessage) (*auth.SubOverride, *Error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var o overrideJSON
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		if e := decodeError(err); e != nil {
			return nil, badRequest("override.%s", strings.TrimPrefix(e.Message, "override."))
		}
		return nil, badRequest("override: %v (want presence, join_leave, force_recovery, force_positioning or force_push_join_leave, each {\"value\": true or false})", err)
	}
	return &auth.SubOverride{
		Presence: o.Presence.ptr(), JoinLeave: o.JoinLeave.ptr(), ForceRecovery: o.ForceRecovery.ptr(),
		ForcePositioning: o.ForcePositioning.ptr(), ForcePushJoinLeave: o.ForcePushJoinLeave.ptr(),
	}, nil
}
