package auth_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/heraldhq/herald/auth"
)

// TestCapsMatch: each match kind, and a channel's capabilities being the
// union of the objects that match it, whatever their order.
func TestCapsMatch(t *testing.T) {
	t.Parallel()
	caps, err := auth.CompileCaps([]auth.ChannelCaps{
		{Channels: []string{"news:*"}, Match: auth.MatchWildcard, Allow: []string{"sub"}},
		{Channels: []string{"news:sports"}, Allow: []string{"pub", "hst"}},
		{Channels: []string{"a/*/c", "x/**"}, Match: auth.MatchDoublestar, Allow: []string{"prs"}},
		{Channels: []string{`^posts_\d+$`}, Match: auth.MatchRegex, Allow: []string{"sub", "hst"}},
		{Channels: []string{"p.?"}, Match: auth.MatchWildcard, Allow: []string{"pub"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ch   string
		want auth.Ops
	}{
		{"news:sports", auth.OpSubscribe | auth.OpPublish | auth.OpHistory},
		{"news:", auth.OpSubscribe},
		{"news:a/b", auth.OpSubscribe}, // a wildcard's '*' crosses '/'
		{"news", 0},
		{"xnews:a", 0},
		{"a/b/c", auth.OpPresence},
		{"a/b/d/c", 0}, // a doublestar's '*' does not cross '/'
		{"x/y/z", auth.OpPresence},
		{"posts_12", auth.OpSubscribe | auth.OpHistory},
		{"posts_x", 0},
		{"p.é", auth.OpPublish}, // '?' is one character, '.' literal
		{"pxé", 0},
		{"p.éé", 0},
	} {
		var got auth.Ops
		for _, op := range []auth.Ops{auth.OpSubscribe, auth.OpPublish, auth.OpHistory, auth.OpPresence} {
			if caps.Allows(op, tc.ch) {
				got |= op
			}
		}
		if got != tc.want {
			t.Errorf("%q: %v, want %v", tc.ch, got.Names(), tc.want.Names())
		}
	}
	var none *auth.Caps
	if none.Allows(auth.OpSubscribe, "news:sports") {
		t.Fatal("nil caps grant")
	}
}

// TestCapsInvalid: what a caps list cannot carry is refused naming where.
func TestCapsInvalid(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", auth.MaxCapEntrySize+1)
	many := make([]string, auth.MaxCapChannels+1)
	for i := range many {
		many[i] = "c"
	}
	for _, tc := range []struct {
		caps []auth.ChannelCaps
		want string
	}{
		{[]auth.ChannelCaps{{Channels: []string{"a"}, Allow: []string{"sub"}, Match: "prefix"}}, `caps[0].channels[0]: unknown match "prefix"`},
		{[]auth.ChannelCaps{{Channels: []string{"a"}, Allow: nil}}, `caps[0].allow: empty`},
		{[]auth.ChannelCaps{{Channels: []string{"a"}, Allow: []string{"read"}}}, `caps[0].allow[0]: unknown capability "read"`},
		{[]auth.ChannelCaps{{Channels: []string{""}, Allow: []string{"sub"}}}, `caps[0].channels[0]: empty channel`},
		{[]auth.ChannelCaps{{Channels: []string{long}, Allow: []string{"sub"}}}, `caps[0].channels[0]: 1025 bytes`},
		{[]auth.ChannelCaps{{Channels: many, Allow: []string{"sub"}}}, `more than 256 channel entries`},
		{[]auth.ChannelCaps{{Channels: []string{"[a"}, Allow: []string{"sub"}, Match: auth.MatchRegex}}, `caps[0].channels[0]: error parsing regexp`},
	} {
		_, err := auth.CompileCaps(tc.caps)
		if !errors.Is(err, auth.ErrInvalidCaps) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want ErrInvalidCaps naming %q", tc.caps, err, tc.want)
		}
	}
}

// TestCapsClaims: the caps and allow claims come through the verifier
// (and the signer writes them).
func TestCapsClaims(t *testing.T) {
	t.Parallel()
	s, err := auth.NewHMACSigner("k", "HS256")
	if err != nil {
		t.Fatal(err)
	}
	v, err := auth.NewVerifier(auth.Config{HMACSecretKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.ConnectToken(auth.ConnectClaims{User: "u", Caps: []auth.ChannelCaps{{Channels: []string{"c"}, Allow: []string{"pub"}}}})
	if err != nil {
		t.Fatal(err)
	}
	ct, err := v.VerifyConnectToken(tok)
	if err != nil || !ct.Caps.Allows(auth.OpPublish, "c") || ct.Caps.Allows(auth.OpSubscribe, "c") {
		t.Fatalf("connect token caps: %+v, %v", ct.Caps, err)
	}
	tok, err = s.SubscribeToken(auth.SubscribeClaims{User: "u", Channel: "c", Allow: []string{"hst", "prs"}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := v.VerifySubscribeToken(tok)
	if err != nil || st.Allow != auth.OpHistory|auth.OpPresence {
		t.Fatalf("subscription token allow: %v, %v", st.Allow, err)
	}
	bad, err := s.SubscribeToken(auth.SubscribeClaims{User: "u", Channel: "c", Allow: []string{"sub", "admin"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.VerifySubscribeToken(bad); !errors.Is(err, auth.ErrInvalidToken) || !errors.Is(err, auth.ErrInvalidCaps) {
		t.Fatalf("bad allow: %v, want ErrInvalidToken and ErrInvalidCaps", err)
	}
}
