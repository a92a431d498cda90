package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// MapEntry is one key and its JSON value for map_publish.
type MapEntry struct {
	Key  string
	Data []byte // a JSON value
}

// AppendMapPublishBatch appends the server API body of a batch of
// map_publish commands to channel (one command per entry); parallel lets
// the server run them concurrently (the keys are independent).
func AppendMapPublishBatch(dst []byte, channel string, entries []MapEntry, parallel bool) []byte {
	ch := strconv.Quote(channel)
	dst = append(dst, `{"commands":[`...)
	for i, e := range entries {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"map_publish":{"channel":`...)
		dst = append(dst, ch...)
		dst = append(dst, `,"key":`...)
		dst = strconv.AppendQuote(dst, e.Key)
		dst = append(dst, `,"data":`...)
		dst = append(dst, e.Data...)
		dst = append(dst, `}}`...)
	}
	dst = append(dst, ']')
	if parallel {
		dst = append(dst, `,"parallel":true`...)
	}
	return append(dst, '}')
}

// MapPublish sends one map_publish, or a batch of them (parallel or in
// order) when entries has more than one, and returns how many the server
// accepted and the first error.
func (p *APIPublisher) MapPublish(ctx context.Context, channel string, entries []MapEntry, parallel bool) (int, error) {
	var body []byte
	method := "batch"
	if len(entries) == 1 {
		method = "map_publish"
		body = append(body, `{"channel":`...)
		body = append(body, strconv.Quote(channel)...)
		body = append(body, `,"key":`...)
		body = strconv.AppendQuote(body, entries[0].Key)
		body = append(body, `,"data":`...)
		body = append(append(body, entries[0].Data...), '}')
	} else {
		body = AppendMapPublishBatch(nil, channel, entries, parallel)
	}
	raw, err := p.post(ctx, method, body)
	if err != nil {
		return 0, err
	}
	return countAPIReplies(method, raw, len(entries))
}

// post sends one server API request and returns the answer's body.
func (p *APIPublisher) post(ctx context.Context, method string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url+"/"+method, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if p.key != "" {
		req.Header.Set("X-API-Key", p.key)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("api %s: %w", method, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("api %s: read answer: %w", method, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("api %s: HTTP %d: %s", method, resp.StatusCode, bytes.TrimSpace(raw))
	}
	return raw, nil
}

// countAPIReplies reads the answer of a single command (method other than
// batch) or of a batch of want commands.
func countAPIReplies(method string, raw []byte, want int) (int, error) {
	var r apiReply
	if err := json.Unmarshal(raw, &r); err != nil {
		return 0, fmt.Errorf("api %s: answer is not JSON: %w", method, err)
	}
	if r.Error != nil {
		return 0, fmt.Errorf("api %s: error %d %s", method, r.Error.Code, r.Error.Message)
	}
	if method != "batch" {
		return 1, nil
	}
	ok := 0
	var first error
	for _, rep := range r.Replies {
		if rep.Error == nil {
			ok++
		} else if first == nil {
			first = fmt.Errorf("api batch: error %d %s", rep.Error.Code, rep.Error.Message)
		}
	}
	if len(r.Replies) != want && first == nil {
		first = fmt.Errorf("api batch: %d replies for %d commands", len(r.Replies), want)
	}
	return ok, first
}
