package config

import (
	"net"
	"reflect"
	"strconv"

	"github.com/heraldhq/herald/api/grpcapi"
	"github.com/heraldhq/herald/transport/tlsconf"
)

// GRPCAPIConfig is the gRPC server API (package api/grpcapi): Centrifugo's
// api.proto service on a port of its own, with Centrifugo v6's keys. Its
// options are grpcapi.Config's own, with their names, defaults and docs;
// the fields here are the server's wiring.
type GRPCAPIConfig struct {
	Enabled        bool   `yaml:"enabled" doc:"serve the gRPC server API: Centrifugo's 'api.proto' service ('centrifugal.centrifugo.api.CentrifugoApi'), so that clients generated from Centrifugo's file work unchanged; see [api.md](api.md#grpc-api)"`
	Address        string `yaml:"address" default:"127.0.0.1" doc:"the address (host or IP) the gRPC API listens on. Loopback by default, as the API is for your backends: set a private interface's address, or '0.0.0.0' (or empty) for every interface, to serve other hosts. Centrifugo's default is every interface"`
	Port           int    `yaml:"port" default:"10000" doc:"the port the gRPC API listens on; '0': a free port the system picks (for tests)"`
	grpcapi.Config `yaml:",inline"`
	// TLS of the gRPC API listener, with the same options as the main
	// one; plaintext without cert_file. The server loads it into
	// grpcapi.Config.TLS.
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
	g := c.GRPCAPIConfig.Config
	g.Insecure = c.HTTPAPI.Insecure && g.Key == ""
	g.API = c.HTTPAPI.API()
	return g
}

// grpcAPIProblems checks the grpc_api section when it is enabled.
func (c Config) grpcAPIProblems() Problems {
	g := c.GRPCAPIConfig
	var ps Problems
	bad := func(key, msg string) { ps = append(ps, Problem{Key: "grpc_api." + key, Message: msg}) }
	ps = append(ps, hubProblems(g.Config.Validate(), reflect.TypeOf(g), "grpc_api")...)
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
