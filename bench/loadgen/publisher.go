package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/heraldhq/herald/protocol"
)

// Publisher sends publications. Publish reports, for a batch, how many the
// server accepted; an error means none of the rest are known to be.
type Publisher interface {
	Publish(ctx context.Context, channel string, payloads [][]byte) (accepted int, err error)
	Close()
}

// APIPublisher publishes through the server HTTP API (publish, or batch
// for several), over keep-alive connections.
type APIPublisher struct {
	url    string // .../api
	key    string
	client *http.Client
}

// NewAPIPublisher publishes to the API at base (http://host:port/api) with
// key, over at most conns connections.
func NewAPIPublisher(base, key string, conns int, timeout time.Duration) *APIPublisher {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	tr := &http.Transport{
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		MaxConnsPerHost:     conns,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}
	return &APIPublisher{url: strings.TrimRight(base, "/"), key: key, client: &http.Client{Transport: tr, Timeout: timeout}}
}

// apiReply is the part of an API answer the publisher reads.
type apiReply struct {
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Replies []struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	} `json:"replies"`
}

// Publish sends one publish, or a batch of them.
func (p *APIPublisher) Publish(ctx context.Context, channel string, payloads [][]byte) (int, error) {
	ch, err := json.Marshal(channel)
	if err != nil {
		return 0, err
	}
	var body []byte
	method := "publish"
	one := func(b []byte, data []byte) []byte {
		b = append(b, `{"channel":`...)
		b = append(b, ch...)
		b = append(b, `,"data":`...)
		return append(append(b, data...), '}')
	}
	if len(payloads) == 1 {
		body = one(body, payloads[0])
	} else {
		method = "batch"
		body = append(body, `{"commands":[`...)
		for i, pl := range payloads {
			if i > 0 {
				body = append(body, ',')
			}
			body = append(body, `{"publish":`...)
			body = append(one(body, pl), '}')
		}
		body = append(body, `]}`...)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url+"/"+method, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if p.key != "" {
		req.Header.Set("X-API-Key", p.key)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("api %s: %w", method, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return 0, fmt.Errorf("api %s: read answer: %w", method, err)
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("api %s: HTTP %d: %s", method, resp.StatusCode, bytes.TrimSpace(raw))
	}
	var r apiReply
	if err := json.Unmarshal(raw, &r); err != nil {
		return 0, fmt.Errorf("api %s: answer is not JSON: %w", method, err)
	}
	if r.Error != nil {
		return 0, fmt.Errorf("api %s: error %d %s", method, r.Error.Code, r.Error.Message)
	}
	if method == "publish" {
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
	if len(r.Replies) != len(payloads) && first == nil {
		first = fmt.Errorf("api batch: %d replies for %d commands", len(r.Replies), len(payloads))
	}
	return ok, first
}

// Close drops the idle connections.
func (p *APIPublisher) Close() { p.client.CloseIdleConnections() }

// ClientPublisher publishes through one client connection with the
// protocol's publish command (the channel must allow client publishing).
type ClientPublisher struct {
	pool *Pool
	conn *Conn

	mu      sync.Mutex
	nextID  uint32
	waiting map[uint32]chan *protocol.Error
}

// NewClientPublisher connects one client (no subscriptions) with cfg.
func NewClientPublisher(ctx context.Context, cfg PoolConfig, clock Clock) (*ClientPublisher, error) {
	cfg.Channels = nil
	cfg.Shards = 1
	// The publisher sends commands on its Conn: the light client's.
	cfg.Client = ClientLight
	p := &ClientPublisher{waiting: map[uint32]chan *protocol.Error{}, nextID: 1}
	pool, err := NewPool(cfg, clock, p)
	if err != nil {
		return nil, err
	}
	conn, err := pool.Open(ctx, 0, 0)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("publisher connection: %w", err)
	}
	p.pool, p.conn = pool, conn
	return p, nil
}

// Publish sends one publish command per payload and waits for the replies.
func (p *ClientPublisher) Publish(ctx context.Context, channel string, payloads [][]byte) (int, error) {
	chans := make([]chan *protocol.Error, len(payloads))
	for i, pl := range payloads {
		ch := make(chan *protocol.Error, 1)
		p.mu.Lock()
		p.nextID++
		id := p.nextID
		p.waiting[id] = ch
		p.mu.Unlock()
		chans[i] = ch
		if err := p.conn.Send(&protocol.Command{Id: id, Publish: &protocol.PublishRequest{Channel: channel, Data: pl}}); err != nil {
			return 0, fmt.Errorf("client publish: %w", err)
		}
	}
	ok := 0
	var first error
	for _, ch := range chans {
		select {
		case e := <-ch:
			if e == nil {
				ok++
			} else if first == nil {
				first = fmt.Errorf("client publish: error %d %s", e.Code, e.Message)
			}
		case <-ctx.Done():
			return ok, ctx.Err()
		}
	}
	return ok, first
}

// Publication ignores pushes (the publisher subscribes to nothing).
func (p *ClientPublisher) Publication(int, int, string, []byte, int64) {}

// Reply completes a waiting publish.
func (p *ClientPublisher) Reply(_ int, id uint32, err *protocol.Error) {
	p.mu.Lock()
	ch := p.waiting[id]
	delete(p.waiting, id)
	p.mu.Unlock()
	if ch != nil {
		ch <- err
	}
}

// Close closes the connection.
func (p *ClientPublisher) Close() { p.pool.Close() }

// errNoPublisher is returned when neither an API nor a client publisher
// was configured.
var errNoPublisher = errors.New("no publisher: give an API URL or a client URL")
