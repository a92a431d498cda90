package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gobwas/ws"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/protocol"
)

// attackNoRead connects cfg.Clients WebSocket clients, each with a small
// receive buffer, that subscribe to cfg.Channel recovering its whole
// history, ask for cfg.HistoryPull publications of history, and then read
// nothing until ctx ends.
func attackNoRead(ctx context.Context, cfg AttackConfig, _ func(string)) (string, error) {
	if cfg.Clients < 1 || cfg.Channel == "" {
		return "", fmt.Errorf("%w: noread needs clients and a channel", errAttackConfig)
	}
	epoch, offset, err := historyPosition(ctx, cfg)
	if err != nil {
		return "", err
	}
	var signer *auth.Signer
	if cfg.Secret != "" {
		if signer, err = auth.NewHMACSigner(cfg.Secret, "HS256"); err != nil {
			return "", fmt.Errorf("token signer: %w", err)
		}
	}
	var sent atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, cfg.Clients)
	// Dialled a few at a time, as the clients were: the node sees
	// them arrive, not one burst.
	sem := make(chan struct{}, 16)
	for i := range cfg.Clients {
		select {
		case <-ctx.Done():
		case sem <- struct{}{}:
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			nc, err := noReadClient(ctx, cfg, signer, i, epoch)
			<-sem
			if err != nil {
				errs <- err
				return
			}
			sent.Add(1)
			<-ctx.Done()
			nc.Close()
		}()
	}
	wg.Wait()
	close(errs)
	failed := len(errs)
	out := fmt.Sprintf("%d of %d clients subscribed to %s recovering from offset 0 (its top: %d) and asked a history of %d, then read nothing",
		sent.Load(), cfg.Clients, cfg.Channel, offset, cfg.HistoryPull)
	if failed > 0 {
		err = <-errs
		out += fmt.Sprintf("; %d could not: %v", failed, err)
	}
	return out, nil
}

// noReadClient dials, upgrades and sends connect, a subscribe that
// recovers from the start of the epoch, and a history call, in one frame.
func noReadClient(ctx context.Context, cfg AttackConfig, signer *auth.Signer, i int, epoch string) (net.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	d := ws.Dialer{NetDial: func(ctx context.Context, network, addr string) (net.Conn, error) {
		nd := net.Dialer{Control: setRcvBuf(cfg.RcvBuf)}
		return nd.DialContext(ctx, network, addr)
	}}
	if cfg.Format == protocol.TypeProtobuf {
		d.Protocols = []string{"centrifuge-protobuf"}
	}
	nc, br, _, err := d.Dial(dctx, cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("noread client %d: %w", i, err)
	}
	if br != nil {
		ws.PutReader(br)
	}
	connect := &protocol.ConnectRequest{Name: "herald-bench-noread"}
	if signer != nil {
		if connect.Token, err = signer.ConnectToken(auth.ConnectClaims{User: "noread-" + strconv.Itoa(i)}); err != nil {
			nc.Close()
			return nil, fmt.Errorf("mint token: %w", err)
		}
	}
	cmds := []*protocol.Command{
		{Id: 1, Connect: connect},
		{Id: 2, Subscribe: &protocol.SubscribeRequest{Channel: cfg.Channel, Recover: true, Epoch: epoch, Offset: 0, Recoverable: true, Positioned: true}},
		{Id: 3, History: &protocol.HistoryRequest{Channel: cfg.Channel, Limit: int32(cfg.HistoryPull)}},
	}
	var msg, payload []byte
	for _, c := range cmds {
		if msg, err = protocol.AppendCommand(cfg.Format, msg[:0], c); err != nil {
			nc.Close()
			return nil, err
		}
		payload = protocol.AppendMessage(cfg.Format, payload, msg)
	}
	op := ws.OpText
	if cfg.Format == protocol.TypeProtobuf {
		op = ws.OpBinary
	}
	_ = nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := nc.Write(appendClientFrame(nil, op, payload)); err != nil {
		nc.Close()
		return nil, fmt.Errorf("noread client %d: send: %w", i, err)
	}
	return nc, nil
}

// historyPosition asks the server API for channel's stream position
// (history with limit 0).
func historyPosition(ctx context.Context, cfg AttackConfig) (string, uint64, error) {
	api := NewAPIPublisher(cfg.APIURL, cfg.APIKey, 1, 10*time.Second)
	defer api.Close()
	body, _ := json.Marshal(map[string]any{"channel": cfg.Channel, "limit": 0})
	raw, err := api.post(ctx, "history", body)
	if err != nil {
		return "", 0, err
	}
	var r struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
		Result struct {
			Epoch  string `json:"epoch"`
			Offset uint64 `json:"offset"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return "", 0, fmt.Errorf("api history: %w", err)
	}
	if r.Error != nil {
		return "", 0, fmt.Errorf("api history of %s: error %d %s", cfg.Channel, r.Error.Code, r.Error.Message)
	}
	return r.Result.Epoch, r.Result.Offset, nil
}
