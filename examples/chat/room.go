package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/hub"
)

// lobby is the chat's one room. Its namespace keeps presence and sends
// join and leave events, so pages can show who is online.
const lobby = "chat:lobby"

// Error codes of the chat's RPC methods (400–1999 are the application's).
const (
	codeBadRequest = 400
	codeNotInRoom  = 403
)

// message is what the room publishes: a user's message, or a notice from
// the server ("alice joined").
type message struct {
	Kind string `json:"kind"` // "message" or "system"
	User string `json:"user,omitempty"`
	Text string `json:"text"`
}

// whoReply answers the enter and who methods.
type whoReply struct {
	Users []string `json:"users"`
}

// room announces arrivals and departures. A user may have several pages
// open: "joined" is published when the first of them enters and "left"
// when the last one goes away.
type room struct {
	channel string
	hub     *hub.Hub
	log     *slog.Logger

	// mu serializes entering and leaving, so that the announcements are
	// published in the order the room changed.
	mu      sync.Mutex
	entered map[string]map[string]struct{} // user → ids of the clients that entered
}

func newRoom(channel string, log *slog.Logger) *room {
	return &room{channel: channel, log: log, entered: make(map[string]map[string]struct{})}
}

// enter admits a client that has subscribed to the room, announces its
// user if this is the user's first page, and returns who is online.
func (r *room) enter(ctx context.Context, c *hub.Client) (hub.RPCReply, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	// Presence is read under mu: a client that is present has not left the
	// channel yet, so its OnDisconnect (which runs after the hub removed it
	// from presence) has not run either and will find it in r.entered.
	present, err := r.hub.Presence(ctx, r.channel)
	if err != nil {
		return hub.RPCReply{}, fmt.Errorf("enter: %w", err)
	}
	if _, ok := present[c.ID()]; !ok {
		return hub.RPCReply{}, &hub.Error{Code: codeNotInRoom, Message: "subscribe to " + r.channel + " before entering"}
	}
	user := c.User()
	clients := r.entered[user]
	if clients == nil {
		clients = make(map[string]struct{})
		r.entered[user] = clients
	}
	if _, again := clients[c.ID()]; !again {
		clients[c.ID()] = struct{}{}
		if len(clients) == 1 {
			r.announce(ctx, user+" joined")
		}
	}
	return jsonReply(whoReply{Users: users(present)})
}

// leave is the hub's OnDisconnect handler: it announces the user's
// departure when its last page that entered goes away.
func (r *room) leave(c *hub.Client, _ hub.DisconnectEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	user := c.User()
	clients := r.entered[user]
	if _, ok := clients[c.ID()]; !ok {
		return
	}
	delete(clients, c.ID())
	if len(clients) > 0 {
		return
	}
	delete(r.entered, user)
	// The client is gone, so its context is too: the announcement gets
	// its own deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r.announce(ctx, user+" left")
}

// hasEntered reports whether the client entered the room.
func (r *room) hasEntered(c *hub.Client) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.entered[c.User()][c.ID()]
	return ok
}

// who lists the users online, from the channel's presence.
func (r *room) who(ctx context.Context) (hub.RPCReply, error) {
	present, err := r.hub.Presence(ctx, r.channel)
	if err != nil {
		return hub.RPCReply{}, fmt.Errorf("who: %w", err)
	}
	return jsonReply(whoReply{Users: users(present)})
}

// announce publishes a notice from the server. A lost notice is logged,
// not returned: the arrival or departure it tells of has happened anyway.
func (r *room) announce(ctx context.Context, text string) {
	if err := r.publish(ctx, message{Kind: "system", Text: text}); err != nil {
		r.log.Warn("announce", "text", text, "error", err)
	}
}

// publish sends m to every subscriber of the room, from the server.
func (r *room) publish(ctx context.Context, m message) error {
	data, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	if _, err := r.hub.Publish(ctx, r.channel, data, hub.PublishOptions{}); err != nil {
		return fmt.Errorf("publish to %s: %w", r.channel, err)
	}
	return nil
}

// users are the distinct users of a presence map, sorted.
func users(present map[string]*engine.ClientInfo) []string {
	set := make(map[string]struct{}, len(present))
	for _, info := range present {
		set[info.User] = struct{}{}
	}
	return slices.Sorted(maps.Keys(set))
}

func jsonReply(v any) (hub.RPCReply, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return hub.RPCReply{}, fmt.Errorf("encode reply: %w", err)
	}
	return hub.RPCReply{Data: data}, nil
}
