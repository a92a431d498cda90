package config

import (
	"fmt"
	"strings"
)

// CentrifugoReport is what reading a Centrifugo configuration found beside
// the configuration it means: the keys and variables Centrifugo does not
// have, which it warns about and starts (so does Herald; strict checking
// refuses them), and the keys that tune something Herald does without a
// setting, set to other than Centrifugo's default, which the start-up log
// names once.
type CentrifugoReport struct {
	Unknown   Problems // unknown keys and CENTRIFUGO_ variables, each with why (and a likely meant key)
	NotNeeded []string // keys (as the file has them) Herald has no use for, set to other than Centrifugo's default
}

// CentrifugoReport returns what reading the configuration as Centrifugo's
// found (empty for a Herald file).
func (c Config) CentrifugoReport() CentrifugoReport { return c.centrifugo }

// Strict refuses what a strict check refuses beyond Validate: the unknown
// keys and variables of a Centrifugo configuration.
func (c Config) Strict() error {
	if len(c.centrifugo.Unknown) == 0 {
		return nil
	}
	return c.centrifugo.Unknown
}

// NotNeededLine is the one start-up log line naming the keys Herald has
// no use for, or "" when there are none.
func (r CentrifugoReport) NotNeededLine() string {
	if len(r.NotNeeded) == 0 {
		return ""
	}
	return fmt.Sprintf("Centrifugo options not needed by Herald, taken and not used: %s (docs/migrating-from-centrifugo.md says why each is not needed)",
		strings.Join(r.NotNeeded, ", "))
}

// warnings are the report's lines among Config.Warnings.
func (r CentrifugoReport) warnings() []string {
	w := make([]string, 0, len(r.Unknown))
	for _, p := range r.Unknown {
		w = append(w, p.String())
	}
	return w
}
