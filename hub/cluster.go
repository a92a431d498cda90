package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/gobwas/glob"
)

// Cluster-wide views for the server API, answered by every node through a
// survey (survey.go).

// ClusterChannels lists the channels with subscribers on any live node,
// with their subscriber counts summed over the nodes, filtered by a glob
// pattern (empty: all; '*' matches any run of characters, separators
// included). Nodes that did not answer before ctx ended are in Missing.
func (h *Hub) ClusterChannels(ctx context.Context, pattern string) (map[string]int, []string, error) {
	if _, err := compileChannelPattern(pattern); err != nil {
		return nil, nil, err
	}
	res, err := h.survey(ctx, "channels", channelsQuery{Pattern: pattern})
	if err != nil {
		return nil, nil, err
	}
	out := make(map[string]int)
	for node, raw := range res.Answers {
		var m map[string]int
		if err := json.Unmarshal(raw, &m); err != nil {
			h.log.Warn("survey: malformed channels answer", "node", node, "error", err)
			res.Missing = append(res.Missing, node)
			continue
		}
		for ch, n := range m {
			out[ch] += n
		}
	}
	return out, res.Missing, nil
}

// channelsQuery is the channels survey's question.
type channelsQuery struct {
	Pattern string `json:"pattern,omitempty"`
}

// compileChannelPattern compiles a channels pattern; nil matches all.
func compileChannelPattern(pattern string) (*glob.Pattern, error) {
	if pattern == "" {
		return nil, nil
	}
	// No separators, as in Centrifugo: * matches ':' and '/' too.
	g, err := glob.Compile(pattern)
	if err != nil {
		return nil, &Error{Code: 107, Message: fmt.Sprintf("pattern: %v", err)}
	}
	return g, nil
}

func surveyChannels(_ context.Context, h *Hub, data json.RawMessage) (any, error) {
	var q channelsQuery
	if err := json.Unmarshal(data, &q); err != nil {
		return nil, fmt.Errorf("channels query: %w", err)
	}
	g, err := compileChannelPattern(q.Pattern)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int)
	for ch, n := range h.Channels() {
		if n > 0 && (g == nil || g.Match(ch)) {
			out[ch] = n
		}
	}
	return out, nil
}

// ConnectionInfo describes one live connection.
type ConnectionInfo struct {
	Client    string `json:"client"`
	User      string `json:"user"`
	Transport string `json:"transport"`
	Protocol  string `json:"protocol"`
	Node      string `json:"node"`
	// ConnectedAt is when the connect command succeeded, in Unix
	// milliseconds.
	ConnectedAt int64           `json:"connected_at"`
	Channels    []string        `json:"channels"`
	Info        json.RawMessage `json:"info,omitempty"`
	Meta        json.RawMessage `json:"meta,omitempty"`
}

// ConnectionsQuery selects connections: by user, by channel (subscribed),
// both, or neither; After and Limit page through them in client id order.
type ConnectionsQuery struct {
	User    string `json:"user,omitempty"`
	Channel string `json:"channel,omitempty"`
	// After is the last client id of the previous page; empty starts.
	After string `json:"after,omitempty"`
	// Limit is the page size (1–MaxConnectionsPage).
	Limit int `json:"limit"`
}

// MaxConnectionsPage bounds a page of ClusterConnections.
const MaxConnectionsPage = 1000

// ClusterConnections lists live connections on every node that match q,
// in client id order, one page: more reports whether another page
// follows (ask again with After set to the last client id). Nodes that
// did not answer before ctx ended are in missing.
func (h *Hub) ClusterConnections(ctx context.Context, q ConnectionsQuery) (page []ConnectionInfo, more bool, missing []string, err error) {
	if q.Limit < 1 || q.Limit > MaxConnectionsPage {
		return nil, false, nil, &Error{Code: 107, Message: fmt.Sprintf("limit: %d, want 1 to %d", q.Limit, MaxConnectionsPage)}
	}
	// Each node is asked for one more than a page: with only Limit from
	// each, a single node (or the last node with connections left) never
	// sends more than the page, and more would never be reported.
	ask := q
	ask.Limit++
	res, err := h.survey(ctx, "connections", ask)
	if err != nil {
		return nil, false, nil, err
	}
	var all []ConnectionInfo
	for node, raw := range res.Answers {
		var part []ConnectionInfo
		if err := json.Unmarshal(raw, &part); err != nil {
			h.log.Warn("survey: malformed connections answer", "node", node, "error", err)
			res.Missing = append(res.Missing, node)
			continue
		}
		all = append(all, part...)
	}
	// Every node sent its first Limit+1 after q.After, so the first Limit
	// of them all are the cluster's, and another page follows when there
	// are more.
	slices.SortFunc(all, func(a, b ConnectionInfo) int { return strings.Compare(a.Client, b.Client) })
	if len(all) > q.Limit {
		all, more = all[:q.Limit], true
	}
	return all, more, res.Missing, nil
}

func surveyConnections(_ context.Context, h *Hub, data json.RawMessage) (any, error) {
	var q ConnectionsQuery
	if err := json.Unmarshal(data, &q); err != nil {
		return nil, fmt.Errorf("connections query: %w", err)
	}
	// A node answers one more than the page asked for (see
	// ClusterConnections).
	if q.Limit < 1 || q.Limit > MaxConnectionsPage+1 {
		q.Limit = MaxConnectionsPage + 1
	}
	var clients []*Client
	if q.User != "" {
		clients = h.users.clients(q.User)
	} else {
		h.allConns.Range(func(k, _ any) bool {
			clients = append(clients, k.(*Client))
			return true
		})
	}
	out := make([]ConnectionInfo, 0, min(len(clients), q.Limit))
	for _, c := range clients {
		if c.id <= q.After && q.After != "" {
			continue
		}
		ci, ok := c.connectionInfo(q.Channel)
		if ok {
			out = append(out, ci)
		}
	}
	slices.SortFunc(out, func(a, b ConnectionInfo) int { return strings.Compare(a.Client, b.Client) })
	if len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}
