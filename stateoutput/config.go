package stateoutput

import (
	"errors"
	"fmt"

	"github.com/heraldhq/herald/internal/kinds"
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

// kindTable lists every type of output, bound to c's sections: a new
// type is one row.
func kindTable(c Config) []kinds.Kind[Output] {
	return []kinds.Kind[Output]{
		{Type: TypePostgres, Field: "Postgres", Validate: c.Postgres.Validate, Open: func() (Output, error) { return newPostgres(c.Postgres) }},
		{Type: TypeNATS, Field: "NATS", Validate: c.NATS.Validate, Open: func() (Output, error) { return newNATS(c.NATS) }},
		{Type: TypeRedisStream, Field: "RedisStream", Validate: c.RedisStream.Validate, Open: func() (Output, error) { return newRedisStream(c.RedisStream) }},
		{Type: TypeKafka, Field: "Kafka", Validate: c.Kafka.Validate, Open: func() (Output, error) { return newKafka(c.Kafka) }},
	}
}

// Validate reports every problem of c, each an *optionerr.Error naming
// the Go field ("Postgres.DSN"), as Open would refuse it. Only the
// section of c.Type is checked.
func (c Config) Validate() error {
	var errs []error
	if c.Name == "" {
		errs = append(errs, &optionerr.Error{Field: "Name", Message: "required"})
	}
	errs = append(errs, kinds.Validate(kindTable(c), c.Type))
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
