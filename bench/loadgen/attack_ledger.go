package loadgen

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/heraldhq/herald/protocol"
)

// LedgerCount is what the history subscriber saw of the numbered
// publications: Lost were acknowledged by the API and never arrived,
// Duplicates arrived more than once (counted once per extra copy).
type LedgerCount struct {
	Sent       int `json:"sent"`
	Acked      int `json:"acked"`
	Received   int `json:"received"` // distinct numbers
	Duplicates int `json:"duplicates"`
	Lost       int `json:"lost"`
	Reconnects int `json:"reconnects"`
}

// ledger is a well-behaved subscriber of a channel with history: it
// follows the channel and, when its connection ends, connects again and
// recovers from its last offset, as an SDK does.
type ledger struct {
	cfg    AttackConfig
	cancel context.CancelFunc
	done   chan struct{}

	mu         sync.Mutex
	seen       map[int]int // number -> copies
	acked      map[int]bool
	sent       int
	epoch      string
	offset     uint64
	reconnects int
	changed    chan struct{} // signalled on every arrival
}

// startLedger subscribes the history subscriber; it returns once the
// first subscribe is done, so that publications that follow reach it.
func startLedger(ctx context.Context, cfg AttackConfig) (*ledger, error) {
	lctx, cancel := context.WithCancel(ctx)
	l := &ledger{cfg: cfg, cancel: cancel, done: make(chan struct{}), seen: map[int]int{}, acked: map[int]bool{}, changed: make(chan struct{}, 1)}
	c, err := l.subscribe(lctx)
	if err != nil {
		cancel()
		return nil, err
	}
	go l.follow(lctx, c)
	return l, nil
}

// subscribe connects and subscribes, recovering from the last position
// once there is one.
func (l *ledger) subscribe(ctx context.Context) (*MapClient, error) {
	c, err := DialMap(ctx, l.cfg.URL, l.cfg.Format, l.cfg.Secret, "ledger")
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	req := &protocol.SubscribeRequest{Channel: l.cfg.LedgerChannel, Recoverable: true, Positioned: true}
	if l.epoch != "" {
		req.Recover, req.Epoch, req.Offset = true, l.epoch, l.offset
	}
	l.mu.Unlock()
	c.OnPub = func(_ string, pub *protocol.Publication, _ time.Time) { l.arrived(pub) }
	r, err := c.call(ctx, &protocol.Command{Subscribe: req})
	if err != nil {
		c.ws.CloseNow()
		return nil, err
	}
	if s := r.Subscribe; s != nil {
		for _, p := range s.Publications {
			l.arrived(p)
		}
		l.mu.Lock()
		if l.epoch == "" || s.Offset > l.offset {
			l.epoch, l.offset = s.Epoch, max(l.offset, s.Offset)
		}
		l.mu.Unlock()
	}
	return c, nil
}

// follow reads until ctx ends, reconnecting after a lost connection.
func (l *ledger) follow(ctx context.Context, c *MapClient) {
	defer close(l.done)
	for {
		if c != nil {
			_ = c.ReadLive(ctx)
			c.ws.CloseNow()
			c = nil
		}
		if ctx.Err() != nil {
			return
		}
		l.mu.Lock()
		l.reconnects++
		l.mu.Unlock()
		var err error
		if c, err = l.subscribe(ctx); err != nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}

func (l *ledger) arrived(pub *protocol.Publication) {
	n, ok := payloadInt(pub.Data, `"seq"`)
	l.mu.Lock()
	if ok {
		l.seen[int(n)]++
	}
	if pub.Offset > l.offset {
		l.offset = pub.Offset
	}
	l.mu.Unlock()
	select {
	case l.changed <- struct{}{}:
	default:
	}
}

// publish sends numbered publications at rate a second until ctx ends,
// one at a time (a slow API delays the next ones, it does not pile them).
func (l *ledger) publish(ctx context.Context, api *APIPublisher, rate float64) {
	t := time.NewTicker(max(time.Duration(float64(time.Second)/rate), time.Millisecond))
	defer t.Stop()
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// An answer on its way when the attack ends still counts.
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		_, err := api.Publish(pctx, l.cfg.LedgerChannel, [][]byte{[]byte(`{"seq":` + strconv.Itoa(n) + `}`)})
		cancel()
		l.mu.Lock()
		l.sent++
		if err == nil {
			l.acked[n] = true
		}
		l.mu.Unlock()
	}
}

// settle waits up to grace for every acknowledged publication, then
// stops the subscriber and counts.
func (l *ledger) settle(ctx context.Context, grace time.Duration) LedgerCount {
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	for !l.complete() {
		select {
		case <-ctx.Done():
		case <-deadline.C:
		case <-l.changed:
			continue
		}
		break
	}
	l.stop()
	l.mu.Lock()
	defer l.mu.Unlock()
	lc := LedgerCount{Sent: l.sent, Acked: len(l.acked), Received: len(l.seen), Reconnects: l.reconnects}
	for _, c := range l.seen {
		lc.Duplicates += c - 1
	}
	for n := range l.acked {
		if l.seen[n] == 0 {
			lc.Lost++
		}
	}
	return lc
}

func (l *ledger) complete() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for n := range l.acked {
		if l.seen[n] == 0 {
			return false
		}
	}
	return true
}

func (l *ledger) stop() {
	l.cancel()
	<-l.done
}
