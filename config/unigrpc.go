package config

import (
	"net"
	"strconv"

	"github.com/heraldhq/herald/transport/tlsconf"
)

// UniGRPCConfig is uni_grpc, the unidirectional gRPC transport (package
// transport/unigrpc), on a port of its own, with Centrifugo v6's keys.
type UniGRPCConfig struct {
	Enabled               bool   `yaml:"enabled" doc:"serve the unidirectional gRPC transport: Centrifugo's 'unistream.proto' service ('centrifugal.centrifugo.unistream.CentrifugoUniStream', method 'Consume'), so that clients generated from Centrifugo's file work unchanged"`
	Address               string `yaml:"address" defaultdoc:"every interface" doc:"the address (host or IP) uni_grpc listens on; empty: every interface"`
	Port                  int    `yaml:"port" default:"11000" doc:"the port uni_grpc listens on"`
	MaxReceiveMessageSize int    `yaml:"max_receive_message_size" doc:"largest connect request in bytes; a larger one is refused with the gRPC status RESOURCE_EXHAUSTED. '0' means gRPC's default (4 MiB)"`
	// TLS of the uni_grpc listener, with the same options as the main
	// one; plaintext without cert_file.
	TLS tlsconf.Config `yaml:"tls"`
}

// ListenAddress is where uni_grpc listens, host:port.
func (c UniGRPCConfig) ListenAddress() string {
	return net.JoinHostPort(c.Address, strconv.Itoa(c.Port))
}

// uniGRPCProblems checks the uni_grpc section.
func (c Config) uniGRPCProblems() Problems {
	g := c.UniGRPC
	var ps Problems
	bad := func(key, msg string) { ps = append(ps, Problem{Key: "uni_grpc." + key, Message: msg}) }
	if g.MaxReceiveMessageSize < 0 {
		bad("max_receive_message_size", strconv.Itoa(g.MaxReceiveMessageSize)+": must not be negative (0 means gRPC's default, 4194304)")
	}
	ps = append(ps, tlsOptionProblems("uni_grpc.tls", g.TLS.Validate())...)
	if g.Enabled && (g.Port < 1 || g.Port > 65535) {
		bad("port", strconv.Itoa(g.Port)+": want 1 to 65535")
	}
	return ps
}
