package hub

import "context"

// Handlers let an application that embeds the hub take part in the
// protocol. Every handler is optional.
type Handlers struct {
	// OnConnecting authenticates a connect command. When set, it decides
	// instead of the token check: it may verify ev.Token itself, or use
	// anything else it knows. It returns a *Error to answer the connect
	// with an error, or a *Disconnect to close the connection.
	OnConnecting func(ctx context.Context, ev ConnectEvent) (ConnectReply, error)
	// OnRPC answers rpc commands. Without it, rpc answers 108 (not
	// available), as the reference server does.
	OnRPC func(ctx context.Context, c *Client, ev RPCEvent) ([]byte, error)
	// OnMessage receives send commands (asynchronous messages without a
	// reply). Without it, a send closes the connection with 3508.
	OnMessage func(c *Client, data []byte)
	// OnDisconnect is told when a connected client goes away.
	OnDisconnect func(c *Client, code uint32, reason string)
}

// ConnectEvent is a client's connect command.
type ConnectEvent struct {
	ClientID   string
	RemoteAddr string
	Token      string
	Data       []byte
	Name       string
	Version    string
	Headers    map[string]string
}

// ConnectReply is the application's verdict on a connect command.
type ConnectReply struct {
	// User is the authenticated user; empty means anonymous.
	User string
	// ExpireAt is when the connection expires, in Unix seconds; 0 never.
	ExpireAt int64
	// Info is attached to the client's presence and publications.
	Info []byte
	// Channels are server-side subscriptions made for the client.
	Channels []string
	// Data is returned to the client in the connect reply.
	Data []byte
}

// RPCEvent is a client's rpc command.
type RPCEvent struct {
	Method string
	Data   []byte
}
