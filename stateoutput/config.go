package stateoutput

import (
	"errors"
	"fmt"
	"strings"

	"github.com/heraldhq/herald/internal/optionerr"
)

// Config is one output: its name, its type, and the section of that type.
type Config struct {
	Name string `yaml:"name" defaultdoc:"required" doc:"the output's name, unique: errors and logs name it"`
	// Type is one of kinds' types; the matching section below is used.
	Type        string            `yaml:"type" defaultdoc:"required" doc:"'postgresql' (a table), 'nats' (a subject), 'redis_stream' (a stream) or 'kafka' (a topic); the section of that name configures it"`
	Postgres    PostgresConfig    `yaml:"postgresql"`
	NATS        NATSConfig        `yaml:"nats"`
	RedisStream RedisStreamConfig `yaml:"redis_stream"`
	Kafka       KafkaConfig       `yaml:"kafka"`
}

// The types of output.
const (
	TypePostgres    = "postgresql"
	TypeNATS        = "nats"
	TypeRedisStream = "redis_stream"
	TypeKafka       = "kafka"
)

// kind is one type of output: the section of Config that configures it,
// how that section is checked, and the Output it opens. A new type is one
// row of kinds.
type kind struct {
	typ      string
	field    string // the section's Go field, for optionerr names
	validate func() error
	open     func() (Output, error)
}

// kinds lists every type of output, bound to c's sections.
func kinds(c Config) []kind {
	return []kind{
		{TypePostgres, "Postgres", c.Postgres.Validate, func() (Output, error) { return newPostgres(c.Postgres) }},
		{TypeNATS, "NATS", c.NATS.Validate, func() (Output, error) { return newNATS(c.NATS) }},
		{TypeRedisStream, "RedisStream", c.RedisStream.Validate, func() (Output, error) { return newRedisStream(c.RedisStream) }},
		{TypeKafka, "Kafka", c.Kafka.Validate, func() (Output, error) { return newKafka(c.Kafka) }},
	}
}

// kindOf returns the kind of c.Type.
func kindOf(c Config) (kind, bool) {
	for _, k := range kinds(c) {
		if k.typ == c.Type {
			return k, true
		}
	}
	return kind{}, false
}

func unknownType(t string) error {
	var names []string
	for _, k := range kinds(Config{}) {
		names = append(names, fmt.Sprintf("%q", k.typ))
	}
	return &optionerr.Error{Field: "Type", Message: fmt.Sprintf("%q: want %s", t, strings.Join(names, ", "))}
}

// Validate reports every problem of c, each an *optionerr.Error naming
// the Go field ("Postgres.DSN"), as Open would refuse it. Only the
// section of c.Type is checked.
func (c Config) Validate() error {
	var errs []error
	if c.Name == "" {
		errs = append(errs, &optionerr.Error{Field: "Name", Message: "required"})
	}
	if k, ok := kindOf(c); ok {
		errs = append(errs, optionerr.Prefix(k.field, k.validate()))
	} else {
		errs = append(errs, unknownType(c.Type))
	}
	return errors.Join(errs...)
}

// ValidateAll checks every output of cfgs and that their names are
// unique; each problem's Field starts at the item ("[1].Postgres.DSN").
func ValidateAll(cfgs []Config) error {
	var errs []error
	names := make(map[string]bool, len(cfgs))
	for i, c := range cfgs {
		item := fmt.Sprintf("[%d]", i)
		if c.Name != "" && names[c.Name] {
			errs = append(errs, &optionerr.Error{Field: item + ".Name", Message: fmt.Sprintf("%q is used twice", c.Name)})
		}
		names[c.Name] = true
		errs = append(errs, optionerr.Prefix(item, c.Validate()))
	}
	return errors.Join(errs...)
}
