package tlsconf

import (
	"github.com/heraldhq/herald/internal/optionerr"
	"github.com/heraldhq/herald/internal/tlsfiles"
)

// pemItem is one piece of PEM a listener needs (its certificate, its key,
// the client CA), given as a file, which Files reads again when it
// changes, or inline, which it never needs to read again. Validate
// refuses both at once.
type pemItem struct{ tlsfiles.PEM }

func (c Config) cert() pemItem {
	return pemItem{tlsfiles.PEM{FileField: "CertFile", File: c.CertFile, InlineField: "CertPEM", Inline: c.CertPEM}}
}

func (c Config) key() pemItem {
	return pemItem{tlsfiles.PEM{FileField: "KeyFile", File: c.KeyFile, InlineField: "KeyPEM", Inline: c.KeyPEM}}
}

func (c Config) clientCA() pemItem {
	return pemItem{tlsfiles.PEM{FileField: "ClientCAFile", File: c.ClientCAFile, InlineField: "ClientCAPEM", Inline: c.ClientCAPEM}}
}

// name is how messages name the item: its file, or the option of an
// inline one.
func (p pemItem) name() string {
	if p.Inline != "" {
		return p.InlineField
	}
	return p.File
}

// read is the item's PEM; the error names its option.
func (p pemItem) read() ([]byte, error) {
	data, err := p.Read()
	if err != nil {
		return nil, &optionerr.Error{Field: p.FileField, Message: err.Error()}
	}
	return data, nil
}
