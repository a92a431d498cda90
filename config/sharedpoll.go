package config

import (
	"fmt"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/proxy"
)

// Shared poll channels in the file: the top-level shared_poll section
// (hub.SharedPollConfig, the signing keys) and each shared_poll
// namespace's refresh proxy, named by its shared_poll.proxy_name.

// sharedPollProxies adds each shared_poll namespace's refresh proxy to
// opts and reports whether there is one.
func (c Config) sharedPollProxies(opts *proxy.Config) bool {
	opts.SharedPollRefresh = map[string]string{}
	for name, o := range c.sharedPollNamespaces() {
		if o.SharedPoll.ProxyName != "" {
			opts.SharedPollRefresh[name] = o.SharedPoll.ProxyName
		}
	}
	return len(opts.SharedPollRefresh) > 0
}

// sharedPollNamespaces maps the name of each shared_poll namespace ("" for
// channels without namespace) to its options.
func (c Config) sharedPollNamespaces() map[string]hub.NamespaceOptions {
	out := map[string]hub.NamespaceOptions{}
	if o := c.Channel.WithoutNamespace.NamespaceOptions; o.SubscriptionType == hub.SubscriptionSharedPoll {
		out[""] = o
	}
	for _, ns := range c.Channel.Namespaces {
		if ns.SubscriptionType == hub.SubscriptionSharedPoll {
			out[ns.Name] = ns.NamespaceOptions
		}
	}
	return out
}

// sharedPollProblems: a shared_poll namespace needs the signing key and a
// refresh proxy that exists (as Centrifugo 6.9.1's
// internal/config/validate.go requires).
func (c Config) sharedPollProblems(proxyNames map[string]bool, bad func(key, format string, args ...any)) {
	for key, o := range c.namespaces() {
		if o.SubscriptionType != hub.SubscriptionSharedPoll {
			continue
		}
		if c.SharedPoll.HMACSecretKey == "" {
			bad("shared_poll.hmac_secret_key", "required: %s has subscription_type shared_poll, whose clients track keys signed with it", key)
		}
		switch name := o.SharedPoll.ProxyName; {
		case name == "":
			bad(key+".shared_poll.proxy_name", "required with subscription_type shared_poll: the proxy (in proxies) the node polls for the keys' data")
		case !proxyNames[name]:
			bad(key+".shared_poll.proxy_name", "%s", fmt.Sprintf("unknown proxy %q (define it under proxies)", name))
		}
	}
}
