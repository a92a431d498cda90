package config

import (
	"maps"
	"slices"
	"testing"
)

// notInCentrifugoDefaults are the keys the import's table takes that
// Centrifugo 6.9.1's defaultconfig does not print, so that `centrifugo
// defaultconfig` on Herald (which prints that output as it is) does not
// print them either, with why.
var notInCentrifugoDefaults = map[string]string{
	"channel.namespaces[].client_publish_debounce_interval": "not a Centrifugo 6.9.1 option (its configtypes lack it; the centrifuge library's ClientPublishDebounceInterval): the centrifuge-js SDK's CI configuration sets it",
	"channel.proxy.state":                            "Centrifugo PRO's",
	"client.allowed_delta_types":                     "an older Centrifugo's; 6.9.1 has it per namespace (channel.without_namespace.allowed_delta_types)",
	"client.rate_limit.redis_user_command.redis":     "Centrifugo PRO's",
	"engine.redis.channel_state.num_partitions":      "Centrifugo PRO's",
	"engine.redis.channel_state.vacated_event_delay": "Centrifugo PRO's",
}

// TestCentrifugoDefaultConfigCoversKeyTable: every key of the import's
// table is in Centrifugo's complete default configuration, the one
// defaultconfig and defaultenv print (a key of a list item by the section
// that holds an item's defaults, channel.without_namespace for a
// namespace's), or is one of notInCentrifugoDefaults. A row for a key
// Centrifugo 6.9.1 does not have fails here until that list says why.
func TestCentrifugoDefaultConfigCoversKeyTable(t *testing.T) {
	tb := newCFTables()
	uncovered := map[string]bool{}
	for _, r := range centrifugoKeys() {
		if _, ok := tb.defaultOf(r.Key); ok {
			continue
		}
		if list := listOf(r.Key); list != r.Key && !tb.knowsItemKeys(r.Key) && tb.hasDefault(list) {
			continue // consumers[].x: the defaults have the list, never an item
		}
		uncovered[r.Key] = true
		if _, ok := notInCentrifugoDefaults[r.Key]; !ok {
			t.Errorf("%s: a row of the key table, not in Centrifugo %s's defaultconfig: add it to notInCentrifugoDefaults with why", r.Key, CentrifugoVersion)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(notInCentrifugoDefaults)) {
		if !uncovered[k] {
			t.Errorf("%s: in notInCentrifugoDefaults, but no row of the key table or in Centrifugo's defaults", k)
		}
	}
}
