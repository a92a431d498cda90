package hub

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/heraldhq/herald/hub/internal/clusterstate"
)

// Surveys: questions to every node of the cluster, for the server API's
// cluster-wide answers (channels, connections). The asking node sends one
// control message to all, every node answers with one addressed to the
// asker alone (a targeted control message no other node decodes), and
// the asker waits for the live nodes it knows of until its context ends.
// A node that does not answer in time is named in the result instead of
// holding the caller: answers are partial, never late.

// controlSurvey asks every node to answer Op about itself.
type controlSurvey struct {
	ID   string          `json:"id"`
	Op   string          `json:"op"`
	Data json.RawMessage `json:"data,omitempty"`
}

// controlSurveyReply is one node's answer, addressed to the asking node.
type controlSurveyReply struct {
	ID    string          `json:"id"`
	To    string          `json:"to"`
	Data  json.RawMessage `json:"data,omitempty"`
	Error string          `json:"error,omitempty"`
}

// surveyOps answer surveys on this node. Each takes the request's data and
// returns the answer's.
type surveyOp func(ctx context.Context, h *Hub, data json.RawMessage) (any, error)

// surveyOpFor returns the op named op.
func surveyOpFor(op string) (surveyOp, bool) {
	switch op {
	case "channels":
		return surveyChannels, true
	case "connections":
		return surveyConnections, true
	}
	return nil, false
}

// surveyResult is what the nodes answered: Answers by node id, and the
// nodes that did not answer in time or failed (Missing), so that a caller
// can mark its result partial.
type surveyResult struct {
	Answers map[string]json.RawMessage
	Missing []string
}

// survey asks every live node, this one included, to answer op with data,
// and waits for them until ctx ends.
func (h *Hub) survey(ctx context.Context, op string, data any) (surveyResult, error) {
	fn, ok := surveyOpFor(op)
	if !ok {
		return surveyResult{}, fmt.Errorf("survey: unknown op %q", op)
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return surveyResult{}, fmt.Errorf("survey %s: encode: %w", op, err)
	}
	var want []string
	for _, n := range h.nodes.List() {
		if n.ID != h.nodeID {
			want = append(want, n.ID)
		}
	}
	p := clusterstate.NewSurvey(want)
	// This node answers directly, not through the engine.
	local, err := fn(ctx, h, raw)
	if err != nil {
		return surveyResult{}, fmt.Errorf("survey %s on this node: %w", op, err)
	}
	localRaw, err := json.Marshal(local)
	if err != nil {
		return surveyResult{}, fmt.Errorf("survey %s: encode answer: %w", op, err)
	}
	if len(want) > 0 {
		id := uuid.NewString()
		h.surveys.Store(id, p)
		defer h.surveys.Delete(id)
		if err := h.sendControl(ctx, controlMessage{Survey: &controlSurvey{ID: id, Op: op, Data: raw}}); err != nil {
			return surveyResult{}, fmt.Errorf("survey %s: %w", op, err)
		}
		select {
		case <-p.Done():
		case <-ctx.Done():
		}
	}
	answers, missing, failed := p.Result()
	res := surveyResult{Answers: answers, Missing: missing}
	res.Answers[h.nodeID] = localRaw
	for n, e := range failed {
		h.log.Warn("survey: a node failed to answer", "op", op, "node", n, "error", e)
		res.Missing = append(res.Missing, n)
	}
	return res, nil
}

// answerSurvey answers another node's survey, off the engine's delivery
// goroutine, within the command timeout.
func (h *Hub) answerSurvey(from string, s *controlSurvey) {
	if from == h.nodeID {
		return // answered directly by survey
	}
	h.goBackground(func() {
		ctx, cancel := context.WithTimeout(h.ctx, h.client.CommandTimeout)
		defer cancel()
		reply := &controlSurveyReply{ID: s.ID, To: from}
		if fn, ok := surveyOpFor(s.Op); !ok {
			reply.Error = fmt.Sprintf("unknown survey op %q (a node of another version?)", s.Op)
		} else if v, err := fn(ctx, h, s.Data); err != nil {
			reply.Error = err.Error()
		} else if reply.Data, err = json.Marshal(v); err != nil {
			reply.Error = err.Error()
		}
		if err := h.sendControlTo(ctx, controlMessage{SurveyReply: reply}, from); err != nil && h.ctx.Err() == nil {
			h.log.Warn("survey: answer not sent", "op", s.Op, "to", from, "error", err)
		}
	})
}

// takeSurveyReply hands an answer to the survey waiting for it here.
func (h *Hub) takeSurveyReply(from string, r *controlSurveyReply) {
	if r.To != h.nodeID {
		return
	}
	if v, ok := h.surveys.Load(r.ID); ok {
		v.(*clusterstate.Survey).Add(from, r.Data, r.Error)
	}
}
