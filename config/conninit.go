package config

// InitConfig is Centrifugo's connection init endpoint (v6.9.1
// internal/configtypes/types.go ConnInit, internal/conninit): a GET on the
// main listener that answers 200 with '{}', for a client to open its
// HTTP/2 connection before the WebSocket upgrade, or for a load balancer's
// health check on the public port.
type InitConfig struct {
	Enabled       bool   `yaml:"enabled" doc:"serve Centrifugo's connection init endpoint at 'init.handler_prefix' on the main listener (also with 'internal.address'): 'GET' answers '200' with the body '{}', other methods '405', as Centrifugo's 'init.enabled'"`
	HandlerPrefix string `yaml:"handler_prefix" default:"/connection/init" doc:"the path of the connection init endpoint"`
}
