package hub

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Duration is a time.Duration that reads and writes as a Go duration
// string ("300s", "1h30m") in configuration files. A bare number is read as
// seconds, as Centrifugo's configuration does.
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

// UnmarshalJSON reads a duration string or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		return d.UnmarshalText([]byte(s))
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("invalid duration %s: want a string like \"25s\" or a number of seconds", b)
	}
	return d.UnmarshalText([]byte(n))
}

// UnmarshalYAML reads a duration string or a bare number of seconds. It
// has yaml.v3's function form, so the hub does not import a YAML package.
func (d *Duration) UnmarshalYAML(unmarshal func(any) error) error {
	var s string
	if err := unmarshal(&s); err != nil {
		return fmt.Errorf("invalid duration: want a string like \"25s\" or a number of seconds")
	}
	return d.UnmarshalText([]byte(s))
}
