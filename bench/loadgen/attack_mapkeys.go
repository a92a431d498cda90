package loadgen

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/heraldhq/herald/protocol"
)

// attackMapKeys is one client (a publisher by allow_publish_for_client)
// setting distinct keys of cfg.MapValue bytes in the map channel
// cfg.Channel as fast as the node answers, cfg.MapInFlight at a time,
// until ctx ends.
func attackMapKeys(ctx context.Context, cfg AttackConfig, _ func(string)) (string, error) {
	if cfg.Channel == "" || cfg.MapInFlight < 1 {
		return "", fmt.Errorf("%w: mapkeys needs a channel and at least one publish in flight", errAttackConfig)
	}
	c, err := DialMap(ctx, cfg.URL, cfg.Format, cfg.Secret, "mapkeys")
	if err != nil {
		return "", fmt.Errorf("mapkeys: %w", err)
	}
	defer c.ws.CloseNow()
	value := AppendPayload(nil, Message{N: 1}, cfg.MapValue)
	window := make(chan struct{}, cfg.MapInFlight)
	var (
		mu       sync.Mutex
		sent, ok int
		refused  = map[string]int{} // error code and message -> count
	)
	readErr := make(chan error, 1)
	go func() {
		for {
			replies, err := c.read(ctx)
			if err != nil {
				readErr <- err
				return
			}
			mu.Lock()
			for _, r := range replies {
				if r.Error != nil {
					refused[strconv.Itoa(int(r.Error.Code))+" "+r.Error.Message]++
				} else {
					ok++
				}
				select {
				case <-window:
				default:
				}
			}
			mu.Unlock()
		}
	}()
	var sendErr error
	for n := uint32(1); ctx.Err() == nil; n++ {
		select {
		case <-ctx.Done():
			continue
		case err := <-readErr:
			sendErr = err
		case window <- struct{}{}:
		}
		if sendErr != nil {
			break
		}
		cmd := publishCommand(cfg.Channel, "k"+strconv.Itoa(int(n)), value)
		cmd.Id = n
		if err := c.send(ctx, cmd); err != nil {
			sendErr = err
			break
		}
		mu.Lock()
		sent++
		mu.Unlock()
	}
	mu.Lock()
	defer mu.Unlock()
	out := fmt.Sprintf("%d distinct %d-byte keys sent to %s: %d set, %d refused", sent, cfg.MapValue, cfg.Channel, ok, sumCounts(refused))
	if len(refused) > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(refused)) {
			parts = append(parts, fmt.Sprintf("%s ×%d", k, refused[k]))
		}
		out += " (" + strings.Join(parts, ", ") + ")"
	}
	if sendErr != nil && ctx.Err() == nil && !errors.Is(sendErr, context.Canceled) {
		out += "; the connection ended: " + sendErr.Error()
	}
	return out, nil
}

func sumCounts(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// publishCommand is a client's map publish of key to channel.
func publishCommand(channel, key string, data []byte) *protocol.Command {
	return &protocol.Command{Publish: &protocol.PublishRequest{Channel: channel, Type: publishTypeMap, Key: key, Data: data}}
}

// publishTypeMap is PublishRequest.type of a map publish.
const publishTypeMap = 1
