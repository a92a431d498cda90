package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/composite"
	"github.com/heraldhq/herald/engine/sharded"
)

// newEngine opens the engine the configuration selects, through the
// engine registry (config.Engines): over several stores, a sharded one.
func newEngine(cfg config.Config, base string, log *slog.Logger) (engine.Engine, error) {
	sel, err := cfg.Engine.Select()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w := engine.Wiring{NodeID: nodeID(base), Logger: log}
	var p engine.PresenceManager
	if sel.PresenceKind != nil {
		if p, err = sel.PresenceKind.OpenPresence(ctx, sel.PresenceStore, w); err != nil {
			return nil, fmt.Errorf("engine %s: presence in %s: %w", sel.Kind.Name, sel.PresenceKind.Name, err)
		}
		if !sel.Composite {
			w.Presence = p
		}
	}
	e, err := sharded.Open(ctx, sel.Kind, sel.Stores, w)
	if err != nil {
		if c, ok := p.(io.Closer); ok {
			_ = c.Close()
		}
		return nil, fmt.Errorf("engine %s: %w", sel.Kind.Name, err)
	}
	if sel.Composite {
		return composite.New(e, p), nil
	}
	return e, nil
}

// nodeID makes a node id from base: the characters every engine accepts in
// an id (letters, digits, "_.:-"), at most 48 of them, and 8 random hex
// digits.
func nodeID(base string) string {
	var b strings.Builder
	for _, r := range base {
		if b.Len() == 48 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("_.:-", r):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	var suffix [4]byte
	_, _ = rand.Read(suffix[:]) // crypto/rand.Read never fails since Go 1.24
	return b.String() + "-" + hex.EncodeToString(suffix[:])
}
