package guard

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// hubStub stands in for the hub behind an Admission: it counts the
// connections it holds that have not authenticated, and keeps their
// tickets until the test lets them authenticate.
type hubStub struct {
	pending atomic.Int64
	tickets chan Ticket
}

func newHubStub() *hubStub { return &hubStub{tickets: make(chan Ticket, 100)} }

// ServeHTTP opens a connection as a transport does: the ticket goes to
// the hub, which counts the connection, then Opened.
func (h *hubStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.open(r)
	w.WriteHeader(http.StatusSwitchingProtocols)
}

// open counts r's connection as the hub does, through Open.
func (h *hubStub) open(r *http.Request) {
	Open(r, func(ticket Ticket) struct{} {
		h.pending.Add(1)
		h.tickets <- ticket
		return struct{}{}
	})
}

// authenticate lets the oldest held connection authenticate.
func (h *hubStub) authenticate(t *testing.T) {
	t.Helper()
	select {
	case tk := <-h.tickets:
		h.pending.Add(-1)
		if tk != nil {
			tk.Release()
		}
	default:
		t.Fatal("no connection to authenticate")
	}
}

func request(t *testing.T, h http.Handler, method, remote string) int {
	t.Helper()
	r := httptest.NewRequest(method, "/connection/websocket", nil)
	r.RemoteAddr = remote
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if (w.Code == http.StatusTooManyRequests || w.Code == http.StatusServiceUnavailable) && w.Header().Get("Retry-After") != "1" {
		t.Errorf("refusal %d without Retry-After", w.Code)
	}
	return w.Code
}

func newTestAdmission(t *testing.T, cfg Config, hub *hubStub) (*Admission, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	cfg.Pending = func() int { return int(hub.pending.Load()) }
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a, &logs
}

// TestAddressShare: one address holds at most its share of the
// unauthenticated connections (a tenth of the node's bound by default),
// so it cannot fill the bound alone; other addresses still get in, and
// the address gets in again once one of its connections authenticates.
func TestAddressShare(t *testing.T) {
	hub := newHubStub()
	a, logs := newTestAdmission(t, Config{MaxUnauthenticated: 20, Names: Names{MaxUnauthenticatedPerAddress: "the.key"}}, hub)
	h := a.Handler(hub)
	for i := range 2 {
		if got := request(t, h, http.MethodGet, "192.0.2.1:1000"); got != http.StatusSwitchingProtocols {
			t.Fatalf("connection %d within the share: %d", i+1, got)
		}
	}
	if got := request(t, h, http.MethodGet, "192.0.2.1:1001"); got != http.StatusTooManyRequests {
		t.Fatalf("connection past the address's share: %d, want 429", got)
	}
	if !strings.Contains(logs.String(), "setting=the.key") {
		t.Errorf("the refusal warning does not name the setting: %s", logs)
	}
	if got := request(t, h, http.MethodGet, "192.0.2.2:1000"); got != http.StatusSwitchingProtocols {
		t.Fatalf("another address: %d", got)
	}
	if n := a.addrs.held(mustAddr("192.0.2.1")); n != 2 {
		t.Fatalf("the address holds %d, want 2", n)
	}
	hub.authenticate(t)
	if got := request(t, h, http.MethodGet, "192.0.2.1:1002"); got != http.StatusSwitchingProtocols {
		t.Fatalf("after one of its connections authenticated: %d", got)
	}
	for len(hub.tickets) > 0 {
		hub.authenticate(t)
	}
	if n := a.addrs.size(); n != 0 {
		t.Fatalf("%d addresses still counted after every connection authenticated", n)
	}
}

// TestAddressShareNotOpened: a request that ends without the hub taking
// its ticket (the upgrade failed, the handler refused) gives its place
// back at once.
func TestAddressShareNotOpened(t *testing.T) {
	hub := newHubStub()
	a, _ := newTestAdmission(t, Config{MaxUnauthenticated: 10}, hub)
	h := a.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "bad handshake", http.StatusBadRequest)
	}))
	for range 5 {
		if got := request(t, h, http.MethodGet, "192.0.2.1:1000"); got != http.StatusBadRequest {
			t.Fatalf("got %d, want the handler's 400", got)
		}
	}
	if n := a.addrs.size(); n != 0 {
		t.Fatalf("%d addresses counted after requests that opened nothing", n)
	}
	if a.upgrading.Load() != 0 {
		t.Fatalf("%d requests still counted as upgrading", a.upgrading.Load())
	}
}

// TestNodeBound: past MaxUnauthenticated every address gets 503.
func TestNodeBound(t *testing.T) {
	hub := newHubStub()
	a, _ := newTestAdmission(t, Config{MaxUnauthenticated: 3, Rate: -1}, hub)
	h := a.Handler(hub)
	for i := range 3 {
		if got := request(t, h, http.MethodGet, "192.0.2.1:1000"); got != http.StatusSwitchingProtocols {
			t.Fatalf("connection %d: %d", i+1, got)
		}
	}
	if got := request(t, h, http.MethodGet, "192.0.2.9:1000"); got != http.StatusServiceUnavailable {
		t.Fatalf("past the node's bound: %d, want 503", got)
	}
}

// TestOpenBeforeTheHandlerReturns: a WebSocket's 101 goes out before its
// handler returns, so the client's next upgrade can arrive while the
// handler is still running. Once Open has handed the connection to the
// hub, the Admission counts it once, through the hub, and that next
// upgrade is admitted up to the cap (the server's TestUnauthenticatedCap
// saw its 20th connection of 20 refused when the WebSocket transport told
// the Admission only when its handler returned).
func TestOpenBeforeTheHandlerReturns(t *testing.T) {
	hub := newHubStub()
	a, _ := newTestAdmission(t, Config{MaxUnauthenticated: 2, Rate: -1, MaxUnauthenticatedPerAddress: 2}, hub)
	var h http.Handler
	next := -1
	h = a.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusSwitchingProtocols)
		hub.open(r)
		if next < 0 {
			next = request(t, h, http.MethodGet, "192.0.2.1:1001")
		}
	}))
	if got := request(t, h, http.MethodGet, "192.0.2.1:1000"); got != http.StatusSwitchingProtocols {
		t.Fatalf("first connection: %d", got)
	}
	if next != http.StatusSwitchingProtocols {
		t.Fatalf("the second connection, at the cap of 2, arriving before the first's handler returned: %d, want 101", next)
	}
	if got := request(t, h, http.MethodGet, "192.0.2.1:1002"); got != http.StatusServiceUnavailable {
		t.Fatalf("past the cap: %d, want 503", got)
	}
	if n := a.upgrading.Load(); n != 0 {
		t.Fatalf("%d requests still counted as upgrading", n)
	}
}

// TestDrainAndPreflight: a draining Admission refuses new connections
// with 503; a preflight opens nothing and always goes through.
func TestDrainAndPreflight(t *testing.T) {
	hub := newHubStub()
	a, _ := newTestAdmission(t, Config{}, hub)
	h := a.Handler(hub)
	a.Drain()
	if !a.Draining() {
		t.Fatal("Draining after Drain is false")
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	body, _ := io.ReadAll(w.Body)
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Connection") != "close" || !strings.Contains(string(body), "shutting down") {
		t.Fatalf("while draining: %d %v %q", w.Code, w.Header(), body)
	}
	if got := request(t, h, http.MethodOptions, "192.0.2.1:1"); got != http.StatusSwitchingProtocols {
		t.Fatalf("preflight while draining: %d, want it passed to the handler", got)
	}
}

// TestTakeTicketOutsideAdmission: without an Admission (or once taken)
// there is no ticket, and the hub's field stays nil.
func TestTakeTicketOutsideAdmission(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	if tk := TakeTicket(r); tk != nil {
		t.Fatalf("ticket %v without an Admission", tk)
	}
	Opened(r) // nothing to do, and no panic
	var field interface{ Release() } = TakeTicket(r)
	if field != nil {
		t.Fatal("a nil Ticket must convert to a nil interface")
	}
}

// TestAddressShareConcurrent: requests from one address racing each other
// never take it past its share, since each counts from its check on.
func TestAddressShareConcurrent(t *testing.T) {
	const share, attempts = 5, 50
	hub := newHubStub()
	a, _ := newTestAdmission(t, Config{MaxUnauthenticated: -1, MaxUnauthenticatedPerAddress: share}, hub)
	h := a.Handler(hub)
	codes := make(chan int, attempts)
	start := make(chan struct{})
	for range attempts {
		go func() {
			<-start
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = "[2001:db8::1]:1"
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			codes <- w.Code
		}()
	}
	close(start)
	admitted := 0
	for range attempts {
		switch c := <-codes; c {
		case http.StatusSwitchingProtocols:
			admitted++
		case http.StatusTooManyRequests:
		default:
			t.Errorf("status %d", c)
		}
	}
	if admitted != share {
		t.Fatalf("%d of %d concurrent requests from one address admitted, want its share %d", admitted, attempts, share)
	}
	// Another address of the same /64 is the same client.
	if got := request(t, h, http.MethodGet, "[2001:db8::2]:1"); got != http.StatusTooManyRequests {
		t.Fatalf("same /64: %d, want 429", got)
	}
}
