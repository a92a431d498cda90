package tlsconf

import (
	"os"

	"github.com/heraldhq/herald/internal/optionerr"
)

// pemItem is one piece of PEM a listener needs (its certificate, its key,
// the client CA), given as a file, which Files reads again when it
// changes, or inline, which it never needs to read again. Validate
// refuses both at once.
type pemItem struct {
	fileField, file     string
	inlineField, inline string
}

func (c Config) cert() pemItem {
	return pemItem{"CertFile", c.CertFile, "CertPEM", c.CertPEM}
}

func (c Config) key() pemItem {
	return pemItem{"KeyFile", c.KeyFile, "KeyPEM", c.KeyPEM}
}

func (c Config) clientCA() pemItem {
	return pemItem{"ClientCAFile", c.ClientCAFile, "ClientCAPEM", c.ClientCAPEM}
}

func (p pemItem) set() bool { return p.file != "" || p.inline != "" }

// field is the option the item was given by, for messages about it.
func (p pemItem) field() string {
	if p.inline != "" {
		return p.inlineField
	}
	return p.fileField
}

// name is how messages name the item: its file, or the option of an
// inline one.
func (p pemItem) name() string {
	if p.inline != "" {
		return p.inlineField
	}
	return p.file
}

// read is the item's PEM; the error names its option.
func (p pemItem) read() ([]byte, error) {
	if p.inline != "" {
		return []byte(p.inline), nil
	}
	data, err := os.ReadFile(p.file)
	if err != nil {
		return nil, &optionerr.Error{Field: p.fileField, Message: err.Error()}
	}
	return data, nil
}
