package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/config"
)

// tokenCommand mints connection and subscription tokens with the HMAC
// secret of the configuration, for development and scripts.
func tokenCommand() *cobra.Command {
	var (
		configPath, secret, user, channel, info string
		ttl                                     time.Duration
	)
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Mint a connection token (or, with --channel, a subscription token)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			key := "client.token.hmac_secret_key"
			if secret == "" && configPath != "" {
				cfg, err := config.Load(configPath)
				if err != nil {
					return err
				}
				secret = cfg.Client.Token.HMACSecretKey
				if channel != "" && cfg.Client.SubscriptionToken.Enabled {
					// The server checks subscription tokens with these keys only.
					secret, key = cfg.Client.SubscriptionToken.HMACSecretKey, "client.subscription_token.hmac_secret_key"
				}
			}
			if secret == "" {
				return fmt.Errorf("no HMAC secret: pass --secret or --config with %s", key)
			}
			if info != "" && !json.Valid([]byte(info)) {
				return fmt.Errorf("--info %q: not valid JSON", info)
			}
			s, err := auth.NewHMACSigner(secret, "HS256")
			if err != nil {
				return err
			}
			var exp time.Time
			if ttl > 0 {
				exp = time.Now().Add(ttl)
			}
			var tok string
			if channel != "" {
				tok, err = s.SubscribeToken(auth.SubscribeClaims{User: user, Channel: channel, ExpiresAt: exp, Info: json.RawMessage(info)})
			} else {
				tok, err = s.ConnectToken(auth.ConnectClaims{User: user, ExpiresAt: exp, Info: json.RawMessage(info)})
			}
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), tok)
			return nil
		},
	}
	check, _, _ := tokenCheckCommands()
	cmd.AddCommand(check)
	f := cmd.Flags()
	f.StringVarP(&configPath, "config", "c", "", "configuration file holding client.token.hmac_secret_key")
	f.StringVar(&secret, "secret", "", "HMAC secret (instead of --config)")
	f.StringVar(&user, "user", "", "user id (the sub claim); empty for anonymous")
	f.StringVar(&channel, "channel", "", "mint a subscription token for this channel")
	f.StringVar(&info, "info", "", "JSON info attached to the connection or subscription")
	f.DurationVar(&ttl, "ttl", time.Hour, "token lifetime; 0 for no expiry")
	return cmd
}
