package main

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/config"
)

// Centrifugo's gentoken, gensubtoken, checktoken and checksubtoken, with
// its flags and its output (herald token and herald token check are
// Herald's own, with other output).

// cfGenTokenCommand is gentoken, or with sub gensubtoken.
func cfGenTokenCommand(format string, sub bool) *cobra.Command {
	var (
		configPath, user, channel string
		ttl                       int64
		quiet                     bool
	)
	use, short := "gentoken", "Generate sample connection JWT for user"
	if sub {
		use, short = "gensubtoken", "Generate sample subscription JWT for user"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, _, err := cfLoad(cmd, configPath, format)
			if err != nil {
				return err
			}
			if sub && channel == "" {
				return errors.New("channel is required")
			}
			keys := cfg.Client.Token.TokenKeys
			if sub && cfg.Client.SubscriptionToken.Enabled {
				keys = cfg.Client.SubscriptionToken.TokenKeys
			}
			token, err := cfSignToken(keys, user, channel, ttl, time.Now(), sub)
			if err != nil {
				return fmt.Errorf("error: %w", err)
			}
			if quiet {
				fmt.Fprint(cmd.OutOrStdout(), token)
				return nil
			}
			who := fmt.Sprintf("user %q", user)
			if user == "" {
				who = "anonymous user"
			}
			if sub {
				who += fmt.Sprintf(" and channel %q", channel)
			}
			exp := "without expiration"
			if ttl >= 0 {
				exp = fmt.Sprintf("with expiration TTL %s", time.Duration(ttl)*time.Second)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "HMAC SHA-256 JWT for %s %s:\n%s\n", who, exp, token)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&configPath, "config", "c", "config.json", "path to config file")
	if sub {
		f.StringVarP(&user, "user", "u", "", "user ID")
		f.StringVarP(&channel, "channel", "s", "", "channel")
	} else {
		f.StringVarP(&user, "user", "u", "", "user ID, by default anonymous")
	}
	f.Int64VarP(&ttl, "ttl", "t", 3600*24*7, "token TTL in seconds, use -1 for token without expiration")
	f.BoolVarP(&quiet, "quiet", "q", false, "only output the token without anything else")
	return cmd
}

// cfSignToken signs the claims Centrifugo's gentoken and gensubtoken
// sign: sub, iat, exp unless ttl is not positive, channel for a
// subscription token, and the user again under user_id_claim when set.
func cfSignToken(keys config.TokenKeys, user, channel string, ttl int64, now time.Time, sub bool) (string, error) {
	if keys.HMACSecretKey == "" {
		where := "client.token.hmac_secret_key"
		if sub {
			where = "client.subscription_token.hmac_secret_key, or client.token.hmac_secret_key when subscription token is not separately configured"
		}
		return "", fmt.Errorf("%s only supports generating HMAC-signed tokens, but no HMAC secret key is set in the configuration (%s) – if you use RSA/ECDSA/JWKS token verification you need to generate the JWT with your own tooling",
			map[bool]string{false: "gentoken", true: "gensubtoken"}[sub], where)
	}
	claims := jwt.MapClaims{"iat": now.Unix()}
	if user != "" {
		claims["sub"] = user
	}
	if ttl > 0 {
		claims["exp"] = now.Add(time.Duration(ttl) * time.Second).Unix()
	}
	if sub {
		claims["channel"] = channel
	}
	if keys.UserIDClaim != "" {
		claims[keys.UserIDClaim] = user
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(keys.HMACSecretKey))
}

// cfCheckTokenCommand is checktoken, or with sub checksubtoken: the token
// verified as the server would verify it, printed as Centrifugo prints it.
func cfCheckTokenCommand(format string, sub bool) *cobra.Command {
	var configPath string
	use, short := "checktoken [TOKEN]", "Check connection JWT"
	if sub {
		use, short = "checksubtoken [TOKEN]", "Check subscription JWT"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, _, err := cfLoad(cmd, configPath, format)
			if err != nil {
				return err
			}
			if err := cfg.Validate(); err != nil {
				return fmt.Errorf("error validating config: %w", err)
			}
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
			pair, err := cfg.TokenVerifiers(log)
			if err != nil {
				return fmt.Errorf("error: %w", err)
			}
			if pair == nil {
				return errors.New("error: no token key configured (client.token)")
			}
			if len(args) != 1 {
				return fmt.Errorf("error: provide token to check [centrifugo %s <TOKEN>]", strings.Fields(use)[0])
			}
			token := strings.TrimSpace(args[0])
			payload, alg := tokenPayload(token)
			var user, channel string
			if sub {
				tok, verr := pair.VerifySubscribeToken(token)
				err, user, channel = verr, tok.User, tok.Channel
			} else {
				tok, verr := pair.VerifyConnectToken(token)
				err, user = verr, tok.User
			}
			if err != nil {
				return fmt.Errorf("error: token with algorithm %s and claims %s has error: %w", alg, payload, err)
			}
			who := "user " + user
			if sub {
				who = fmt.Sprintf("user %q", user)
			}
			if user == "" {
				who = "anonymous user"
			}
			if sub {
				fmt.Fprintf(cmd.OutOrStdout(), "valid subscription token for %s and channel %q\npayload: %s\n", who, channel, payload)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "valid token for %s\npayload: %s\n", who, payload)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&configPath, "config", "c", "config.json", "path to config file")
	return cmd
}

// tokenPayload returns the claims of a JWT as sent and the algorithm its
// header names, unverified, for the messages.
func tokenPayload(token string) (payload, alg string) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", ""
	}
	if b, err := base64.RawURLEncoding.DecodeString(parts[1]); err == nil {
		payload = string(b)
	}
	if b, err := base64.RawURLEncoding.DecodeString(parts[0]); err == nil {
		var h struct {
			Alg string `json:"alg"`
		}
		if json.Unmarshal(b, &h) == nil {
			alg = h.Alg
		}
	}
	return payload, alg
}
