package hub

import (
	"errors"
	"strings"

	"github.com/heraldhq/herald/internal/optionerr"
)

// OptionError is a problem with one option of a configuration the hub was
// given. Field is the option's Go path from the struct validated, such as
// "Namespaces[2].HistorySize" for a ChannelConfig; Message says what is
// wrong, naming values and Go fields, never a file format's keys: a
// configuration layer (package config) translates Field, and the field
// names in Message, to the keys its users wrote. The API handler and the
// transports (api, transport/websocket, transport/guard) report their
// Configs' problems with the same type.
type OptionError = optionerr.Error

// OptionErrors returns every OptionError in err, which may join several.
func OptionErrors(err error) []*OptionError { return optionerr.All(err) }

// optionProblems collects OptionErrors under a common Go path prefix.
type optionProblems struct {
	errs []error
}

// add records a problem with the field at the Go path prefix+field.
func (p *optionProblems) add(prefix, field, message string) {
	p.errs = append(p.errs, &OptionError{Field: joinField(prefix, field), Message: message})
}

// err joins the problems; nil when there are none.
func (p *optionProblems) err() error { return errors.Join(p.errs...) }

func joinField(prefix, field string) string {
	if prefix == "" {
		return field
	}
	if field == "" || strings.HasPrefix(field, "[") {
		return prefix + field
	}
	return prefix + "." + field
}
