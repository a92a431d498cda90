package hub

import (
	"context"
	"errors"
	"sync"
)

// Chain composes several sets of handlers into one, in the order given,
// so that an application, the proxy and the SQL checks can each decide
// the commands they know about and leave the rest to the others:
//
//	hub.Config{Handlers: hub.Chain(sqlChecks.Handlers(), proxyRouter.Handlers(), appHandlers)}
//
// Deciding handlers (OnConnecting, OnRefresh, OnSubscribe, OnSubRefresh,
// OnPublish, OnMapPublish, OnPresence, OnHistory, OnRPC, OnSend) are asked in order. A
// handler that returns ErrUseDefault (OnRPC: calls reply with it) passes
// the command on to the next one; the first other answer decides it, an
// allowance as much as a refusal (an *Error, a *Disconnect or any other
// error), and the handlers after it are not asked. When every handler
// passes, the hub decides as it does without handlers (tokens and
// namespace options). So each handler may refuse what it decides, and an
// earlier handler's answer is never overridden by a later one.
//
// Notifications (OnConnect, OnDisconnect, OnBackpressure) go to every
// handler that has one, in order.
//
// A field that no set has stays nil, and a field only one set has is that
// set's function itself, so chaining costs nothing where it composes
// nothing.
func Chain(sets ...Handlers) Handlers {
	var (
		connecting   []func(context.Context, ConnectEvent) (ConnectReply, error)
		connect      []func(*Client)
		refresh      []func(context.Context, *Client, RefreshEvent) (RefreshReply, error)
		subscribe    []func(context.Context, *Client, SubscribeEvent) (SubscribeReply, error)
		subRefresh   []func(context.Context, *Client, SubRefreshEvent) (SubRefreshReply, error)
		publish      []func(context.Context, *Client, PublishEvent) (PublishReply, error)
		mapPublish   []func(context.Context, *Client, MapPublishEvent) (MapPublishReply, error)
		rpc          []func(context.Context, *Client, RPCEvent, func(RPCReply, error))
		presence     []func(context.Context, *Client, PresenceEvent) error
		history      []func(context.Context, *Client, HistoryEvent) error
		send         []func(context.Context, *Client, SendEvent) error
		disconnect   []func(*Client, DisconnectEvent)
		backpressure []func(*Client, BackpressureEvent)
		sharedPoll   []func(context.Context, SharedPollRefreshEvent) (SharedPollRefreshReply, error)
		chanState    []func(context.Context, []ChannelStateEvent) error
	)
	for _, s := range sets {
		if s.OnConnecting != nil {
			connecting = append(connecting, s.OnConnecting)
		}
		if s.OnConnect != nil {
			connect = append(connect, s.OnConnect)
		}
		if s.OnRefresh != nil {
			refresh = append(refresh, s.OnRefresh)
		}
		if s.OnSubscribe != nil {
			subscribe = append(subscribe, s.OnSubscribe)
		}
		if s.OnSubRefresh != nil {
			subRefresh = append(subRefresh, s.OnSubRefresh)
		}
		if s.OnPublish != nil {
			publish = append(publish, s.OnPublish)
		}
		if s.OnMapPublish != nil {
			mapPublish = append(mapPublish, s.OnMapPublish)
		}
		if s.OnRPC != nil {
			rpc = append(rpc, s.OnRPC)
		}
		if s.OnPresence != nil {
			presence = append(presence, s.OnPresence)
		}
		if s.OnHistory != nil {
			history = append(history, s.OnHistory)
		}
		if s.OnSend != nil {
			send = append(send, s.OnSend)
		}
		if s.OnDisconnect != nil {
			disconnect = append(disconnect, s.OnDisconnect)
		}
		if s.OnBackpressure != nil {
			backpressure = append(backpressure, s.OnBackpressure)
		}
		if s.OnSharedPollRefresh != nil {
			sharedPoll = append(sharedPoll, s.OnSharedPollRefresh)
		}
		if s.OnChannelState != nil {
			chanState = append(chanState, s.OnChannelState)
		}
	}
	return Handlers{
		OnConnecting:   chainConnecting(connecting),
		OnConnect:      chainNotify(connect),
		OnRefresh:      chainDecision(refresh),
		OnSubscribe:    chainDecision(subscribe),
		OnSubRefresh:   chainDecision(subRefresh),
		OnPublish:      chainDecision(publish),
		OnMapPublish:   chainDecision(mapPublish),
		OnRPC:          chainRPC(rpc),
		OnPresence:     chainCheck(presence),
		OnHistory:      chainCheck(history),
		OnSend:         chainCheck(send),
		OnDisconnect:   chainNotifyEvent(disconnect),
		OnBackpressure: chainNotifyEvent(backpressure),

		OnSharedPollRefresh: chainSharedPollRefresh(sharedPoll),
		OnChannelState:      chainChannelState(chanState),
	}
}

func chainConnecting(fns []func(context.Context, ConnectEvent) (ConnectReply, error)) func(context.Context, ConnectEvent) (ConnectReply, error) {
	if len(fns) <= 1 {
		return only(fns)
	}
	return func(ctx context.Context, ev ConnectEvent) (ConnectReply, error) {
		for _, fn := range fns {
			if r, err := fn(ctx, ev); !errors.Is(err, ErrUseDefault) {
				return r, err
			}
		}
		return ConnectReply{}, ErrUseDefault
	}
}

// chainDecision asks fns in order; the first answer other than
// ErrUseDefault decides.
func chainDecision[E, R any](fns []func(context.Context, *Client, E) (R, error)) func(context.Context, *Client, E) (R, error) {
	if len(fns) <= 1 {
		return only(fns)
	}
	return func(ctx context.Context, c *Client, ev E) (R, error) {
		for _, fn := range fns {
			if r, err := fn(ctx, c, ev); !errors.Is(err, ErrUseDefault) {
				return r, err
			}
		}
		var zero R
		return zero, ErrUseDefault
	}
}

// chainCheck is chainDecision for handlers that answer only an error.
func chainCheck[E any](fns []func(context.Context, *Client, E) error) func(context.Context, *Client, E) error {
	if len(fns) <= 1 {
		return only(fns)
	}
	return func(ctx context.Context, c *Client, ev E) error {
		for _, fn := range fns {
			if err := fn(ctx, c, ev); !errors.Is(err, ErrUseDefault) {
				return err
			}
		}
		return ErrUseDefault
	}
}

// chainRPC passes a call on to the next handler when one replies
// ErrUseDefault, which may happen after it returned, on any goroutine.
func chainRPC(fns []func(context.Context, *Client, RPCEvent, func(RPCReply, error))) func(context.Context, *Client, RPCEvent, func(RPCReply, error)) {
	if len(fns) <= 1 {
		return only(fns)
	}
	return func(ctx context.Context, c *Client, ev RPCEvent, reply func(RPCReply, error)) {
		var ask func(i int)
		ask = func(i int) {
			if i == len(fns) {
				reply(RPCReply{}, ErrUseDefault)
				return
			}
			// A handler that replies twice must not ask the next one twice.
			var once sync.Once
			fns[i](ctx, c, ev, func(r RPCReply, err error) {
				once.Do(func() {
					if errors.Is(err, ErrUseDefault) {
						ask(i + 1)
						return
					}
					reply(r, err)
				})
			})
		}
		ask(0)
	}
}

func chainNotify(fns []func(*Client)) func(*Client) {
	if len(fns) <= 1 {
		return only(fns)
	}
	return func(c *Client) {
		for _, fn := range fns {
			fn(c)
		}
	}
}

func chainNotifyEvent[E any](fns []func(*Client, E)) func(*Client, E) {
	if len(fns) <= 1 {
		return only(fns)
	}
	return func(c *Client, ev E) {
		for _, fn := range fns {
			fn(c, ev)
		}
	}
}

// only is the one function of fns, or nil (the zero F) when there is none.
func only[F any](fns []F) F {
	var zero F
	if len(fns) == 0 {
		return zero
	}
	return fns[0]
}

// chainChannelState gives channel state events to every handler, in
// order; the first error stops the rest, and the events are handed over
// again later, to every handler.
func chainChannelState(fns []func(context.Context, []ChannelStateEvent) error) func(context.Context, []ChannelStateEvent) error {
	if len(fns) <= 1 {
		return only(fns)
	}
	return func(ctx context.Context, evs []ChannelStateEvent) error {
		for _, fn := range fns {
			if err := fn(ctx, evs); err != nil {
				return err
			}
		}
		return nil
	}
}
