package config

import (
	_ "embed" // Centrifugo's default files
	"fmt"
	"path/filepath"
	"strings"
)

// Centrifugo 6.9.1's defaultconfig in its other formats, as it writes
// them (centrifugo-6.9.1/README.md): `centrifugo defaultconfig` on Herald
// prints these, byte for byte, so the full default configuration is
// Centrifugo's own and not a list Herald keeps.
var (
	//go:embed centrifugo-6.9.1/config.yaml
	centrifugoDefaultsYAML []byte
	//go:embed centrifugo-6.9.1/config.toml
	centrifugoDefaultsTOML []byte
)

// CentrifugoDefaultConfig is Centrifugo's complete default configuration
// in the format the extension of path names, as `centrifugo defaultconfig
// -c path` writes it: .json, .yaml or .yml, .toml. Centrifugo refuses any
// other extension with the message returned here.
func CentrifugoDefaultConfig(path string) ([]byte, error) {
	switch strings.TrimPrefix(filepath.Ext(path), ".") {
	case "json":
		return centrifugoDefaultsJSON, nil
	case "yaml", "yml":
		return centrifugoDefaultsYAML, nil
	case "toml":
		return centrifugoDefaultsTOML, nil
	}
	return nil, fmt.Errorf("output config file must have one of supported extensions: json, toml, yaml, yml")
}

// CentrifugoDefaultConfigTree is Centrifugo's complete default
// configuration as a tree of the import's shape, for a tool that sets keys
// over it before writing it out (defaultconfig -b).
func CentrifugoDefaultConfigTree() map[string]any { return centrifugoDefaults() }

// CentrifugoDefaultEnv is the output of Centrifugo's defaultenv, one
// NAME=VALUE line per variable, sorted by name: every variable Centrifugo
// reads, at its default.
func CentrifugoDefaultEnv() string { return centrifugoEnvTxt }
