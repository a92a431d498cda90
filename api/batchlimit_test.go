package api_test

import (
	"encoding/json"
	"fmt"
	"strings"
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
