package auth

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/golang-jwt/jwt/v5"
)

// connectClaims is the JSON form of a connection token, shared by the
// verifier and the signer so both agree on claim names.
type connectClaims struct {
	registeredClaims
	ExpireAt *int64              `json:"expire_at,omitempty"`
	Info     json.RawMessage     `json:"info,omitempty"`
	B64Info  string              `json:"b64info,omitempty"`
	Channels []string            `json:"channels,omitempty"`
	Subs     map[string]subClaim `json:"subs,omitempty"`
	Meta     json.RawMessage     `json:"meta,omitempty"`
	Caps     []ChannelCaps       `json:"caps,omitempty"`
	// Channel is decoded only to reject connection tokens that carry it.
	Channel string `json:"channel,omitempty"`
}

// subscribeClaims is the JSON form of a subscription token.
type subscribeClaims struct {
	registeredClaims
	subClaim
	Channel  string `json:"channel,omitempty"`
	Client   string `json:"client,omitempty"`
	ExpireAt *int64 `json:"expire_at,omitempty"`
	// Allow is the subscription's capabilities (caps.go).
	Allow []string `json:"allow,omitempty"`
}

// subClaim is one entry of the subs claim, and the option part of a
// subscription token.
type subClaim struct {
	Info     json.RawMessage `json:"info,omitempty"`
	B64Info  string          `json:"b64info,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`
	B64Data  string          `json:"b64data,omitempty"`
	Override *overrideClaim  `json:"override,omitempty"`
}

// boolValue mirrors protobuf's BoolValue wrapper, which Centrifugo uses so
// that "absent" and "false" differ.
type boolValue struct {
	Value bool `json:"value"`
}

type overrideClaim struct {
	Presence           *boolValue `json:"presence,omitempty"`
	JoinLeave          *boolValue `json:"join_leave,omitempty"`
	ForcePushJoinLeave *boolValue `json:"force_push_join_leave,omitempty"`
	ForceRecovery      *boolValue `json:"force_recovery,omitempty"`
	ForcePositioning   *boolValue `json:"force_positioning,omitempty"`
}

// GetExpirationTime hides exp from golang-jwt's validator: the Verifier checks
// exp itself, after everything else, so that ErrTokenExpired is only ever
// reported for tokens that are otherwise valid.
func (c *connectClaims) GetExpirationTime() (*jwt.NumericDate, error) { return nil, nil }

// GetExpirationTime hides exp from golang-jwt's validator; see connectClaims.
func (c *subscribeClaims) GetExpirationTime() (*jwt.NumericDate, error) { return nil, nil }

// expireAt applies the protocol rule: expire_at wins when present (0 means
// never), otherwise the connection or subscription ends at exp.
func expireAt(explicit *int64, exp *jwt.NumericDate) int64 {
	if explicit != nil {
		return max(*explicit, 0)
	}
	if exp != nil {
		return exp.Unix()
	}
	return 0
}

// payload picks the base64 variant when set, as Centrifugo does, else the raw
// JSON (with an explicit null treated as absent).
func payload(raw json.RawMessage, b64 string, name string) ([]byte, error) {
	if b64 != "" {
		b, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, fmt.Errorf("b64%s claim: %w", name, err)
		}
		return b, nil
	}
	if string(raw) == "null" {
		return nil, nil
	}
	return raw, nil
}

func (s *subClaim) options() (SubOptions, error) {
	info, err := payload(s.Info, s.B64Info, "info")
	if err != nil {
		return SubOptions{}, err
	}
	data, err := payload(s.Data, s.B64Data, "data")
	if err != nil {
		return SubOptions{}, err
	}
	return SubOptions{Info: info, Data: data, Override: s.Override.decode()}, nil
}

func (o *overrideClaim) decode() *SubOverride {
	if o == nil {
		return nil
	}
	return &SubOverride{
		Presence:           o.Presence.decode(),
		JoinLeave:          o.JoinLeave.decode(),
		ForcePushJoinLeave: o.ForcePushJoinLeave.decode(),
		ForceRecovery:      o.ForceRecovery.decode(),
		ForcePositioning:   o.ForcePositioning.decode(),
	}
}

func (b *boolValue) decode() *bool {
	if b == nil {
		return nil
	}
	v := b.Value
	return &v
}

func encodeOverride(o *SubOverride) *overrideClaim {
	if o == nil {
		return nil
	}
	return &overrideClaim{
		Presence:           encodeBool(o.Presence),
		JoinLeave:          encodeBool(o.JoinLeave),
		ForcePushJoinLeave: encodeBool(o.ForcePushJoinLeave),
		ForceRecovery:      encodeBool(o.ForceRecovery),
		ForcePositioning:   encodeBool(o.ForcePositioning),
	}
}

func encodeBool(b *bool) *boolValue {
	if b == nil {
		return nil
	}
	return &boolValue{Value: *b}
}

// token converts verified claims; errors are bare causes that the Verifier
// wraps in ErrInvalidToken.
func (c *connectClaims) token() (ConnectToken, error) {
	if c.Channel != "" {
		return ConnectToken{}, fmt.Errorf("connection token must not contain a channel claim (got %q)", c.Channel)
	}
	info, err := payload(c.Info, c.B64Info, "info")
	if err != nil {
		return ConnectToken{}, err
	}
	var subs map[string]SubOptions
	if len(c.Subs) > 0 {
		subs = make(map[string]SubOptions, len(c.Subs))
		for ch, sc := range c.Subs {
			opts, err := sc.options()
			if err != nil {
				return ConnectToken{}, fmt.Errorf("subs %q: %w", ch, err)
			}
			subs[ch] = opts
		}
	}
	meta, _ := payload(c.Meta, "", "meta")
	caps, err := CompileCaps(c.Caps)
	if err != nil {
		return ConnectToken{}, err
	}
	return ConnectToken{
		Caps:     caps,
		User:     c.Subject,
		ExpireAt: expireAt(c.ExpireAt, c.ExpiresAt.jwt()),
		Info:     info,
		Channels: c.Channels,
		Subs:     subs,
		Meta:     meta,
	}, nil
}

func (c *subscribeClaims) token() (SubscribeToken, error) {
	if c.Channel == "" {
		return SubscribeToken{}, errors.New("subscription token requires a channel claim")
	}
	opts, err := c.options()
	if err != nil {
		return SubscribeToken{}, err
	}
	allow, err := ParseOps(c.Allow)
	if err != nil {
		return SubscribeToken{}, err
	}
	return SubscribeToken{
		Allow:    allow,
		User:     c.Subject,
		Channel:  c.Channel,
		Client:   c.Client,
		ExpireAt: expireAt(c.ExpireAt, c.ExpiresAt.jwt()),
		Info:     opts.Info,
		Data:     opts.Data,
		Override: opts.Override,
	}, nil
}
