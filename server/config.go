package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"go.yaml.in/yaml/v3"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/hub"
)

// Config is the whole configuration of `herald serve`. Its file format is
// YAML; docs/configuration.md lists every key.
type Config struct {
	// Address is where the HTTP server listens: WebSocket connections and
	// (later) the server API.
	Address string `yaml:"address"`
	// Name names this node; default the host name.
	Name string `yaml:"name"`
	Log  LogConfig `yaml:"log"`
	// Client holds connection settings and the token keys.
	Client    ClientConfig      `yaml:"client"`
	Channel   hub.ChannelConfig `yaml:"channel"`
	WebSocket WebSocketConfig   `yaml:"websocket"`
	Engine    EngineConfig      `yaml:"engine"`
}

// LogConfig selects the log format and level.
type LogConfig struct {
	// Level is debug, info, warn or error.
	Level string `yaml:"level"`
	// Format is text or json.
	Format string `yaml:"format"`
}

// ClientConfig is hub.ClientConfig plus the token keys.
type ClientConfig struct {
	hub.ClientConfig `yaml:",inline"`
	Token            TokenConfig `yaml:"token"`
}

// TokenConfig holds the keys that connection and subscription JWTs are
// checked with.
type TokenConfig struct {
	HMACSecretKey  string `yaml:"hmac_secret_key"`
	RSAPublicKey   string `yaml:"rsa_public_key"`
	ECDSAPublicKey string `yaml:"ecdsa_public_key"`
	Audience       string `yaml:"audience"`
	Issuer         string `yaml:"issuer"`
}

func (t TokenConfig) auth() auth.Config {
	return auth.Config{
		HMACSecretKey: t.HMACSecretKey, RSAPublicKey: t.RSAPublicKey, ECDSAPublicKey: t.ECDSAPublicKey,
		Audience: t.Audience, Issuer: t.Issuer,
	}
}

func (t TokenConfig) configured() bool {
	return t.HMACSecretKey != "" || t.RSAPublicKey != "" || t.ECDSAPublicKey != ""
}

// WebSocketConfig tunes the WebSocket transport.
type WebSocketConfig struct {
	// MessageSizeLimit bounds an incoming message, in bytes (65536).
	MessageSizeLimit int64 `yaml:"message_size_limit"`
	// WriteTimeout bounds one write to a client (1s).
	WriteTimeout hub.Duration `yaml:"write_timeout"`
	// ReadTimeout bounds how long a started message may take to arrive (10s).
	ReadTimeout hub.Duration `yaml:"read_timeout"`
	// AllowedOrigins lists the browser origins allowed to connect; empty
	// means same-origin only, "*" any.
	AllowedOrigins []string `yaml:"allowed_origins"`
}

// EngineConfig selects the engine.
type EngineConfig struct {
	// Type is "memory" (one node). Other engines come with their issues.
	Type string `yaml:"type"`
}

// DefaultConfig is the configuration `herald serve` runs with when given
// no file.
func DefaultConfig() Config {
	return Config{
		Address: ":8000",
		Log:     LogConfig{Level: "info", Format: "text"},
		Engine:  EngineConfig{Type: "memory"},
	}
}

// LoadConfig reads a YAML configuration file over the defaults. Unknown
// keys are errors, so a misspelt option is never silently ignored.
func LoadConfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("read config: %w", err)
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// ParseConfig reads YAML configuration over the defaults.
func ParseConfig(data []byte) (Config, error) {
	cfg := DefaultConfig()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return Config{}, err
	}
	return cfg, cfg.Validate()
}

// Validate checks what the types alone cannot.
func (c Config) Validate() error {
	switch c.Engine.Type {
	case "", "memory":
	default:
		return fmt.Errorf("engine.type %q: unknown engine (available: memory)", c.Engine.Type)
	}
	switch c.Log.Level {
	case "", "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("log.level %q: want debug, info, warn or error", c.Log.Level)
	}
	switch c.Log.Format {
	case "", "text", "json":
	default:
		return fmt.Errorf("log.format %q: want text or json", c.Log.Format)
	}
	if c.WebSocket.MessageSizeLimit < 0 {
		return fmt.Errorf("websocket.message_size_limit %d: must not be negative", c.WebSocket.MessageSizeLimit)
	}
	if c.Client.ChannelLimit < 0 {
		return fmt.Errorf("client.channel_limit %d: must not be negative", c.Client.ChannelLimit)
	}
	return nil
}
