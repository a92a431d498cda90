package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/auth"
)

// tokenCheckCommands are `herald token check` and Centrifugo's names for
// it, `herald checktoken` and `herald checksubtoken`. All verify with the
// verifier the server builds from the same configuration (keys, JWKS,
// previous keys, aud and iss checks, user_id_claim), print the claims of
// a valid token and otherwise fail with the verifier's exact reason.
func tokenCheckCommands() (check, checkToken, checkSubToken *cobra.Command) {
	newCmd := func(use, short string, sub *bool, fixedSub bool) *cobra.Command {
		var configPath string
		cmd := &cobra.Command{
			Use:   use,
			Short: short,
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				isSub := fixedSub || (sub != nil && *sub)
				return runTokenCheck(cmd, configPath, args[0], isSub)
			},
		}
		cmd.Flags().StringVarP(&configPath, "config", "c", "", "configuration file (as for herald serve; HERALD_* variables apply)")
		return cmd
	}
	var sub bool
	check = newCmd("check TOKEN", "Verify a connection token (or, with --sub, a subscription token) as the server would, and print its claims", &sub, false)
	check.Flags().BoolVar(&sub, "sub", false, "the token is a subscription token (client.subscription_token's keys when enabled)")
	checkToken = newCmd("checktoken TOKEN", "Verify a connection token as the server would (Centrifugo's checktoken)", nil, false)
	checkSubToken = newCmd("checksubtoken TOKEN", "Verify a subscription token as the server would (Centrifugo's checksubtoken)", nil, true)
	return check, checkToken, checkSubToken
}

func runTokenCheck(cmd *cobra.Command, configPath, token string, sub bool) error {
	if token == "-" {
		b, err := io.ReadAll(io.LimitReader(cmd.InOrStdin(), 1<<20))
		if err != nil {
			return err
		}
		token = string(b)
	}
	token = strings.TrimSpace(token)
	cfg, err := loadConfig(configPath)
	if err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	// JWKS warnings (the provider down) go to stderr; the claims to stdout.
	log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	pair, err := cfg.TokenVerifiers(log)
	if err != nil {
		return err
	}
	if pair == nil {
		return errors.New("no token key configured: set client.token (hmac_secret_key, rsa_public_key, ecdsa_public_key or jwks_public_endpoint)")
	}
	var out any
	if sub {
		tok, err := pair.VerifySubscribeToken(token)
		if err != nil {
			return fmt.Errorf("subscription token: %w", err)
		}
		out = subscribeTokenJSON{
			User: tok.User, Channel: tok.Channel, Client: tok.Client, ExpireAt: expireAt(tok.ExpireAt),
			Info: rawJSON(tok.Info), Data: rawJSON(tok.Data), Override: tok.Override, Allow: tok.Allow.Names(),
		}
	} else {
		tok, err := pair.VerifyConnectToken(token)
		if err != nil {
			return fmt.Errorf("connection token: %w", err)
		}
		out = connectTokenJSON{
			User: tok.User, ExpireAt: expireAt(tok.ExpireAt), Info: rawJSON(tok.Info),
			Channels: tok.Channels, Subs: tok.Subs, Meta: rawJSON(tok.Meta), Caps: tok.Caps.List(),
		}
	}
	enc := json.NewEncoder(cmd.OutOrStdout())
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

type connectTokenJSON struct {
	User     string                     `json:"user"`
	ExpireAt string                     `json:"expire_at"`
	Info     any                        `json:"info,omitempty"`
	Channels []string                   `json:"channels,omitempty"`
	Subs     map[string]auth.SubOptions `json:"subs,omitempty"`
	Meta     any                        `json:"meta,omitempty"`
	Caps     []auth.ChannelCaps         `json:"caps,omitempty"`
}

type subscribeTokenJSON struct {
	User     string            `json:"user"`
	Channel  string            `json:"channel"`
	Client   string            `json:"client,omitempty"`
	ExpireAt string            `json:"expire_at"`
	Info     any               `json:"info,omitempty"`
	Data     any               `json:"data,omitempty"`
	Override *auth.SubOverride `json:"override,omitempty"`
	Allow    []string          `json:"allow,omitempty"`
}

// expireAt shows when the connection or subscription expires.
func expireAt(unix int64) string {
	if unix == 0 {
		return "never"
	}
	return time.Unix(unix, 0).UTC().Format(time.RFC3339)
}

// rawJSON shows a JSON payload as JSON, and a binary one (b64info) as
// the base64 string encoding/json makes of bytes.
func rawJSON(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	if json.Valid(b) {
		return json.RawMessage(b)
	}
	return b
}
