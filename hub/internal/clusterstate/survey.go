package clusterstate

import (
	"encoding/json"
	"sync"
)

// Survey collects the answers of one survey: a question to every live
// node, answered by each with one message to the asker.
type Survey struct {
	mu      sync.Mutex
	answers map[string]json.RawMessage // by node id
	errs    map[string]string
	want    map[string]bool
	done    chan struct{} // closed when every wanted node answered
}

// NewSurvey waits for the nodes of want.
func NewSurvey(want []string) *Survey {
	s := &Survey{
		answers: map[string]json.RawMessage{}, errs: map[string]string{},
		want: make(map[string]bool, len(want)), done: make(chan struct{}),
	}
	for _, n := range want {
		s.want[n] = true
	}
	if len(s.want) == 0 {
		close(s.done)
	}
	return s
}

// Add records node's answer: its data, or the error it reported. A node
// not waited for (one that joined after the survey started, or a repeat)
// is ignored.
func (s *Survey) Add(node string, data json.RawMessage, errText string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.want[node] {
		return
	}
	delete(s.want, node)
	if errText != "" {
		s.errs[node] = errText
	} else {
		s.answers[node] = data
	}
	if len(s.want) == 0 {
		close(s.done)
	}
}

// Done is closed once every node waited for answered.
func (s *Survey) Done() <-chan struct{} { return s.done }

// Result is what was collected so far: the answers by node id, the nodes
// still awaited (missing), and the errors nodes reported by node id. The
// caller owns answers from then on; Add must not be called after.
func (s *Survey) Result() (answers map[string]json.RawMessage, missing []string, failed map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	missing = make([]string, 0, len(s.want)+len(s.errs))
	for n := range s.want {
		missing = append(missing, n)
	}
	return s.answers, missing, s.errs
}
