package loadgen

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/procfs"

	"github.com/heraldhq/herald/protocol"
)

// The attacks of issue 35 that RunAttack replays against one node.
const (
	AttackGRPCPartial = "grpc-partial" // unauthenticated gRPC streams holding a declared message unfinished
	AttackNoRead      = "noread"       // WebSocket clients that ask for much and stop reading
	AttackMapKeys     = "mapkeys"      // one client adding distinct map keys as fast as it can
	AttackHistoryHTTP = "history-http" // server API history with limit -1 over HTTP
	AttackHistoryGRPC = "history-grpc" // the same over the gRPC API
)

// AttackKinds lists the attacks in the order the issue names them.
var AttackKinds = []string{AttackGRPCPartial, AttackNoRead, AttackMapKeys, AttackHistoryHTTP, AttackHistoryGRPC}

// AttackConfig is one attack on one node and the well-behaved clients
// measured while it lasts.
type AttackConfig struct {
	Kind      string
	Label     string // the attack's name in the report (Kind when empty)
	URL       string // the node's WebSocket endpoint
	APIURL    string // the node's HTTP server API (…/api)
	APIKey    string
	GRPCAddr  string // the node's gRPC API, host:port
	Secret    string // HMAC secret to mint connection tokens
	Format    protocol.Type
	ServerPID int    // the node, for its RSS
	Metrics   string // the node's /metrics URL, for the closes by code ("" skips)
	Duration  time.Duration

	// The fresh client: every ProbeInterval a new connection connects,
	// subscribes to ProbeChannel and waits for one publication there.
	ProbeChannel  string
	ProbeInterval time.Duration
	ProbeTimeout  time.Duration

	// The history subscriber: it follows LedgerChannel (with history and
	// recovery) while LedgerRate numbered publications a second go there.
	LedgerChannel string
	LedgerRate    float64
	Grace         time.Duration // after the attack, for the last publications

	// Targets.
	LatencyLimit   time.Duration // most a fresh client's reply or delivery may take
	RSSGrowthLimit int64         // most the node's RSS may grow over its level before the attack

	// The attack's channel: publications put there first (noread,
	// history), or the map channel (mapkeys).
	Channel        string
	Prefill        int
	PrefillPayload int

	GRPCConns   int // grpc-partial
	GRPCStreams int // per connection
	GRPCMessage int // the declared message size

	Clients     int // noread
	HistoryPull int // noread: the history limit each asks for
	RcvBuf      int // noread: the socket receive buffer of each

	MapValue    int // mapkeys: bytes of each value
	MapInFlight int

	Concurrency int // history-*: calls at once
}

// AttackResult is one row of the report.
type AttackResult struct {
	Attack  string `json:"attack"`
	Outcome string `json:"outcome"` // what the attack got done
	Closes  string `json:"closes,omitempty"`
	// DetachedWrites are the node's writes that went to a goroutine of
	// their client's own (the default; not with client.wait_on_blocked_writes) during the attack.
	DetachedWrites int64 `json:"detached_writes,omitempty"`

	RSSBefore  int64 `json:"rss_before"`
	RSSPeak    int64 `json:"rss_peak"` // the highest VmRSS sampled during the attack
	HWM        int64 `json:"vm_hwm"`   // VmHWM after it (the process's peak so far; the kernel updates it lazily, it may be a little under RSSPeak)
	RSSSamples int   `json:"rss_samples"`

	Connect   Percentiles `json:"connect"`
	Subscribe Percentiles `json:"subscribe"`
	Delivery  Percentiles `json:"delivery"`
	Probes    int         `json:"probes"`
	Failed    int         `json:"probes_failed"`
	ProbeErr  string      `json:"probe_error,omitempty"`

	Ledger LedgerCount `json:"ledger"`

	LatencyLimit   time.Duration `json:"latency_limit"`
	RSSGrowthLimit int64         `json:"rss_growth_limit"`
	Verdict        string        `json:"verdict"`
	AttackErr      string        `json:"attack_error,omitempty"`
}

// attackFunc runs an attack until ctx ends and reports what it got done.
type attackFunc func(ctx context.Context, cfg AttackConfig, logf func(string)) (string, error)

func attackFor(kind string) (attackFunc, error) {
	switch kind {
	case AttackGRPCPartial:
		return attackGRPCPartial, nil
	case AttackNoRead:
		return attackNoRead, nil
	case AttackMapKeys:
		return attackMapKeys, nil
	case AttackHistoryHTTP:
		return attackHistoryHTTP, nil
	case AttackHistoryGRPC:
		return attackHistoryGRPC, nil
	}
	return nil, fmt.Errorf("attack %q: want one of %v", kind, AttackKinds)
}

// RunAttack prepares the attack's channel, then for cfg.Duration runs the
// attack while sampling the node's RSS, probing with fresh clients and
// feeding the history subscriber; it then waits cfg.Grace for the
// subscriber to catch up and judges the row.
func RunAttack(ctx context.Context, cfg AttackConfig, logf func(string)) (AttackResult, error) {
	res := AttackResult{Attack: cfg.Label, LatencyLimit: cfg.LatencyLimit, RSSGrowthLimit: cfg.RSSGrowthLimit}
	if res.Attack == "" {
		res.Attack = cfg.Kind
	}
	attack, err := attackFor(cfg.Kind)
	if err != nil {
		return res, err
	}
	api := NewAPIPublisher(cfg.APIURL, cfg.APIKey, 4, 30*time.Second)
	defer api.Close()
	if cfg.Prefill > 0 {
		logf(fmt.Sprintf("%s: %d publications of %d bytes into %s", res.Attack, cfg.Prefill, cfg.PrefillPayload, cfg.Channel))
		if err := prefill(ctx, api, cfg.Channel, cfg.Prefill, cfg.PrefillPayload); err != nil {
			return res, err
		}
	}
	led, err := startLedger(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer led.stop()
	closesBefore, _ := disconnectCounts(ctx, cfg.Metrics)
	if s, err := ReadProc(cfg.ServerPID, time.Now().UnixNano()); err == nil {
		res.RSSBefore = s.RSS
	} else {
		return res, err
	}

	actx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	var wg sync.WaitGroup
	var peak rssPeak
	wg.Add(4)
	go func() { defer wg.Done(); peak.sample(actx, cfg.ServerPID, 100*time.Millisecond) }()
	var probes probeStats
	go func() { defer wg.Done(); probes = runProbes(actx, cfg, api) }()
	go func() { defer wg.Done(); led.publish(actx, api, cfg.LedgerRate) }()
	go func() {
		defer wg.Done()
		logf(fmt.Sprintf("%s: attacking for %s", res.Attack, cfg.Duration))
		// The attack's context has no deadline, only the end: a gRPC
		// call fails on a deadline a moment before the context reports
		// it, and a loop would count the calls it starts meanwhile.
		attackCtx, cancel := context.WithCancel(context.WithoutCancel(actx))
		defer cancel()
		stop := context.AfterFunc(actx, cancel)
		defer stop()
		out, err := attack(attackCtx, cfg, logf)
		res.Outcome = out
		if err != nil {
			res.AttackErr = err.Error()
		}
	}()
	wg.Wait()
	res.RSSPeak, res.RSSSamples = peak.max, peak.n
	res.Connect, res.Subscribe, res.Delivery = probes.connect.Percentiles(), probes.subscribe.Percentiles(), probes.delivery.Percentiles()
	res.Probes, res.Failed, res.ProbeErr = probes.n, probes.failed, probes.firstErr

	res.Ledger = led.settle(ctx, cfg.Grace)
	if p, err := procfs.NewProc(cfg.ServerPID); err == nil {
		if st, err := p.NewStatus(); err == nil {
			res.HWM = int64(st.VmHWM)
		}
	}
	if after, err := disconnectCounts(ctx, cfg.Metrics); err == nil {
		res.Closes = closesDelta(closesBefore.closes, after.closes)
		res.DetachedWrites = int64(after.detached - closesBefore.detached)
	}
	res.Verdict = res.judge()
	return res, ctx.Err()
}

// rssPeak is the highest VmRSS sampled.
type rssPeak struct {
	max int64
	n   int
}

func (p *rssPeak) sample(ctx context.Context, pid int, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if s, err := ReadProc(pid, 0); err == nil {
			p.n++
			p.max = max(p.max, s.RSS)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// judge is the verdict against the targets: memory bounded, no
// fresh client delayed by more than the limit, nothing published twice or
// lost.
func (r *AttackResult) judge() string {
	var fails []string
	if r.AttackErr != "" {
		fails = append(fails, "the attack failed")
	}
	if r.RSSGrowthLimit > 0 && r.RSSPeak-r.RSSBefore > r.RSSGrowthLimit {
		fails = append(fails, fmt.Sprintf("RSS +%s MiB over %s", mib(r.RSSPeak-r.RSSBefore), mib(r.RSSGrowthLimit)))
	}
	slow := ""
	for _, s := range []struct {
		name string
		p    Percentiles
	}{{"connect", r.Connect}, {"subscribe", r.Subscribe}, {"delivery", r.Delivery}} {
		if s.p.Max > r.LatencyLimit {
			slow += " " + s.name
		}
	}
	if slow != "" {
		fails = append(fails, fmt.Sprintf("over %s:%s", r.LatencyLimit, slow))
	}
	if r.Probes == 0 {
		fails = append(fails, "no probe ran")
	} else if r.Failed > 0 {
		fails = append(fails, fmt.Sprintf("%d of %d probes failed", r.Failed, r.Probes))
	}
	if r.Ledger.Duplicates > 0 || r.Ledger.Lost > 0 {
		fails = append(fails, fmt.Sprintf("%d twice, %d lost", r.Ledger.Duplicates, r.Ledger.Lost))
	}
	if r.Ledger.Acked == 0 {
		fails = append(fails, "no history publication acknowledged")
	}
	if len(fails) == 0 {
		return "pass"
	}
	out := "FAIL:"
	for i, f := range fails {
		if i > 0 {
			out += ";"
		}
		out += " " + f
	}
	return out
}

// prefill publishes n publications of size bytes to channel, 4 at a time.
func prefill(ctx context.Context, api *APIPublisher, channel string, n, size int) error {
	sem := make(chan struct{}, 4)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		select {
		case err := <-errs:
			wg.Wait()
			return err
		case sem <- struct{}{}:
		}
		wg.Add(1)
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			data := AppendPayload(nil, Message{N: n, Seq: i}, size)
			if _, err := api.Publish(ctx, channel, [][]byte{data}); err != nil {
				select {
				case errs <- fmt.Errorf("prefill %s, publication %d: %w", channel, i, err):
				default:
				}
			}
		}(i)
	}
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// errAttackConfig is returned for a configuration an attack cannot run.
var errAttackConfig = errors.New("attack configuration")
