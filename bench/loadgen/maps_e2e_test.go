package loadgen_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/bench/loadgen"
	"github.com/heraldhq/herald/protocol"
	"github.com/heraldhq/herald/server"
)

// startMapHerald runs a Herald node on loopback (memory engine) with a
// map namespace "maps" whose largest page is 100 entries.
func startMapHerald(t *testing.T) *server.Server {
	t.Helper()
	cfg := heraldConfig(t, `
channel:
  namespaces:
    - name: maps
      subscription_type: map
      allow_subscribe_for_client: true
      map:
        mode: persistent
        max_page_size: 100
        stream_size: 1000
`)
	return startHeraldWith(t, cfg)
}

// TestMapsAgainstHerald runs the map benchmark small: every key is in the
// snapshot, read in pages, and every update reaches a live subscriber.
func TestMapsAgainstHerald(t *testing.T) {
	noLeaks(t)
	s := startMapHerald(t)
	for _, format := range []protocol.Type{protocol.TypeJSON, protocol.TypeProtobuf} {
		t.Run(format.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cfg := loadgen.MapsConfig{
				URL: wsURL(s), Format: format, Secret: secret, APIURL: "http://" + s.Addr() + "/api", APIKey: "api-key",
				Channel: "maps:" + format.String(), Keys: []int{250, 1}, Payload: 64, Batch: 40, Parallel: true, FillConc: 3,
				PageSize: 100, Late: 4, Subscribers: 3, Rates: []float64{100, 200}, Step: 500 * time.Millisecond, APIConns: 4,
				Grace: 5 * time.Second, MaxLag: 5 * time.Second, FillTimeout: 20 * time.Second, SnapshotTimeout: 20 * time.Second,
				ServerPIDs: []int{os.Getpid()}, StoreCmd: "echo 1234",
			}
			var steps []string
			res, err := loadgen.RunMaps(ctx, cfg, func(s string) { steps = append(steps, s) })
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != 2 || len(steps) != 10 {
				t.Fatalf("%d results, progress %q", len(res), steps)
			}
			r := res[0]
			if r.Keys != 250 || r.Sync.Keys != 250 || r.Sync.StatePages != 3 {
				t.Errorf("snapshot of %d keys in %d pages, want 250 in 3", r.Sync.Keys, r.Sync.StatePages)
			}
			if l := r.Late; l.Subscribers != 4 || l.Complete != 4 || l.FirstError != "" || l.Each.Count != 4 || l.All <= 0 {
				t.Errorf("late snapshots: %+v", l)
			}
			if len(r.Updates) != 2 || r.Served != 200 {
				t.Fatalf("update steps %+v, highest served %v; want 2 steps, 200", r.Updates, r.Served)
			}
			// Each step counts its own updates only, though the subscribers stay.
			for i, want := range []int64{50, 100} {
				if u := r.Updates[i]; u.Sent != want || u.PublishErrs != 0 || u.Missing != 0 || u.First.Count != want || !u.Served {
					t.Errorf("step %d: sent %d, errors %d, missing %d, first copies %d, served %v; want %d, 0, 0, %d, true", i, u.Sent, u.PublishErrs, u.Missing, u.First.Count, u.Served, want, want)
				}
			}
			if r.RSSBefore <= 0 || r.StoreBefore != 1234 || r.StoreFilled != 1234 {
				t.Errorf("RSS %d, store %d/%d", r.RSSBefore, r.StoreBefore, r.StoreFilled)
			}
			if res[1].Sync.Keys != 1 || res[1].Sync.StatePages != 1 {
				t.Errorf("one key: %+v", res[1].Sync)
			}
		})
	}
}

// TestMapsErrorsNameTheCause: a stream channel and a bad store command
// fail the run with the server's error or the command's output.
func TestMapsErrorsNameTheCause(t *testing.T) {
	noLeaks(t)
	s := startMapHerald(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := loadgen.MapsConfig{
		URL: wsURL(s), Format: protocol.TypeJSON, Secret: secret, APIURL: "http://" + s.Addr() + "/api", APIKey: "api-key",
		Channel: "nomap", Keys: []int{10}, Payload: 32, Batch: 5, FillConc: 2, PageSize: 100, Subscribers: 1, Rates: []float64{10},
		Step: 100 * time.Millisecond, APIConns: 1, Grace: time.Second, MaxLag: time.Second, FillTimeout: 10 * time.Second,
		SnapshotTimeout: 10 * time.Second,
	}
	if _, err := loadgen.RunMaps(ctx, cfg, func(string) {}); err == nil || !strings.Contains(err.Error(), "fill keys from") {
		t.Errorf("a channel outside a map namespace: want the fill's API error, got %v", err)
	}
	cfg.Channel, cfg.StoreCmd = "maps:x", "echo lots"
	if _, err := loadgen.RunMaps(ctx, cfg, func(string) {}); err == nil || !strings.Contains(err.Error(), `printed "lots"`) {
		t.Errorf("a store command printing no number: got %v", err)
	}
	cfg.StoreCmd, cfg.Rates = "", []float64{10, 0}
	if _, err := loadgen.RunMaps(ctx, cfg, func(string) {}); err == nil || !strings.Contains(err.Error(), "each positive") {
		t.Errorf("rate 0: got %v", err)
	}
}

// TestMapClientStreamPages: changes made while the state is read come as
// stream pages before the live reply, and the client applies them (new
// keys added, removed keys gone).
func TestMapClientStreamPages(t *testing.T) {
	noLeaks(t)
	s := startMapHerald(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	api := loadgen.NewAPIPublisher("http://"+s.Addr()+"/api", "api-key", 2, 10*time.Second)
	defer api.Close()
	const channel = "maps:paged"
	fill := func(from, to int) {
		var entries []loadgen.MapEntry
		for i := from; i < to; i++ {
			entries = append(entries, loadgen.MapEntry{Key: "key" + strconv.Itoa(i), Data: []byte(`{"n":-1}`)})
		}
		if ok, err := api.MapPublish(ctx, channel, entries, false); err != nil || ok != len(entries) {
			t.Fatalf("fill %d..%d: %d accepted, %v", from, to, ok, err)
		}
	}
	fill(0, 150)
	c, err := loadgen.DialMap(ctx, wsURL(s), protocol.TypeJSON, secret, "paged")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.AfterStatePage = func(page int) error {
		if page == 1 {
			fill(150, 400) // 250 changes: three stream pages of 100
		}
		return nil
	}
	sync, err := c.SubscribeMap(ctx, channel, 100, true)
	if err != nil {
		t.Fatal(err)
	}
	if sync.Keys != 400 || sync.Changes != 250 || sync.StreamPages < 2 {
		t.Errorf("synced %+v; want 400 keys, 250 changes in 2 or more stream pages", sync)
	}
}
