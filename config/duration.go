package config

import (
	"fmt"
	"strconv"
	"time"
)

// parseDuration reads a duration of the configuration file: a Go duration
// string ("300s", "1h30m") or a bare number of seconds, as Centrifugo's
// configuration reads it. Negative durations are refused: no setting has
// a meaning for them.
func parseDuration(s string) (time.Duration, error) {
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		if secs < 0 {
			return 0, fmt.Errorf("invalid duration %q: must not be negative", s)
		}
		return time.Duration(secs * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q: use a number and a unit, like \"300ms\", \"25s\" or \"1h\"", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("invalid duration %q: must not be negative", s)
	}
	return d, nil
}
