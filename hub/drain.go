package hub

import (
	"context"
	"time"

	"github.com/heraldhq/herald/protocol"
)

// drainStep is the shortest pause between two batches Drain closes.
const drainStep = 10 * time.Millisecond

// Drain closes every connection with 3001 (shutdown), spread evenly over
// window, so that clients reconnect to other nodes without all arriving at
// once. New connections are refused from the start. It returns when all
// are closed or ctx ends.
func (h *Hub) Drain(ctx context.Context, window time.Duration) error {
	h.closing.Store(true)
	var clients []*Client
	h.allConns.Range(func(k, _ any) bool {
		clients = append(clients, k.(*Client))
		return true
	})
	if len(clients) == 0 {
		return nil
	}
	steps := max(min(int(window/drainStep), len(clients)), 1)
	perStep := (len(clients) + steps - 1) / steps
	h.log.Info("draining connections", "clients", len(clients), "window", window)
	t := time.NewTicker(max(window/time.Duration(steps), time.Millisecond))
	defer t.Stop()
	for i := 0; i < len(clients); i += perStep {
		for _, c := range clients[i:min(i+perStep, len(clients))] {
			c.close(newDisconnect(protocol.DisconnectShutdown))
		}
		if i+perStep >= len(clients) {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// Draining reports whether the hub refuses new connections.
func (h *Hub) Draining() bool { return h.closing.Load() }
