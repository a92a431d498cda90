package server

import (
	"fmt"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/proxy"
)

// ProxyConfig is the configuration of the proxy to the application's
// backend (docs/proxy.md): the named endpoints at the top level, the RPC
// section, and per event a proxy name (client.proxy, and subscribe_proxy,
// publish_proxy and sub_refresh_proxy in the namespaces).
type ProxyConfig struct {
	// Proxies are the named backend endpoints.
	Proxies []ProxyEndpointConfig `yaml:"proxies"`
	// ProxyMaxInFlight bounds the proxy calls in flight on this node,
	// across all proxies (1000; -1 for no bound); calls over it are
	// answered with error 111 at once.
	ProxyMaxInFlight int `yaml:"proxy_max_in_flight"`
	// RPC routes client rpc commands to proxies.
	RPC RPCConfig `yaml:"rpc"`
}

// ProxyEndpointConfig is one entry of proxies (proxy.Endpoint).
type ProxyEndpointConfig struct {
	Name                  string            `yaml:"name"`
	Endpoint              string            `yaml:"endpoint"`
	Timeout               Duration          `yaml:"timeout"`
	HTTPHeaders           []string          `yaml:"http_headers"`
	StaticHTTPHeaders     map[string]string `yaml:"static_http_headers"`
	BinaryEncoding        bool              `yaml:"binary_encoding"`
	IncludeConnectionMeta bool              `yaml:"include_connection_meta"`
}

// ClientProxyConfig is client.proxy: the proxies of the client-wide events.
type ClientProxyConfig struct {
	Connect string `yaml:"connect"`
	Refresh string `yaml:"refresh"`
}

// RPCConfig is the rpc section.
type RPCConfig struct {
	// Proxy answers the methods without namespace.
	Proxy string `yaml:"proxy"`
	// Namespaces declare the method namespaces ("ns:method").
	Namespaces []RPCNamespace `yaml:"namespaces"`
}

// RPCNamespace is one entry of rpc.namespaces.
type RPCNamespace struct {
	Name  string `yaml:"name"`
	Proxy string `yaml:"proxy"`
}

// NamespaceProxyOptions are a channel namespace's proxies.
type NamespaceProxyOptions struct {
	SubscribeProxy  string `yaml:"subscribe_proxy"`
	PublishProxy    string `yaml:"publish_proxy"`
	SubRefreshProxy string `yaml:"sub_refresh_proxy"`
}

// proxyOptions converts the configuration for proxy.New; ok is false when
// no event uses a proxy.
func (c Config) proxyOptions() (opts proxy.Config, ok bool) {
	opts = proxy.Config{
		Connect: c.Client.Proxy.Connect, Refresh: c.Client.Proxy.Refresh, RPC: c.RPC.Proxy,
		Subscribe: map[string]string{}, Publish: map[string]string{}, SubRefresh: map[string]string{},
		RPCNamespaces: map[string]string{}, MaxInFlight: c.ProxyMaxInFlight,
	}
	for _, p := range c.Proxies {
		opts.Endpoints = append(opts.Endpoints, proxy.Endpoint{
			Name: p.Name, URL: p.Endpoint, Timeout: p.Timeout.D(), HTTPHeaders: p.HTTPHeaders,
			StaticHTTPHeaders: p.StaticHTTPHeaders, BinaryEncoding: p.BinaryEncoding,
			IncludeConnectionMeta: p.IncludeConnectionMeta,
		})
	}
	used := opts.Connect != "" || opts.Refresh != "" || opts.RPC != ""
	add := func(ns string, o NamespaceProxyOptions) {
		for _, x := range []struct {
			m    map[string]string
			name string
		}{{opts.Subscribe, o.SubscribeProxy}, {opts.Publish, o.PublishProxy}, {opts.SubRefresh, o.SubRefreshProxy}} {
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
	return opts, used
}

// proxyProblems checks the proxy configuration, naming each key.
func (c Config) proxyProblems() Problems {
	var ps Problems
	bad := func(key, format string, args ...any) {
		ps = append(ps, Problem{Key: key, Message: fmt.Sprintf(format, args...)})
	}
	names := make(map[string]bool, len(c.Proxies))
	for i, p := range c.Proxies {
		key := fmt.Sprintf("proxies[%d]", i)
		ep := proxy.Endpoint{Name: p.Name, URL: p.Endpoint, Timeout: p.Timeout.D(), HTTPHeaders: p.HTTPHeaders, StaticHTTPHeaders: p.StaticHTTPHeaders}
		for _, fp := range ep.Check() {
			bad(key+"."+fp.Field, "%s", fp.Message)
		}
		if p.Name != "" && names[p.Name] {
			bad(key+".name", "%q: another proxy has this name", p.Name)
		}
		names[p.Name] = true
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
	nsRef := func(key string, o NamespaceProxyOptions) {
		ref(key+".subscribe_proxy", o.SubscribeProxy)
		ref(key+".publish_proxy", o.PublishProxy)
		ref(key+".sub_refresh_proxy", o.SubRefreshProxy)
	}
	nsRef("channel.without_namespace", c.Channel.WithoutNamespace.NamespaceProxyOptions)
	for i, ns := range c.Channel.Namespaces {
		nsRef(fmt.Sprintf("channel.namespaces[%d]", i), ns.NamespaceProxyOptions)
	}
	if c.ProxyMaxInFlight < -1 {
		bad("proxy_max_in_flight", "%d: want a positive number, 0 for the default (%d) or -1 for no bound", c.ProxyMaxInFlight, proxy.DefaultMaxInFlight)
	}
	return ps
}
