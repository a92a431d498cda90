package main

import "sync/atomic"

// stats are the floor's counters, served at /stats and printed at exit:
// publications per round tells how much the writers coalesced.
type stats struct {
	accepted     atomic.Int64 // upgraded connections
	connects     atomic.Int64 // connect replies sent
	refusedToken atomic.Int64 // connects with a bad token
	publications atomic.Int64 // accepted by the API
	relayed      atomic.Int64 // received from Redis (-redis)
	refused      atomic.Int64 // writer backlog full
	rounds       atomic.Int64 // writer rounds (one write per live subscriber each)
	writes       atomic.Int64 // socket writes of pushes
	bytes        atomic.Int64 // bytes of those writes
}

// Snapshot is the JSON form of stats.
type Snapshot struct {
	Accepted     int64 `json:"accepted"`
	Connects     int64 `json:"connects"`
	RefusedToken int64 `json:"refused_token"`
	Publications int64 `json:"publications"`
	Relayed      int64 `json:"relayed"`
	Refused      int64 `json:"refused_backlog"`
	Rounds       int64 `json:"rounds"`
	Writes       int64 `json:"writes"`
	Bytes        int64 `json:"bytes"`
	Open         int   `json:"open"`
}

func (s *stats) snapshot(open int) Snapshot {
	return Snapshot{
		Accepted: s.accepted.Load(), Connects: s.connects.Load(), RefusedToken: s.refusedToken.Load(),
		Publications: s.publications.Load(), Relayed: s.relayed.Load(), Refused: s.refused.Load(), Rounds: s.rounds.Load(),
		Writes: s.writes.Load(), Bytes: s.bytes.Load(), Open: open,
	}
}
