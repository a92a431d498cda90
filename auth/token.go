package auth

// ConnectToken is the verified content of a connection JWT.
type ConnectToken struct {
	User string // sub claim; "" means anonymous
	// ExpireAt is when the connection expires, in unix seconds; 0 means never.
	// It comes from expire_at when that claim is present (expire_at 0 means
	// never), else from exp. It is not compared with the current time here.
	ExpireAt int64
	Info     []byte   // info claim as raw JSON, or b64info decoded
	Channels []string // server-side subscriptions (Centrifugo ignores them when Subs is non-empty)
	Subs     map[string]SubOptions
	Meta     []byte // meta claim as raw JSON; kept on the server only
	// ID and IssuedAt are the jti and iat claims (iat in Unix seconds, 0
	// without one), which token revocation checks.
	ID       string
	IssuedAt int64
	// Caps is the caps claim, compiled (caps.go); nil without one.
	Caps *Caps
}

// SubOptions are the per-channel options of one entry of the subs claim.
type SubOptions struct {
	Info     []byte // info as raw JSON, or b64info decoded; becomes chan_info
	Data     []byte // data as raw JSON, or b64data decoded
	Override *SubOverride
}

// SubOverride holds channel option overrides; nil fields keep the channel's
// configured value.
type SubOverride struct {
	Presence           *bool
	JoinLeave          *bool
	ForcePushJoinLeave *bool
	ForceRecovery      *bool
	ForcePositioning   *bool
}

// SubscribeToken is the verified content of a subscription JWT. Callers must
// still compare User, Channel and Client with the subscribing connection.
type SubscribeToken struct {
	User     string // sub claim
	Channel  string // channel claim, never empty
	Client   string // client claim; "" when absent
	ExpireAt int64  // subscription expiry as in ConnectToken.ExpireAt
	Info     []byte // info/b64info; becomes chan_info
	Data     []byte // data/b64data
	Override *SubOverride
	ID       string // jti claim
	IssuedAt int64  // iat claim, Unix seconds; 0 without one
	Allow    Ops    // allow claim: what the subscription may do besides receive (caps.go)
}
