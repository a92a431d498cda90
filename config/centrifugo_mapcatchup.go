package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/heraldhq/herald/hub"
)

// centrifugoCatchUpTimeout is Centrifugo's map.subscribe_catch_up_timeout
// when it is zero (centrifuge v0.40.1 client_map.go:1698-1701,
// isMapCatchUpExpired); a negative one is no bound there.
const centrifugoCatchUpTimeout = "5s"

// mapCatchUpTimeout maps a namespace's map.subscribe_catch_up_timeout,
// whose zero is Centrifugo's 5 s and negative no bound, to Herald's key of
// the same name, whose zero is no bound (hub/mapcatchup.go).
func mapCatchUpTimeout(m *cfMapper, c cfCtx, v any) {
	if msg := centrifugoDuration(v); msg != "" {
		m.refuse(c.path, msg)
		return
	}
	s := strings.TrimSpace(fmt.Sprint(v))
	var d time.Duration
	if s != "" && s != "0" {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			m.refuse(c.path, fmt.Sprintf("%q: want a duration, such as \"10s\"", s))
			return
		}
	}
	if d < 0 {
		return
	}
	if d == 0 {
		s = centrifugoCatchUpTimeout
	}
	root, key, _ := m.heraldTarget(c)
	// Only a map namespace has the option in Herald; Centrifugo does not
	// read it in another (its defaultconfig sets it in every one). Its
	// subscription_type is known once the namespace is read.
	m.after = append(m.after, func() {
		if isMapType(hub.SubscriptionType(fmt.Sprint(root["subscription_type"]))) {
			setKey(root, key, s)
		}
	})
}
