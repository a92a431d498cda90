package config

import (
	"fmt"
	"reflect"

	"github.com/heraldhq/herald/internal/tlsfiles"
)

// ClientTLSFiles is the TLS of a connection Herald makes to a server it
// depends on (which CA to trust, which client certificate to show and
// which name to expect), and ClientTLS the tls section of engine.redis,
// engine.nats and a grpc:// proxy, off unless enabled. Both are
// tlsfiles', tagged there.
type (
	ClientTLSFiles = tlsfiles.Files
	ClientTLS      = tlsfiles.Client
)

// clientTLSProblems translates the problems of a client tls section at
// key (tlsfiles.Files or Client's Validate) into problems naming keys.
func clientTLSProblems(key string, err error) Problems {
	return hubProblems(err, reflect.TypeOf(tlsfiles.Client{}), key)
}

// clientTLSWarnings names each tls section that accepts any certificate.
func (c Config) clientTLSWarnings() []string {
	var w []string
	warn := func(key string) {
		w = append(w, key+".insecure_skip_verify is on: the server's certificate is not checked, so anyone on the path can pose as it; for tests only")
	}
	if c.Engine.Redis.TLS.Enabled && c.Engine.Redis.TLS.InsecureSkipVerify {
		warn("engine.redis.tls")
	}
	if c.Engine.NATS.TLS.Enabled && c.Engine.NATS.TLS.InsecureSkipVerify {
		warn("engine.nats.tls")
	}
	for i, p := range c.Proxies {
		if p.TLSFiles.InsecureSkipVerify {
			warn(fmt.Sprintf("proxies[%d].tls", i))
		}
		if p.GRPC.TLS.Enabled && p.GRPC.TLS.InsecureSkipVerify {
			warn(fmt.Sprintf("proxies[%d].grpc.tls", i))
		}
	}
	return w
}
