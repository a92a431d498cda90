package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// The targets of docs/benchmarks.md, against Centrifugo in the same run:
// Herald's first-copy p99 at most half (targetP99Share) of Centrifugo's
// at every rate, and its highest rate served at least targetServedRatio times
// Centrifugo's.
const (
	targetP99Share    = 0.5
	targetServedRatio = 1.5
)

// beyondFloor marks a miss whose target is beyond what the floor got in
// the same condition and run (for a Redis column, the floor through Redis
// when the run measured it: floorOf): half of Centrifugo's p99 below the floor's
// median p99 at that rate, or 1.5 times Centrifugo's highest rate served
// above the floor's, the floor's best round interval's in each case
// (floor.go). The floor is a reference, not a lower bound (its writers do
// not coalesce adaptively, and Herald beats it at some rates),
// so the mark says where a target asks more than a server that only
// delivers got from the machine, not that no server can meet it.
const beyondFloor = "†"

// sweepTop marks a missed served rate where Centrifugo served the highest
// rate of the sweep: its own highest is not known, only that it is at
// least that, so the ratio is a bound the sweep set, not a measurement
// (RATES must reach past it).
const sweepTop = "‡"

// writeVerdict writes, per column of an engine, whether Herald met the
// targets there: the rates where its median p99 is above half of
// Centrifugo's (with the ratio), or that it did not reach and Centrifugo
// did, and the ratio of the highest rates served; when the run measured
// the floor, each miss whose target is beyond the floor's figure is
// marked, and a last line counts them; so is a missed served rate where
// Centrifugo served the sweep's highest rate. A rate that Centrifugo did
// not reach in any run counts for Herald when Herald reached it.
func writeVerdict(w io.Writer, points []point, l layout) {
	fmt.Fprint(w, "\n| column | p99 at most half of Centrifugo's at every rate | highest rate served | met |\n|---|---|---|---|\n")
	met, n := 0, 0
	var p99Misses, p99Beyond, servedMisses, servedBeyond, servedTop int
	top := 0.0
	if len(l.rates) > 0 {
		top = l.rates[len(l.rates)-1]
	}
	for _, c := range l.cols {
		if c.floor {
			continue
		}
		hs, hok := servedMedian(points, c, "herald")
		cs, cok := servedMedian(points, c, "centrifugo")
		if !hok || !cok {
			continue // a column the run did not measure for both
		}
		n++
		var misses, ratios []string
		for _, r := range l.rates {
			hv, _ := p99s(points, c, "herald", r)
			cv, _ := p99s(points, c, "centrifugo", r)
			if len(cv) == 0 {
				continue // Centrifugo reached it in no run: nothing to be half of
			}
			ratio := "not reached"
			if len(hv) > 0 {
				v := median(hv) / median(cv)
				if v <= targetP99Share {
					continue
				}
				ratio = strconv.FormatFloat(v, 'f', 2, 64)
			}
			p99Misses++
			if f, ok := bestFloorP99(points, floorOf(points, c), r); ok && targetP99Share*median(cv) < f.v {
				ratio += beyondFloor
				p99Beyond++
			}
			misses, ratios = append(misses, thousands(r)), append(ratios, ratio)
		}
		p99 := "yes"
		if len(misses) > 0 {
			p99 = fmt.Sprintf("not at %s (%s)", strings.Join(misses, ", "), strings.Join(ratios, ", "))
		}
		served := fmt.Sprintf("%s against %s", thousands(hs), thousands(cs))
		servedOK := hs > 0 && hs >= targetServedRatio*cs
		if cs > 0 {
			served += fmt.Sprintf(": %s×", strconv.FormatFloat(math.Round(100*hs/cs)/100, 'f', -1, 64))
		}
		if !servedOK {
			servedMisses++
			if cs > 0 && cs >= top {
				served += sweepTop
				servedTop++
			}
			if f, ok := bestFloorServed(points, floorOf(points, c)); ok && targetServedRatio*cs > f.v {
				served += beyondFloor
				servedBeyond++
			}
		}
		verdict := "no"
		if len(misses) == 0 && servedOK {
			verdict = "yes"
			met++
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", c.title(), p99, served, verdict)
	}
	fmt.Fprintf(w, "\nMet in %d of %d columns.\n", met, n)
	if l.floor && p99Misses+servedMisses > 0 {
		against := ""
		if l.floorRedis {
			against = " (for the Redis columns, the floor through Redis)"
		}
		fmt.Fprintf(w, "\n%s: the target there is beyond what the floor%s got in the same condition and runs (half of Centrifugo's p99 below the floor's, or 1.5 times Centrifugo's highest rate served above the floor's). Marked: %d of %d missed p99 points, %d of %d missed served rates.\n",
			beyondFloor, against, p99Beyond, p99Misses, servedBeyond, servedMisses)
	}
	if servedTop > 0 {
		fmt.Fprintf(w, "\n%s: Centrifugo served every rate of the sweep, up to %s msg/s: its highest rate served is at least that, and the ratio is a bound the sweep set (RATES must reach further). Marked: %d of %d missed served rates.\n",
			sweepTop, thousands(top), servedTop, servedMisses)
	}
}
