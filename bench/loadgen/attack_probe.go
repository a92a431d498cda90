package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/heraldhq/herald/protocol"
)

// probeStats are the fresh clients' timings during an attack.
type probeStats struct {
	connect, subscribe, delivery *Histogram
	n, failed                    int
	firstErr                     string
}

// runProbes starts a fresh client every cfg.ProbeInterval until ctx ends
// and times its connect reply (from the dial), its subscribe reply and
// the delivery of one publication (from the API call that makes it). A
// step that fails or outlasts cfg.ProbeTimeout counts its time so far and
// fails the probe.
func runProbes(ctx context.Context, cfg AttackConfig, api *APIPublisher) probeStats {
	st := probeStats{connect: NewHistogram(), subscribe: NewHistogram(), delivery: NewHistogram()}
	t := time.NewTicker(cfg.ProbeInterval)
	defer t.Stop()
	for i := 0; ; i++ {
		// A probe runs to its end when the attack ends meanwhile: its
		// timings are of the attack.
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ProbeTimeout)
		err := probeOnce(pctx, cfg, api, i, &st)
		cancel()
		st.n++
		if err != nil {
			st.failed++
			if st.firstErr == "" {
				st.firstErr = err.Error()
			}
		}
		select {
		case <-ctx.Done():
			return st
		case <-t.C:
		}
	}
}

func probeOnce(ctx context.Context, cfg AttackConfig, api *APIPublisher, i int, st *probeStats) error {
	start := time.Now()
	c, err := DialMap(ctx, cfg.URL, cfg.Format, cfg.Secret, "probe-"+strconv.Itoa(i))
	st.connect.Record(time.Since(start))
	if err != nil {
		return fmt.Errorf("probe %d: %w", i, err)
	}
	defer c.ws.CloseNow()
	start = time.Now()
	_, err = c.call(ctx, &protocol.Command{Subscribe: &protocol.SubscribeRequest{Channel: cfg.ProbeChannel}})
	st.subscribe.Record(time.Since(start))
	if err != nil {
		return fmt.Errorf("probe %d: subscribe: %w", i, err)
	}
	marker := []byte(`{"probe":` + strconv.Itoa(i) + `}`)
	var got time.Time
	c.OnPub = func(_ string, pub *protocol.Publication, at time.Time) {
		if bytes.Equal(bytes.TrimSpace(pub.Data), marker) {
			got = at
		}
	}
	start = time.Now()
	published := make(chan error, 1)
	go func() {
		_, err := api.Publish(ctx, cfg.ProbeChannel, [][]byte{marker})
		published <- err
	}()
	for got.IsZero() {
		if _, err := c.read(ctx); err != nil {
			st.delivery.Record(time.Since(start))
			if perr := <-published; perr != nil {
				return fmt.Errorf("probe %d: publish: %w", i, perr)
			}
			return fmt.Errorf("probe %d: delivery: %w", i, err)
		}
	}
	st.delivery.Record(got.Sub(start))
	if err := <-published; err != nil {
		return fmt.Errorf("probe %d: publish (delivered): %w", i, err)
	}
	return nil
}
