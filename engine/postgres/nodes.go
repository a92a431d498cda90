package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// NodeStatus is a live node as the nodes table records it.
type NodeStatus struct {
	ID          string
	StartedAt   time.Time
	HeartbeatAt time.Time
}

// Nodes lists the nodes whose heartbeat has not expired, this one
// included once it has started.
func (e *Engine) Nodes(ctx context.Context) ([]NodeStatus, error) {
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	rows, err := e.qPool.Query(ctx, e.sql.nodeList)
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	nodes, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (NodeStatus, error) {
		var n NodeStatus
		err := row.Scan(&n.ID, &n.StartedAt, &n.HeartbeatAt)
		return n, err
	})
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	return nodes, nil
}
