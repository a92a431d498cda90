package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// The floor's round intervals. bench/floor goes round by round (interval
// "0"), or, with -round-interval, coalesces at a fixed interval
// (sidebyside.sh's FLOOR_INTERVALS: a point per interval, condition and
// run). Round by round it is no bound at the middle rates, where its p99
// climbs to tens of milliseconds while one that coalesces at 2 ms stays at
// a few (docs/benchmarks.md, "A floor that coalesces"); so the floor's
// columns, its line in the chart and the † marks take, per condition and
// rate, the interval whose median is best.

// interval is a floor point's round interval: "0" round by round, also
// for runs from before the intervals.
func (p point) interval() string {
	if p.FloorRoundInterval == "" {
		return "0"
	}
	return p.FloorRoundInterval
}

// floorIntervals are the round intervals of the floor's points, shortest
// first.
func floorIntervals(points []point) []string {
	seen := map[string]time.Duration{}
	for _, p := range points {
		if p.Server == floorServer {
			d, _ := time.ParseDuration(p.interval())
			seen[p.interval()] = d
		}
	}
	out := make([]string, 0, len(seen))
	for iv := range seen {
		out = append(out, iv)
	}
	sort.Slice(out, func(i, j int) bool {
		if seen[out[i]] != seen[out[j]] {
			return seen[out[i]] < seen[out[j]]
		}
		return out[i] < out[j]
	})
	return out
}

// floorFigure is the floor's best figure in a condition: the median over
// the runs of the interval that did best, how many of its runs reached
// the rate, and how many it has.
type floorFigure struct {
	v             float64
	interval      string
	reached, runs int
}

// floorOne is the engine label of the one-process floor's points (no
// engine); two floors relaying through Redis are labelled "redis".
const floorOne = "none"

// floorEngine is a floor point's engine label.
func (p point) floorEngine() string {
	if p.Engine == "" {
		return floorOne
	}
	return p.Engine
}

// floorOf is the floor column that column c's figures are held against:
// the floor of c's engine in c's condition when the run measured one (two
// floors relaying through Redis, for the Redis columns), else the
// one-process floor of c's condition. A floor column is its own.
func floorOf(points []point, c column) column {
	if c.floor || hasFloor(points, c.engine, c.condition) {
		return column{engine: c.engine, condition: c.condition, floor: true}
	}
	return column{engine: floorOne, condition: c.condition, floor: true}
}

// hasFloor reports whether the run has floor points of engine (floorOne
// or "redis") in condition.
func hasFloor(points []point, engine, condition string) bool {
	return slices.ContainsFunc(points, func(p point) bool {
		return p.Server == floorServer && p.floorEngine() == engine && p.Condition == condition
	})
}

// bestFloorP99 is the lowest median first-copy p99 at rate r over the
// intervals of floor column fc (false: no interval reached r).
func bestFloorP99(points []point, fc column, r float64) (floorFigure, bool) {
	var best floorFigure
	found := false
	for _, iv := range floorIntervals(points) {
		fc.interval = iv
		vs, n := p99s(points, fc, floorServer, r)
		if len(vs) == 0 {
			continue
		}
		if m := median(vs); !found || m < best.v {
			best, found = floorFigure{v: m, interval: iv, reached: len(vs), runs: n}, true
		}
	}
	return best, found
}

// bestFloorServed is the highest median of the highest rate served over
// the intervals of floor column fc (false: no floor point there).
func bestFloorServed(points []point, fc column) (floorFigure, bool) {
	var best floorFigure
	found := false
	for _, iv := range floorIntervals(points) {
		fc.interval = iv
		v, ok := servedMedian(points, fc, floorServer)
		if !ok {
			continue
		}
		if !found || v > best.v {
			best, found = floorFigure{v: v, interval: iv}, true
		}
	}
	return best, found
}

// floorCell is a floor column's cell: the best interval's median, and
// when the run has more than one interval, which one it was.
func floorCell(f floorFigure, value string, intervals int) string {
	var notes []string
	if intervals > 1 {
		notes = append(notes, f.interval)
	}
	if f.reached > 0 && f.reached < f.runs {
		notes = append(notes, fmt.Sprintf("%d of %d", f.reached, f.runs))
	}
	if len(notes) == 0 {
		return value
	}
	return value + " (" + strings.Join(notes, "; ") + ")"
}
