package server

import (
	"fmt"
	"strconv"
	"time"
)

// Duration is a time.Duration in the configuration file, written as a Go
// duration string ("300s", "1h30m"). A bare number is read as seconds, as
// Centrifugo's configuration does. Negative durations are refused: no
// setting has a meaning for them.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) String() string { return time.Duration(d).String() }

// MarshalText writes d as a duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads a duration string, or a bare number of seconds.
func (d *Duration) UnmarshalText(b []byte) error {
	if secs, err := strconv.ParseFloat(string(b), 64); err == nil {
		if secs < 0 {
			return fmt.Errorf("invalid duration %q: must not be negative", b)
		}
		*d = Duration(secs * float64(time.Second))
		return nil
	}
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("invalid duration %q: use a number and a unit, like \"300ms\", \"25s\" or \"1h\"", b)
	}
	if v < 0 {
		return fmt.Errorf("invalid duration %q: must not be negative", b)
	}
	*d = Duration(v)
	return nil
}

// UnmarshalYAML reads a duration string or a bare number of seconds. Its
// own error for a list or mapping says what a duration looks like, where
// YAML's would only say it cannot unmarshal a map.
func (d *Duration) UnmarshalYAML(unmarshal func(any) error) error {
	var s string
	if err := unmarshal(&s); err != nil {
		return fmt.Errorf("invalid duration: want a string like \"25s\" or a number of seconds")
	}
	return d.UnmarshalText([]byte(s))
}
