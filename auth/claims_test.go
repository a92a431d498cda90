package auth_test

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/heraldhq/herald/auth"
)

func TestExpireAt(t *testing.T) {
	v := hmacVerifier(t)
	exp, later, past := inAnHour(), time.Now().Add(2*time.Hour).Unix(), hourAgo()
	cases := []struct {
		name   string
		claims jwt.MapClaims
		want   int64
	}{
		{"neither", jwt.MapClaims{}, 0},
		{"exp only", jwt.MapClaims{"exp": exp}, exp},
		{"expire_at only", jwt.MapClaims{"expire_at": later}, later},
		{"expire_at overrides exp", jwt.MapClaims{"exp": exp, "expire_at": later}, later},
		{"expire_at 0 means never", jwt.MapClaims{"exp": exp, "expire_at": 0}, 0},
		{"expire_at in the past is reported, not rejected", jwt.MapClaims{"expire_at": past}, past},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ct, err := v.VerifyConnectToken(hs256(t, tc.claims))
			if err != nil {
				t.Fatal(err)
			}
			if ct.ExpireAt != tc.want {
				t.Fatalf("connect ExpireAt = %d, want %d", ct.ExpireAt, tc.want)
			}
			tc.claims["channel"] = "c"
			st, err := v.VerifySubscribeToken(hs256(t, tc.claims))
			if err != nil {
				t.Fatal(err)
			}
			if st.ExpireAt != tc.want {
				t.Fatalf("subscribe ExpireAt = %d, want %d", st.ExpireAt, tc.want)
			}
		})
	}
	t.Run("expire_at 0 does not excuse an expired exp", func(t *testing.T) {
		_, err := v.VerifyConnectToken(hs256(t, jwt.MapClaims{"exp": hourAgo(), "expire_at": 0}))
		wantExpired(t, err)
	})
	t.Run("signer writes expire_at", func(t *testing.T) {
		tok, err := hmacSigner(t).ConnectToken(auth.ConnectClaims{ExpiresAt: time.Unix(exp, 0), ExpireAt: ptr(int64(0))})
		if err != nil {
			t.Fatal(err)
		}
		ct, err := v.VerifyConnectToken(tok)
		if err != nil {
			t.Fatal(err)
		}
		if ct.ExpireAt != 0 {
			t.Fatalf("ExpireAt = %d, want 0", ct.ExpireAt)
		}
	})
}

func TestInfoEncodings(t *testing.T) {
	v := hmacVerifier(t)
	b64 := base64.StdEncoding.EncodeToString([]byte{0, 1, 2, 0xff})
	cases := []struct {
		name   string
		claims jwt.MapClaims
		want   []byte
	}{
		{"absent", jwt.MapClaims{}, nil},
		{"info object kept raw", jwt.MapClaims{"info": json.RawMessage(`{"name":"Ann","n":[1,2]}`)}, []byte(`{"name":"Ann","n":[1,2]}`)},
		{"info string", jwt.MapClaims{"info": "x"}, []byte(`"x"`)},
		{"info null", jwt.MapClaims{"info": nil}, nil},
		{"b64info decoded", jwt.MapClaims{"b64info": b64}, []byte{0, 1, 2, 0xff}},
		{"b64info wins over info", jwt.MapClaims{"info": "x", "b64info": b64}, []byte{0, 1, 2, 0xff}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ct, err := v.VerifyConnectToken(hs256(t, tc.claims))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ct.Info, tc.want) {
				t.Fatalf("Info = %q, want %q", ct.Info, tc.want)
			}
			tc.claims["channel"] = "c"
			st, err := v.VerifySubscribeToken(hs256(t, tc.claims))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(st.Info, tc.want) {
				t.Fatalf("subscribe Info = %q, want %q", st.Info, tc.want)
			}
		})
	}
	t.Run("bad base64 is invalid", func(t *testing.T) {
		_, err := v.VerifyConnectToken(hs256(t, jwt.MapClaims{"b64info": "%%%"}))
		wantInvalid(t, err)
		_, err = v.VerifySubscribeToken(hs256(t, jwt.MapClaims{"channel": "c", "b64data": "%%%"}))
		wantInvalid(t, err)
		_, err = v.VerifyConnectToken(hs256(t, jwt.MapClaims{"subs": map[string]any{"c": map[string]any{"b64data": "%%%"}}}))
		wantInvalid(t, err)
	})
}

func TestConnectChannelsSubsMeta(t *testing.T) {
	v := hmacVerifier(t)
	tok := hs256(t, jwt.MapClaims{
		"sub":      "42",
		"channels": []string{"news", "chat:lobby"},
		"meta":     json.RawMessage(`{"plan":"pro"}`),
		"subs": map[string]any{
			"news": map[string]any{
				"info": json.RawMessage(`{"role":"reader"}`),
				"data": json.RawMessage(`{"welcome":true}`),
				"override": map[string]any{
					"presence":              map[string]any{"value": true},
					"join_leave":            map[string]any{"value": false},
					"force_push_join_leave": map[string]any{},
					"force_recovery":        map[string]any{"value": true},
				},
			},
			"bin": map[string]any{
				"b64info": base64.StdEncoding.EncodeToString([]byte("i")),
				"b64data": base64.StdEncoding.EncodeToString([]byte("d")),
			},
		},
	})
	ct, err := v.VerifyConnectToken(tok)
	if err != nil {
		t.Fatal(err)
	}
	want := auth.ConnectToken{
		User:     "42",
		Channels: []string{"news", "chat:lobby"},
		Meta:     []byte(`{"plan":"pro"}`),
		Subs: map[string]auth.SubOptions{
			"news": {
				Info: []byte(`{"role":"reader"}`),
				Data: []byte(`{"welcome":true}`),
				Override: &auth.SubOverride{
					Presence:           ptr(true),
					JoinLeave:          ptr(false),
					ForcePushJoinLeave: ptr(false), // {} is a BoolValue with the default false
					ForceRecovery:      ptr(true),
				},
			},
			"bin": {Info: []byte("i"), Data: []byte("d")},
		},
	}
	if !reflect.DeepEqual(ct, want) {
		t.Fatalf("got  %+v\nwant %+v", ct, want)
	}
}

func TestChannelClaimRules(t *testing.T) {
	v := hmacVerifier(t)
	t.Run("connection token with channel is invalid", func(t *testing.T) {
		_, err := v.VerifyConnectToken(hs256(t, jwt.MapClaims{"sub": "u", "channel": "news"}))
		wantInvalid(t, err)
	})
	t.Run("connection token with empty channel is accepted like Centrifugo", func(t *testing.T) {
		if _, err := v.VerifyConnectToken(hs256(t, jwt.MapClaims{"sub": "u", "channel": ""})); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("subscription token without channel is invalid", func(t *testing.T) {
		_, err := v.VerifySubscribeToken(hs256(t, jwt.MapClaims{"sub": "u"}))
		wantInvalid(t, err)
		_, err = v.VerifySubscribeToken(hs256(t, jwt.MapClaims{"sub": "u", "channel": ""}))
		wantInvalid(t, err)
	})
}

func TestSubscribeTokenClaims(t *testing.T) {
	v := hmacVerifier(t)
	tok := hs256(t, jwt.MapClaims{
		"sub":     "42",
		"channel": "$private",
		"client":  "c1",
		"info":    json.RawMessage(`{"a":1}`),
		"b64data": base64.StdEncoding.EncodeToString([]byte("bin")),
		"override": map[string]any{
			"force_positioning": map[string]any{"value": true},
		},
	})
	st, err := v.VerifySubscribeToken(tok)
	if err != nil {
		t.Fatal(err)
	}
	want := auth.SubscribeToken{
		User:     "42",
		Channel:  "$private",
		Client:   "c1",
		Info:     []byte(`{"a":1}`),
		Data:     []byte("bin"),
		Override: &auth.SubOverride{ForcePositioning: ptr(true)},
	}
	if !reflect.DeepEqual(st, want) {
		t.Fatalf("got  %+v\nwant %+v", st, want)
	}
}

func TestSignerRoundTrip(t *testing.T) {
	v := newVerifier(t, auth.Config{HMACSecretKey: testSecret, Audience: "herald", Issuer: "backend"})
	s := hmacSigner(t)
	exp := time.Now().Add(time.Hour).Truncate(time.Second)

	tok, err := s.ConnectToken(auth.ConnectClaims{
		User:      "7",
		ExpiresAt: exp,
		Info:      json.RawMessage(`{"n":"x"}`),
		Channels:  []string{"a"},
		Subs: map[string]auth.SubClaims{
			"a": {Info: json.RawMessage(`1`), Data: json.RawMessage(`2`), Override: &auth.SubOverride{Presence: ptr(false)}},
		},
		Meta:     json.RawMessage(`{"m":1}`),
		Audience: "herald",
		Issuer:   "backend",
	})
	if err != nil {
		t.Fatal(err)
	}
	ct, err := v.VerifyConnectToken(tok)
	if err != nil {
		t.Fatal(err)
	}
	wantCT := auth.ConnectToken{
		User:     "7",
		ExpireAt: exp.Unix(),
		Info:     []byte(`{"n":"x"}`),
		Channels: []string{"a"},
		Subs: map[string]auth.SubOptions{
			"a": {Info: []byte(`1`), Data: []byte(`2`), Override: &auth.SubOverride{Presence: ptr(false)}},
		},
		Meta: []byte(`{"m":1}`),
	}
	if !reflect.DeepEqual(ct, wantCT) {
		t.Fatalf("got  %+v\nwant %+v", ct, wantCT)
	}

	tok, err = s.SubscribeToken(auth.SubscribeClaims{
		User: "7", Channel: "a", Client: "cid", ExpiresAt: exp, ExpireAt: ptr(exp.Unix() + 10),
		Info: json.RawMessage(`"i"`), Data: json.RawMessage(`"d"`),
		Override: &auth.SubOverride{JoinLeave: ptr(true)},
		Audience: "herald", Issuer: "backend",
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := v.VerifySubscribeToken(tok)
	if err != nil {
		t.Fatal(err)
	}
	wantST := auth.SubscribeToken{
		User: "7", Channel: "a", Client: "cid", ExpireAt: exp.Unix() + 10,
		Info: []byte(`"i"`), Data: []byte(`"d"`), Override: &auth.SubOverride{JoinLeave: ptr(true)},
	}
	if !reflect.DeepEqual(st, wantST) {
		t.Fatalf("got  %+v\nwant %+v", st, wantST)
	}

	// A subscription token must not pass as a connection token.
	_, err = v.VerifyConnectToken(tok)
	wantInvalid(t, err)
}
