package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"go.yaml.in/yaml/v3"
)

// DecodeCentrifugoTree parses a Centrifugo configuration file into nested
// maps, by extension as Centrifugo does (by content when there is none).
// The command line's genconfig and defaultconfig merge trees with it, so
// that only this package reads YAML.
func DecodeCentrifugoTree(data []byte, name string) (map[string]any, error) {
	return decodeCentrifugo(data, name)
}

// EncodeCentrifugoTree writes tree in the format name's extension says,
// one of the formats Centrifugo reads (json, toml, yaml, yml).
func EncodeCentrifugoTree(tree map[string]any, name string) ([]byte, error) {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".json":
		b, err := json.MarshalIndent(tree, "", "  ")
		return append(b, '\n'), err
	case ".toml":
		return toml.Marshal(tree)
	case ".yaml", ".yml":
		var b bytes.Buffer
		enc := yaml.NewEncoder(&b)
		enc.SetIndent(2)
		if err := enc.Encode(tree); err != nil {
			return nil, err
		}
		return b.Bytes(), enc.Close()
	}
	return nil, errors.New("output config file must have one of supported extensions: json, toml, yaml, yml")
}
