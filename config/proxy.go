package config

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/proxy"
)

// ProxyConfig is the configuration of the proxy to the application's
// backend (docs/proxy.md): the named endpoints at the top level, the RPC
// section, and per event a proxy name (client.proxy, and subscribe_proxy,
// publish_proxy and sub_refresh_proxy in the namespaces).
type ProxyConfig struct {
	Proxies          []ProxyEndpointConfig `yaml:"proxies" doc:"the backend endpoints of the proxy ([proxy.md](proxy.md)), a list with the keys below"`
	ProxyMaxInFlight int                   `yaml:"proxy_max_in_flight" default:"1000" doc:"proxy calls in flight on this node, across all proxies; over it a call is answered with error 111 at once (-1: no bound)"`
	// RPC routes client rpc commands to proxies.
	RPC RPCConfig `yaml:"rpc"`
}

// ProxyEndpointConfig is one entry of proxies: proxy.Endpoint, tagged
// there, its TLS files included (proxy.New reads them).
type ProxyEndpointConfig = proxy.Endpoint

// ClientProxyConfig is client.proxy: the proxies of the client-wide events.
type ClientProxyConfig struct {
	Connect string `yaml:"connect" doc:"the proxy that authenticates connections that send no token"`
	Refresh string `yaml:"refresh" doc:"the proxy that renews connections the connect proxy authenticated with an 'expire_at', when they expire (and answers refresh commands without a token); without it they are closed with 3005 at expiry"`
}

// RPCConfig is the rpc section.
type RPCConfig struct {
	Proxy      string         `yaml:"proxy" doc:"the proxy that answers rpc methods without a namespace"`
	Namespaces []RPCNamespace `yaml:"namespaces" doc:"a list of RPC namespaces ('ns:method'), each with 'name' and 'proxy'; a method in a namespace not listed gets error 104"`
	// NamespaceBoundary is Centrifugo's rpc.namespace_boundary.
	NamespaceBoundary string `yaml:"namespace_boundary" defaultdoc:"':'" doc:"what separates an RPC method's namespace from its name ('ns:method'); the first occurrence counts"`
	// Ping is Centrifugo's rpc.ping: a built-in method (hub.RPCPing).
	Ping RPCPing `yaml:"ping"`
}

// RPCPing is the rpc.ping section.
type RPCPing struct {
	Enabled bool   `yaml:"enabled" doc:"answer the rpc method 'rpc.ping.method' with an empty result, on this node, before any proxy, so a client can measure its round trip to the server"`
	Method  string `yaml:"method" default:"ping" doc:"the name of the built-in ping method"`
}

// RPCPingMethod is the built-in ping method's name, "" when it is off.
func (c RPCConfig) RPCPingMethod() string {
	switch {
	case !c.Ping.Enabled:
		return ""
	case c.Ping.Method == "":
		return "ping"
	}
	return c.Ping.Method
}

// RPCNamespace is one entry of rpc.namespaces.
type RPCNamespace struct {
	Name  string `yaml:"name" doc:"the namespace's name"`
	Proxy string `yaml:"proxy" doc:"its proxy (none: error 108)"`
}

// NamespaceProxyOptions are a channel namespace's proxies.
type NamespaceProxyOptions struct {
	SubscribeProxy  string `yaml:"subscribe_proxy" doc:"the name of a proxy (under 'proxies') that decides this namespace's subscriptions instead of the options above; see [proxy.md](proxy.md)"`
	PublishProxy    string `yaml:"publish_proxy" doc:"the proxy that decides this namespace's publications (it may rewrite the data)"`
	SubRefreshProxy string `yaml:"sub_refresh_proxy" doc:"the proxy that renews subscriptions the subscribe proxy gave an 'expire_at'"`
	// SubscribeStreamProxy is Centrifugo's subscribe_stream_proxy_name
	// (with subscribe_stream_proxy_enabled): proxy/stream.go.
	SubscribeStreamProxy string `yaml:"subscribe_stream_proxy" doc:"the name of a 'grpc://' proxy whose 'SubscribeUnidirectional' stream decides each subscription in this namespace and then feeds it publications for that subscriber only, instead of the channel's; see [proxy.md](proxy.md#subscribe-streams). Not together with 'subscribe_proxy'"`
	// SubscribeStreamBidirectional is Centrifugo v6's key of the same name.
	SubscribeStreamBidirectional bool   `yaml:"subscribe_stream_proxy_bidirectional" doc:"the streams are 'SubscribeBidirectional': a subscriber's publications to the channel go to its stream instead of the channel"`
	MapPublishProxy              string `yaml:"map_publish_proxy" doc:"the proxy that decides clients' map publish commands in a map namespace, instead of 'map.allow_publish_*' and 'map.client_key' (it may replace the key and the data); see [proxy.md](proxy.md#map-publish-and-map-remove)"`
	MapRemoveProxy               string `yaml:"map_remove_proxy" doc:"the proxy that decides clients' map remove commands, instead of 'map.allow_remove_*' and 'map.client_key' (it may replace the key)"`
}

// ProxyOptions converts the configuration for proxy.New; ok is false when
// no event uses a proxy.
func (c Config) ProxyOptions() (opts proxy.Config, ok bool) {
	opts = proxy.Config{
		Connect: c.Client.Proxy.Connect, Refresh: c.Client.Proxy.Refresh, RPC: c.RPC.Proxy,
		Subscribe: map[string]string{}, Publish: map[string]string{}, SubRefresh: map[string]string{},
		SubscribeStream: map[string]string{}, SubscribeStreamBidirectional: map[string]bool{},
		MapPublish: map[string]string{}, MapRemove: map[string]string{},
		ChannelSyntax: c.Channel.ChannelSyntax,
		RPCNamespaces: map[string]string{}, RPCNamespaceBoundary: c.RPC.NamespaceBoundary, MaxInFlight: c.ProxyMaxInFlight,
	}
	opts.Endpoints = append(opts.Endpoints, c.Proxies...)
	used := opts.Connect != "" || opts.Refresh != "" || opts.RPC != ""
	add := func(ns string, o NamespaceProxyOptions) {
		if o.SubscribeStreamBidirectional {
			opts.SubscribeStreamBidirectional[ns] = true
		}
		for _, x := range []struct {
			m    map[string]string
			name string
		}{{opts.Subscribe, o.SubscribeProxy}, {opts.Publish, o.PublishProxy}, {opts.SubRefresh, o.SubRefreshProxy},
			{opts.SubscribeStream, o.SubscribeStreamProxy}, {opts.MapPublish, o.MapPublishProxy}, {opts.MapRemove, o.MapRemoveProxy}} {
			if x.name != "" {
				x.m[ns] = x.name
				used = true
			}
		}
	}
	add("", c.Channel.WithoutNamespace.NamespaceProxyOptions)
	for _, ns := range c.Channel.Namespaces {
		add(ns.Name, ns.NamespaceProxyOptions)
	}
	for _, ns := range c.RPC.Namespaces {
		opts.RPCNamespaces[ns.Name] = ns.Proxy
		used = used || ns.Proxy != ""
	}
	opts.ChannelState = c.Channel.StateProxy
	used = used || opts.ChannelState != ""
	used = c.sharedPollProxies(&opts) || used // sharedpoll.go
	return opts, used
}

// proxyProblems checks the proxy configuration, naming each key.
func (c Config) proxyProblems() Problems {
	var ps Problems
	bad := func(key, format string, args ...any) {
		ps = append(ps, Problem{Key: key, Message: fmt.Sprintf(format, args...)})
	}
	names := make(map[string]bool, len(c.Proxies))
	grpcNames := make(map[string]bool, len(c.Proxies))
	for i, p := range c.Proxies {
		key := fmt.Sprintf("proxies[%d]", i)
		ps = append(ps, hubProblems(p.Validate(), reflect.TypeOf(p), key)...)
		if p.Name != "" && names[p.Name] {
			bad(key+".name", "%q: another proxy has this name", p.Name)
		}
		names[p.Name] = true
		grpcNames[p.Name] = strings.HasPrefix(p.URL, "grpc://")
	}
	ref := func(key, name string) {
		if name != "" && !names[name] {
			bad(key, "unknown proxy %q (define it under proxies)", name)
		}
	}
	ref("client.proxy.connect", c.Client.Proxy.Connect)
	ref("client.proxy.refresh", c.Client.Proxy.Refresh)
	ref("rpc.proxy", c.RPC.Proxy)
	rpcNames := make(map[string]bool, len(c.RPC.Namespaces))
	for i, ns := range c.RPC.Namespaces {
		key := fmt.Sprintf("rpc.namespaces[%d]", i)
		switch {
		case ns.Name == "":
			bad(key+".name", "required")
		case rpcNames[ns.Name]:
			bad(key+".name", "%q: defined twice", ns.Name)
		case hub.ChannelNamespace(ns.Name+":x") != ns.Name:
			bad(key+".name", "%q: a namespace name cannot contain ':' or start with '$'", ns.Name)
		}
		rpcNames[ns.Name] = true
		ref(key+".proxy", ns.Proxy)
	}
	nsRef := func(key string, o NamespaceProxyOptions, subscribeCheck string) {
		ref(key+".subscribe_proxy", o.SubscribeProxy)
		ref(key+".publish_proxy", o.PublishProxy)
		ref(key+".sub_refresh_proxy", o.SubRefreshProxy)
		ref(key+".subscribe_stream_proxy", o.SubscribeStreamProxy)
		if o.SubscribeStreamBidirectional && o.SubscribeStreamProxy == "" {
			bad(key+".subscribe_stream_proxy_bidirectional", "set without subscribe_stream_proxy: there is no stream")
		}
		if s := o.SubscribeStreamProxy; s != "" {
			switch {
			case names[s] && !grpcNames[s]:
				bad(key+".subscribe_stream_proxy", "proxy %q is not a grpc:// endpoint: subscribe streams are gRPC only", s)
			case o.SubscribeProxy != "":
				bad(key+".subscribe_stream_proxy", "set together with subscribe_proxy: the stream decides the subscriptions, choose one")
			case subscribeCheck != "":
				bad(key+".subscribe_stream_proxy", "set together with subscribe_check: the stream decides the subscriptions, choose one")
			}
		}
		ref(key+".map_publish_proxy", o.MapPublishProxy)
		ref(key+".map_remove_proxy", o.MapRemoveProxy)
	}
	nsRef("channel.without_namespace", c.Channel.WithoutNamespace.NamespaceProxyOptions, c.Channel.WithoutNamespace.SubscribeCheck)
	for i, ns := range c.Channel.Namespaces {
		nsRef(fmt.Sprintf("channel.namespaces[%d]", i), ns.NamespaceProxyOptions, ns.SubscribeCheck)
	}
	c.sharedPollProblems(names, bad) // sharedpoll.go
	ref("channel.state_proxy", c.Channel.StateProxy)
	if c.ProxyMaxInFlight < -1 {
		bad("proxy_max_in_flight", "%d: want a positive number, 0 for the default (%d) or -1 for no bound", c.ProxyMaxInFlight, proxy.DefaultMaxInFlight)
	}
	return ps
}
