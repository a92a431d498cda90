package postgres

import (
	"context"
	"fmt"
)

// ForgetNode deletes the presence entries that node added: the hub calls it
// once the node has left or stopped sending heartbeats (the hub owns the
// cluster's liveness; see engine.NodeForgetter), so a dead node's clients
// leave presence at once rather than at their entries' TTL. Deleting is
// idempotent, so every live node may do it.
func (e *Engine) ForgetNode(ctx context.Context, node string) error {
	if node == e.opts.NodeID {
		return nil // this node is alive: it is the one asking
	}
	if err := e.life.Usable(ctx); err != nil {
		return fmt.Errorf("forget node %q: %w", node, err)
	}
	if _, err := e.qPool.Exec(ctx, e.sql.forgetNode, node); err != nil {
		return fmt.Errorf("forget node %q: delete its presence: %w", node, err)
	}
	return nil
}
