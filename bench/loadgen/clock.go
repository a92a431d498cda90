package loadgen

import "time"

// Clock reads wall-clock time in nanoseconds as advanced by the monotonic
// clock: the wall time is read once, when the Clock is made, and every
// later reading adds the monotonic time elapsed since. A wall-clock step
// (NTP) after that moment therefore never shows up as latency.
//
// Publishers put Clock readings in payloads and subscribers in other
// processes of the same machine subtract them from their own Clock: both
// anchors come from the same system clock, so they agree unless that clock
// was stepped between the two processes' starts.
type Clock struct {
	anchor time.Time // carries the monotonic reading
	wall   int64     // anchor's wall time in Unix nanoseconds
}

// NewClock anchors a Clock at the current time.
func NewClock() Clock {
	now := time.Now()
	return Clock{anchor: now, wall: now.UnixNano()}
}

// Now returns the current time in Unix nanoseconds.
func (c Clock) Now() int64 { return c.wall + int64(time.Since(c.anchor)) }

// Time converts a reading back to a time.Time that carries a monotonic
// reading, for timers and deadlines.
func (c Clock) Time(ns int64) time.Time { return c.anchor.Add(time.Duration(ns - c.wall)) }
