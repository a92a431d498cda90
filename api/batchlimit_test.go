package api_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/heraldhq/herald/api"
)

// TestBatchResponseBounded: a batch whose replies would pass
// MaxBatchResponseSize stops there: the reply that would pass it and every
// later one are error 106 naming the limit, the commands behind them do
// not run, and the response stays within the limit (a 53 KB batch of
// history reads answered 403 MB before).
func TestBatchResponseBounded(t *testing.T) {
	const limit = 256 << 10
	for _, parallel := range []bool{false, true} {
		t.Run(fmt.Sprint("parallel=", parallel), func(t *testing.T) {
			n := startNode(t, api.Config{MaxBatchResponseSize: limit})
			data := `"` + strings.Repeat("x", 2000) + `"`
			for range 50 {
				n.call(t, "publish", `{"channel":"chat","data":`+data+`}`)
			}
			const reads = 60
			cmds := make([]string, 0, reads+1)
			for range reads {
				cmds = append(cmds, `{"history":{"channel":"chat","limit":-1}}`)
			}
			// A publication behind the limit: it must not run.
			cmds = append(cmds, `{"publish":{"channel":"chat","data":1}}`)
			body := fmt.Sprintf(`{"parallel":%v,"commands":[%s]}`, parallel, strings.Join(cmds, ","))
			got := n.call(t, "batch", body)
			if len(got) > limit {
				t.Fatalf("a response of %d bytes, over the limit of %d", len(got), limit)
			}
			var res struct {
				Replies []struct {
					History *struct{ Publications []json.RawMessage }
					Error   *struct {
						Code    int
						Message string
					}
				}
			}
			if err := json.Unmarshal([]byte(got), &res); err != nil {
				t.Fatalf("response %.200s…: %v", got, err)
			}
			if len(res.Replies) != reads+1 {
				t.Fatalf("%d replies, want %d", len(res.Replies), reads+1)
			}
			ok, refused := 0, 0
			for i, r := range res.Replies {
				switch {
				// In parallel the publication at the end may run before a
				// history read: 51 then.
				case r.History != nil && len(r.History.Publications) >= 50 && refused == 0:
					ok++
				case r.Error != nil && r.Error.Code == 106 && strings.Contains(r.Error.Message, fmt.Sprint(limit)) && strings.Contains(r.Error.Message, "max_batch_response_size"):
					refused++
				default:
					t.Fatalf("reply %d: %+v, want the history or error 106 naming the limit (after %d histories, %d refused)", i, r, ok, refused)
				}
			}
			if ok == 0 || refused == 0 {
				t.Fatalf("%d histories and %d refused, want both", ok, refused)
			}
			// In parallel the commands may all have started before the
			// limit was reached; in order, none behind it runs.
			if h := n.call(t, "history", `{"channel":"chat"}`); !parallel && !strings.Contains(h, `"offset":50}`) {
				t.Fatalf("the publication behind the limit ran: %s", h)
			}
		})
	}
}

// TestBatchStreamsReplies: a batch's replies are written as they are
// ready, not gathered: with a limit high enough for all of them, a batch
// whose replies total about 30 MB raises the node's live heap by far
// less (it held every reply, and then the whole encoded response, before).
func TestBatchStreamsReplies(t *testing.T) {
	if testing.Short() {
		t.Skip("a 30 MB response")
	}
	n := startNode(t, api.Config{MaxBatchResponseSize: 1 << 30})
	data := `"` + strings.Repeat("x", 2000) + `"`
	for range 50 {
		n.call(t, "publish", `{"channel":"chat","data":`+data+`}`)
	}
	const reads = 300
	cmds := make([]string, reads)
	for i := range cmds {
		cmds[i] = `{"history":{"channel":"chat","limit":-1}}`
	}
	before := liveHeap()
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if h := liveHeap(); h > peak.Load() {
				peak.Store(h)
			}
		}
	}()
	req, err := http.NewRequest(http.MethodPost, n.apiURL+"/batch", strings.NewReader(`{"commands":[`+strings.Join(cmds, ",")+`]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", testKey)
	resp, err := n.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// Read as it comes, keeping nothing.
	size, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	close(stop)
	<-sampled
	if err != nil || size < 25<<20 {
		t.Fatalf("read %d bytes (%v), want about 30 MB", size, err)
	}
	growth := int64(peak.Load()) - int64(before)
	t.Logf("a %d MB batch response; live heap grew by at most %d KiB", size>>20, growth>>10)
	if growth > 8<<20 {
		t.Fatalf("live heap grew by %d MiB during a %d MiB batch response, want at most 8 MiB: the replies are held, not streamed", growth>>20, size>>20)
	}
}

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
