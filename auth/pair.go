package auth

import "github.com/prometheus/client_golang/prometheus"

// Pair verifies connection tokens with one Verifier and subscription
// tokens with another, for deployments where subscription tokens are
// signed with keys of their own (Centrifugo's client.subscription_token).
// Both may be the same Verifier.
type Pair struct {
	Connect   *Verifier
	Subscribe *Verifier
}

// VerifyConnectToken verifies with p.Connect.
func (p Pair) VerifyConnectToken(token string) (ConnectToken, error) {
	return p.Connect.VerifyConnectToken(token)
}

// VerifySubscribeToken verifies with p.Subscribe.
func (p Pair) VerifySubscribeToken(token string) (SubscribeToken, error) {
	return p.Subscribe.VerifySubscribeToken(token)
}

// Collectors are the metrics of both Verifiers, each once.
func (p Pair) Collectors() []prometheus.Collector {
	cs := p.Connect.Collectors()
	if p.Subscribe != p.Connect {
		cs = append(cs, p.Subscribe.Collectors()...)
	}
	return cs
}
