package config

import (
	"fmt"
	"reflect"

	"github.com/heraldhq/herald/consumer"
)

// ConsumerConfig is one entry of consumers: consumer.Config, whose fields
// carry the keys (Centrifugo v6's; max_retries, retry_min_backoff,
// retry_max_backoff and the dead-letter keys are Herald's), their
// defaults and docs, and enabled, which only the file has.
type ConsumerConfig struct {
	Enabled         bool `yaml:"enabled" doc:"run this consumer; a disabled one is still checked"`
	consumer.Config `yaml:",inline"`
}

// Consumers returns the enabled consumers for consumer.NewGroup.
func (c Config) Consumers() []consumer.Config {
	var out []consumer.Config
	for _, cc := range c.ConsumerList {
		if cc.Enabled {
			out = append(out, cc.Config)
		}
	}
	return out
}

// consumerProblems checks every consumer, enabled or not, as
// consumer.NewGroup would on start.
func (c Config) consumerProblems() Problems {
	var ps Problems
	names := map[string]bool{}
	for i, cc := range c.ConsumerList {
		key := fmt.Sprintf("consumers[%d]", i)
		if cc.Name != "" && names[cc.Name] {
			ps = append(ps, Problem{Key: key + ".name", Message: fmt.Sprintf("%q is used twice", cc.Name)})
		}
		names[cc.Name] = true
		ps = append(ps, hubProblems(cc.Validate(), reflect.TypeOf(cc), key)...)
	}
	return ps
}
