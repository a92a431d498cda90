package config

import (
	"fmt"
	"reflect"
	"slices"
)

// Centrifugo v6 names the broker (publications, history, control) and the
// presence manager apart from the engine: 'broker' and 'presence_manager',
// each used only with 'enabled: true', each replacing that half of
// 'engine' (v6.9.1 internal/app/engine.go, configureEngines; map state is
// map_broker's, not either's). Herald's engine.type is the broker and
// engine.presence the presence store when it is another engine's
// (package engine/composite pairs them), so the two sections become
// those, with the section of the engine each names.

// brokerSection maps 'broker'; presenceManagerSection maps
// 'presence_manager'. Both are read once the whole file is, by
// separateEngines, since what they mean depends on each other and on
// engine.type.
func brokerSection(m *cfMapper, c cfCtx, _ any) {
	m.after = append(m.after, func() { m.separateEngines(c.src) })
}

func presenceManagerSection(m *cfMapper, c cfCtx, _ any) {
	if _, both := c.src["broker"]; !both {
		m.after = append(m.after, func() { m.separateEngines(c.src) })
	}
}

// engineHalf is where one half of Centrifugo's engine comes from: the
// kind, and the key of the Centrifugo section that configures it.
type engineHalf struct {
	kind, from string
}

// separateEngines writes engine.type and engine.presence, and the engine
// sections they use, from broker and presence_manager in tree.
func (m *cfMapper) separateEngines(tree map[string]any) {
	engType := "memory"
	if e, ok := tree["engine"].(map[string]any); ok {
		if s, ok := e["type"].(string); ok && s != "" {
			engType = s
		}
	}
	broker := engineHalf{engType, "engine"}
	presence := broker
	b := m.enabledSection(tree, "broker", "want a mapping: {enabled: true, type: nats, nats: {...}}")
	p := m.enabledSection(tree, "presence_manager", "want a mapping: {enabled: true, type: redis, redis: {...}}")
	if b == nil && p == nil {
		return
	}
	if b != nil {
		broker = engineHalf{sectionType(b), "broker"}
		if !slices.Contains([]string{"memory", "redis", "nats", "postgres"}, broker.kind) {
			m.refuse("broker.type", fmt.Sprintf("%q: want memory, redis, nats or postgres", broker.kind))
			return
		}
	}
	if p != nil {
		presence = engineHalf{sectionType(p), "presence_manager"}
		if !slices.Contains([]string{"memory", "redis"}, presence.kind) {
			m.refuse("presence_manager.type", fmt.Sprintf("%q: want memory or redis", presence.kind))
			return
		}
	}
	eng := ensureMap(m.out, "engine")
	eng["type"] = broker.kind
	delete(eng, "presence")
	// Memory presence beside a broker of another kind is each node's
	// own clients in Centrifugo; Herald leaves presence to the broker's
	// engine instead: the Redis and PostgreSQL engines keep presence all
	// nodes share, and with NATS, which keeps none, namespaces that turn
	// presence on are refused by name.
	if presence.kind != broker.kind && presence.kind != "memory" {
		eng["presence"] = presence.kind
	}
	m.redisFor(tree, eng, broker, presence)
	switch {
	case broker.from != "broker":
	case broker.kind == "nats":
		m.engineSection(tree, eng, "broker", "nats", "broker.nats")
	case broker.kind == "postgres":
		m.engineSection(tree, eng, "broker", "postgres", "broker.postgres")
	}
}

// redisFor fills engine.redis from the one Centrifugo section that
// configures the Redis halves among broker and presence. Herald keeps
// both halves of one engine in one Redis deployment, so two sections that
// differ are refused.
func (m *cfMapper) redisFor(tree, eng map[string]any, halves ...engineHalf) {
	from := ""
	for _, h := range halves {
		switch {
		case h.kind != "redis":
		case from == "":
			from = h.from
		case h.from != from && !reflect.DeepEqual(redisOf(tree, h.from), redisOf(tree, from)):
			m.refuse(h.from+".redis", fmt.Sprintf("Herald keeps the broker and presence in one Redis deployment: make it the same as %s.redis, or leave one of them out", from))
			return
		}
	}
	if from == "" || from == "engine" {
		return
	}
	delete(eng, "redis")
	m.engineSection(tree, eng, from, "redis", "engine.redis")
}

// engineSection walks the Centrifugo section from.name into Herald's
// engine.name, by the key table's rules under rule.
func (m *cfMapper) engineSection(tree, eng map[string]any, from, name, rule string) {
	src, _ := tree[from].(map[string]any)
	body, _ := src[name].(map[string]any)
	m.walk(body, from+"."+name, rule, ensureMap(eng, name), keyType(configType, "engine."+name), nil, nil)
}

// enabledSection is tree's section key when it is there and enabled.
func (m *cfMapper) enabledSection(tree map[string]any, key, want string) map[string]any {
	if v, ok := tree[key]; ok && v != nil {
		return m.enabledObject(cfCtx{path: key}, v, want)
	}
	return nil
}

// redisOf is the redis section of the Centrifugo section from.
func redisOf(tree map[string]any, from string) any {
	src, _ := tree[from].(map[string]any)
	return src["redis"]
}

// sectionType is the type of an enabled broker or presence manager,
// Centrifugo's default when it has none.
func sectionType(s map[string]any) string {
	if t, ok := s["type"].(string); ok && t != "" {
		return t
	}
	return "memory"
}
