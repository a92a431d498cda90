package hub

import (
	"context"
	"errors"
	"net/textproto"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/hub/internal/access"
	"github.com/heraldhq/herald/protocol"
)

// credentials is who a connect command authenticated, and what comes with it.
type credentials struct {
	ConnectReply
	subOptions map[string]auth.SubOptions
	// tokenID and tokenIssuedAt are the connection token's jti and iat,
	// which revocation checks (none for a connect handler's answer).
	tokenID       string
	tokenIssuedAt int64
}

// handleConnect authenticates the client, replies, and makes its
// server-side subscriptions.
func (c *Client) handleConnect(ctx context.Context, id uint32, req *protocol.ConnectRequest) error {
	h := c.hub
	cred, err := c.authenticate(ctx, req)
	if err != nil {
		return err
	}
	now := time.Now()
	if cred.ExpireAt > 0 && cred.ExpireAt <= now.Unix() {
		return newError(protocol.ErrorExpired)
	}
	tok := access.Token{User: cred.User, ID: cred.tokenID, IssuedAt: cred.tokenIssuedAt}
	if v := h.access.CheckConnection(tok, now); v != access.Allowed {
		c.logger().Info("connect refused: token revoked or user blocked", "user", cred.User, "verdict", v)
		return accessRefusal(v)
	}
	if cred.User != "" && c.rateLimited(ctx, "connect", "", "", cred.User) {
		c.logger().Info("connect refused: over the user's rate limit", "user", cred.User)
		return rateRefusal()
	}
	if err := c.enforceSingleConnection(ctx, cred.User); err != nil {
		return err
	}
	channels, err := c.serverSideChannels(cred, req)
	if err != nil {
		return err
	}
	if len(channels) > h.client.ChannelLimit {
		return newDisconnect(protocol.DisconnectChannelLimit)
	}

	if lim := h.client.ConnectionLimit; lim > 0 && h.NumClients() >= lim {
		c.logger().Info("node connection limit reached", "limit", lim)
		return newDisconnect(protocol.DisconnectConnectionLimit)
	}
	if lim := h.client.UserConnectionLimit; lim > 0 && cred.User != "" && h.users.count(cred.User) >= lim {
		c.logger().Info("user connection limit reached", "user", cred.User, "limit", lim)
		return newDisconnect(protocol.DisconnectConnectionLimit)
	}
	c.mu.Lock()
	if c.state != stateConnecting {
		c.mu.Unlock()
		return newDisconnect(protocol.DisconnectBadRequest)
	}
	c.state = stateConnected
	c.user = cred.User
	c.info = cred.Info
	c.meta = cred.Meta
	c.connectedAt = now.UnixMilli()
	c.setTokenLocked(tok)
	c.setCapsLocked(cred.Caps)
	c.keepConnectHeadersLocked(req.Headers)
	c.noCompaction = !routesByID(c.proto, req.Name)
	exp := newExpiry(cred.ExpireAt, cred.ServerSideRefresh)
	c.expiry = exp
	c.staleAt = 0
	c.nextPing = now.Add(firstPingDelay(h.client.PingInterval)).UnixNano()
	c.resetTimerLocked(now)
	c.mu.Unlock()
	h.users.add(cred.User, c)
	h.clients.Add(1)
	h.unpend(c)
	if h.traces.active() {
		h.traceClient(c, TraceConnect, "", 0, "")
	}

	res := &protocol.ConnectResult{
		Client:  c.id,
		Version: h.cfg.Version,
		Data:    cred.Data,
		Ping:    uint32(h.client.PingInterval / time.Second),
		// A unidirectional client cannot answer pings.
		Pong: !c.conn.Unidirectional,
		Flag: connectFlags(req.Flag),
	}
	if c.conn.Session != "" {
		res.Session, res.Node = c.conn.Session, h.nodeID
	}
	res.Expires, res.Ttl = exp.ttl(now)
	if h.client.ConnectIncludeServerTime {
		res.Time = now.UnixMilli()
	}

	// Server-side subscriptions: made now, answered inside the connect
	// reply, their held-back publications released after it.
	var pending []*subscription
	for _, ch := range channels {
		subReq := &protocol.SubscribeRequest{Channel: ch}
		if r := req.Subs[ch]; r != nil {
			subReq.Recover, subReq.Offset, subReq.Epoch = r.Recover, r.Offset, r.Epoch
		}
		s, sres, err := c.subscribeServerSide(ctx, subReq, cred.subOptions[ch])
		if err == nil && c.resumedByCaps(cred, req, s) {
			// A resumed subscription only a cap allowed goes with the cap
			// (capabilities.go).
			c.mu.Lock()
			s.viaCaps = true
			c.mu.Unlock()
		}
		if err != nil {
			var d *Disconnect
			if !errors.As(err, &d) {
				c.logger().Error("server-side subscription", "channel", ch, "error", err)
				d = newDisconnect(protocol.DisconnectServerError)
			}
			return d
		}
		if res.Subs == nil {
			res.Subs = make(map[string]*protocol.SubscribeResult, len(channels))
		}
		res.Subs[ch] = sres
		pending = append(pending, s)
	}
	reserved, err := c.admitConnectReply(res, pending)
	if err != nil {
		return err
	}
	c.queueAdmittedReply(&protocol.Reply{Id: id, Connect: res}, reserved)
	for _, s := range pending {
		c.finishSubscribe(ctx, s)
	}
	if fn := h.cfg.Handlers.OnConnect; fn != nil {
		fn(c)
	}
	return nil
}

// admitConnectReply takes the publications that server-side subscriptions
// recovered into the connect reply (a uni_sse stream on a channel with
// cache recovery, say) from the node's write queue budget (admitReply). A
// reply refused leaves the subscriptions and closes the connection: a
// unidirectional client with the disconnect of error 111 (3008 unless
// transformed), a bidirectional one with 3013 (too many requests), both
// of which make clients reconnect later.
func (c *Client) admitConnectReply(res *protocol.ConnectResult, pending []*subscription) (int, error) {
	n := 0
	for _, sr := range res.Subs {
		n += publicationsSize(sr.Publications)
	}
	reserved, e := c.hub.admitReply(n)
	if e == nil {
		return reserved, nil
	}
	for _, s := range pending {
		c.leaveChannel(s)
	}
	if c.conn.Unidirectional {
		return 0, e
	}
	return 0, newDisconnect(protocol.DisconnectTooManyRequests)
}

// authenticate decides who the client is: the application's OnConnecting
// handler when there is one, else the connection token, else anonymous
// access when the configuration allows it.
func (c *Client) authenticate(ctx context.Context, req *protocol.ConnectRequest) (credentials, error) {
	h := c.hub
	if cr := c.conn.Credentials; cr != nil {
		return credentials{ConnectReply: *cr, subOptions: cr.Subs}, nil
	}
	if fn := h.cfg.Handlers.OnConnecting; fn != nil {
		r, err := fn(ctx, ConnectEvent{
			ClientID: c.id, RemoteAddr: c.conn.RemoteAddr, Token: req.Token, Data: req.Data,
			Name: req.Name, Version: req.Version, Headers: req.Headers,
			Transport: c.conn.Transport, Protocol: c.proto, Header: c.conn.Header,
		})
		if !errors.Is(err, ErrUseDefault) {
			if err != nil {
				return credentials{}, err
			}
			return credentials{ConnectReply: r, subOptions: r.Subs}, nil
		}
	}
	if req.Token != "" {
		if h.cfg.Tokens == nil {
			c.logger().Info("connection token refused: no token key configured")
			return credentials{}, newDisconnect(protocol.DisconnectInvalidToken)
		}
		tok, err := h.cfg.Tokens.VerifyConnectToken(req.Token)
		if err != nil {
			if errors.Is(err, auth.ErrTokenExpired) {
				return credentials{}, newError(protocol.ErrorTokenExpired)
			}
			c.logger().Info("invalid connection token", "error", err)
			if d := invalidCapsDisconnect(err); d != nil {
				return credentials{}, d
			}
			return credentials{}, newDisconnect(protocol.DisconnectInvalidToken)
		}
		if tok.User == "" && h.client.DisallowAnonymousConnectionTokens {
			return credentials{}, newDisconnect(protocol.DisconnectPermissionDenied)
		}
		if h.client.Insecure {
			// As the reference: insecure connections never expire.
			tok.ExpireAt = 0
		}
		return credentials{
			// The token's meta is the connection's, as Centrifugo's (CEL
			// expressions read it: channelcel.go).
			ConnectReply: ConnectReply{User: tok.User, ExpireAt: tok.ExpireAt, Info: tok.Info, Channels: tokenChannels(tok), Meta: tok.Meta, Caps: tok.Caps},
			subOptions:   tok.Subs,
			tokenID:      tok.ID, tokenIssuedAt: tok.IssuedAt,
		}, nil
	}
	if name := h.client.UserIDHTTPHeader; name != "" {
		// As Centrifugo v6.9.1 (middleware/user_header_auth.go): the
		// user a trusted proxy set, when no token or handler decided.
		if vs := c.conn.Header[textproto.CanonicalMIMEHeaderKey(name)]; len(vs) > 0 && vs[0] != "" {
			return credentials{ConnectReply: ConnectReply{User: vs[0]}}, nil
		}
	}
	if h.client.AllowAnonymousConnectWithoutToken || h.client.Insecure {
		return credentials{}, nil
	}
	c.logger().Info("connect without credentials: send a token, or enable client.allow_anonymous_connect_without_token")
	return credentials{}, badRequest("connect without a token, and anonymous connections are not allowed")
}

// serverSideChannels lists the channels the server subscribes the client
// to at connect: those its credentials name, and those the client asks to
// resume (ConnectRequest.subs) when it could subscribe to them itself
// without a token. Credential channels must exist; requested ones that do
// not qualify are ignored, as the reference server does.
func (c *Client) serverSideChannels(cred credentials, req *protocol.ConnectRequest) ([]string, error) {
	h := c.hub
	seen := make(map[string]bool)
	var out []string
	add := func(ch string) { seen[ch] = true; out = append(out, ch) }
	if ch := h.personalChannel(cred.User); ch != "" {
		if _, e := h.channels.resolve(ch); e != nil {
			return nil, e
		}
		add(ch)
	}
	for _, ch := range cred.Channels {
		if seen[ch] {
			continue
		}
		if e := h.channels.checkLength(ch); e != nil {
			return nil, e
		}
		if _, e := h.channels.resolve(ch); e != nil {
			return nil, e
		}
		add(ch)
	}
	for ch := range cred.subOptions {
		if !seen[ch] {
			if _, e := h.channels.resolve(ch); e != nil {
				return nil, e
			}
			add(ch)
		}
	}
	for ch := range req.Subs {
		if seen[ch] || h.channels.perm.Private(ch) || h.channels.checkLength(ch) != nil {
			continue
		}
		r, e := h.channels.resolve(ch)
		if e != nil {
			if e.Code == protocol.ErrorUnknownChannel {
				return nil, newDisconnect(protocol.DisconnectBadRequest)
			}
			continue
		}
		if subscribePermitted(r, ch, cred.User) || cred.Caps.Allows(auth.OpSubscribe, ch) {
			add(ch)
		}
	}
	return out, nil
}

// tokenChannels are the channels claim, which Centrifugo ignores when the
// token has a subs claim.
func tokenChannels(tok auth.ConnectToken) []string {
	if len(tok.Subs) > 0 {
		return nil
	}
	return tok.Channels
}

// Connect starts a unidirectional connection with the connect request the
// client sent when it opened it. The reply goes out through the transport
// like any other (the transport writes it as a connect push); a refused
// connect closes the connection, since the client cannot retry on it.
func (c *Client) Connect(req *protocol.ConnectRequest) {
	c.mu.Lock()
	if c.state != stateConnecting || c.running || len(c.tasks) > 0 {
		c.mu.Unlock()
		return
	}
	start := c.queueTaskLocked(task{cmd: &protocol.Command{Id: 1, Connect: req}})
	c.mu.Unlock()
	if start {
		go c.runCommands()
	}
}
