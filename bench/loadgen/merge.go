package loadgen

import (
	"fmt"
	"time"
)

// Delivery is what all subscribers together received of one step.
type Delivery struct {
	Subscribers int
	// Expected is accepted publications × subscribers.
	Expected   int64
	Received   int64 // unique (publication, subscriber) pairs
	Missing    int64 // Expected − Received, not below zero
	Duplicates int64 // copies of a pair after its first
	// All holds every unique copy; First the earliest copy of each
	// publication; Last its latest copy (of those that arrived: a copy
	// that never came counts in Missing, not here).
	All, First, Last *Histogram
	// ReaderTurn and ReaderUnread are the longest of the processes'
	// (StepTally).
	ReaderTurn, ReaderUnread time.Duration
}

// MergeTallies combines the tallies of one step from every subscriber
// process. accepted is the number of the step's publications the server
// accepted; publications it refused are not expected anywhere.
func MergeTallies(accepted int64, ts []StepTally) (Delivery, error) {
	d := Delivery{All: NewHistogram(), First: NewHistogram(), Last: NewHistogram()}
	if len(ts) == 0 {
		return d, nil
	}
	n := ts[0].N
	first := make([]int32, n)
	last := make([]int32, n)
	for i := range n {
		first[i], last[i] = -1, -1
	}
	for _, t := range ts {
		if t.N != n || len(t.FirstUs) != n || len(t.LastUs) != n {
			return d, fmt.Errorf("step %d: tallies disagree on the publication count (%d and %d)", t.Step, n, t.N)
		}
		h, err := DecodeHistogram(t.Hist, t.Clipped)
		if err != nil {
			return d, fmt.Errorf("step %d: %w", t.Step, err)
		}
		d.All.Merge(h)
		d.Subscribers += t.Subscribers
		d.Received += t.Unique
		d.Duplicates += t.Duplicates
		d.ReaderTurn, d.ReaderUnread = max(d.ReaderTurn, t.ReaderTurn), max(d.ReaderUnread, t.ReaderUnread)
		for q := range n {
			if f := t.FirstUs[q]; f >= 0 && (first[q] < 0 || f < first[q]) {
				first[q] = f
			}
			if l := t.LastUs[q]; l > last[q] {
				last[q] = l
			}
		}
	}
	for q := range n {
		if first[q] >= 0 {
			d.First.Record(time.Duration(first[q]) * time.Microsecond)
		}
		if last[q] >= 0 {
			d.Last.Record(time.Duration(last[q]) * time.Microsecond)
		}
	}
	d.Expected = accepted * int64(d.Subscribers)
	d.Missing = max(d.Expected-d.Received, 0)
	return d, nil
}
