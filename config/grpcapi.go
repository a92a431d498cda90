package config

import (
	"net"
	"strconv"

	"github.com/heraldhq/herald/api/grpcapi"
	"github.com/heraldhq/herald/transport/tlsconf"
)

// GRPCAPIConfig is the gRPC server API (package api/grpcapi): Centrifugo's
// api.proto service on a port of its own, with Centrifugo v6's keys.
type GRPCAPIConfig struct {
	Enabled               bool   `yaml:"enabled" doc:"serve the gRPC server API: Centrifugo's 'api.proto' service ('centrifugal.centrifugo.api.CentrifugoApi'), so that clients generated from Centrifugo's file work unchanged; see [api.md](api.md#grpc-api)"`
	Address               string `yaml:"address" defaultdoc:"every interface" doc:"the address (host or IP) the gRPC API listens on; empty: every interface"`
	Port                  int    `yaml:"port" default:"10000" doc:"the port the gRPC API listens on; '0': a free port the system picks (for tests)"`
	Key                   string `yaml:"key" doc:"the API key callers send as the metadata 'authorization: apikey KEY'; required with 'grpc_api.enabled' unless 'http_api.insecure' is on (Herald serves no unauthenticated gRPC API, where Centrifugo would)"`
	ErrorMode             string `yaml:"error_mode" doc:"'transport': a response's error as a gRPC status (100 INTERNAL, 102 and 104 NOT_FOUND, 107 and 108 INVALID_ARGUMENT, 112 OUT_OF_RANGE, 113 ALREADY_EXISTS) instead of inside the response with OK; a call can ask for it with the metadata 'x-centrifugo-error-mode: transport'"`
	Reflection            bool   `yaml:"reflection" doc:"serve the gRPC reflection service, so that tools such as grpcurl list and call the methods without 'api.proto'; it needs the key like every method"`
	MaxReceiveMessageSize int    `yaml:"max_receive_message_size" default:"4194304" doc:"largest request message in bytes; a larger one is refused with the gRPC status RESOURCE_EXHAUSTED. '0' means the default (4 MiB)"`
	// TLS of the gRPC API listener, with the same options as the main
	// one; plaintext without cert_file.
	TLS tlsconf.Config `yaml:"tls"`
}

// ListenAddress is where the gRPC API listens, host:port.
func (c GRPCAPIConfig) ListenAddress() string {
	return net.JoinHostPort(c.Address, strconv.Itoa(c.Port))
}

// GRPCAPI is the grpc_api section as package api/grpcapi takes it, with
// the HTTP API's method limits, without TLS (the server loads the files)
// and without a Logger.
func (c Config) GRPCAPI() grpcapi.Config {
	return grpcapi.Config{
		Key: c.GRPCAPIConfig.Key, Insecure: c.HTTPAPI.Insecure && c.GRPCAPIConfig.Key == "",
		MaxReceiveMessageSize: c.GRPCAPIConfig.MaxReceiveMessageSize, API: c.HTTPAPI.API(),
		ErrorMode: c.GRPCAPIConfig.ErrorMode, Reflection: c.GRPCAPIConfig.Reflection,
	}
}

// grpcAPIProblems checks the grpc_api section when it is enabled.
func (c Config) grpcAPIProblems() Problems {
	g := c.GRPCAPIConfig
	var ps Problems
	bad := func(key, msg string) { ps = append(ps, Problem{Key: "grpc_api." + key, Message: msg}) }
	if g.MaxReceiveMessageSize < 0 {
		bad("max_receive_message_size", strconv.Itoa(g.MaxReceiveMessageSize)+": must not be negative (0 means the default, 4194304)")
	}
	switch g.ErrorMode {
	case "", grpcapi.ErrorModeTransport:
	default:
		bad("error_mode", strconv.Quote(g.ErrorMode)+": want empty or 'transport'")
	}
	ps = append(ps, tlsOptionProblems("grpc_api.tls", g.TLS.Validate())...)
	if !g.Enabled {
		return ps
	}
	if g.Key == "" && !c.HTTPAPI.Insecure {
		bad("key", "required with grpc_api.enabled: callers send it as the metadata 'authorization: apikey KEY' (or set http_api.insecure for development)")
	}
	if g.Port < 0 || g.Port > 65535 {
		bad("port", strconv.Itoa(g.Port)+": want 1 to 65535 (or 0 for a free port)")
	}
	return ps
}
