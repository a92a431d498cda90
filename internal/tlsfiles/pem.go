package tlsfiles

import "os"

// PEM is one piece of PEM a TLS configuration needs (a certificate, its
// key, a CA), given as a file or inline as PEM text: this package's Files
// for the connections Herald makes and transport/tlsconf's Config for its
// listeners both take either, and a configuration that gives both for one
// piece is refused (Both). The fields name the options, for messages.
type PEM struct {
	FileField, File     string
	InlineField, Inline string
}

// Set reports whether the piece is given at all.
func (p PEM) Set() bool { return p.File != "" || p.Inline != "" }

// Both reports whether it is given as a file and inline at once.
func (p PEM) Both() bool { return p.File != "" && p.Inline != "" }

// Field is the option the piece was given by.
func (p PEM) Field() string {
	if p.Inline != "" {
		return p.InlineField
	}
	return p.FileField
}

// Read is the piece's PEM: the inline text, or its file's contents (the
// error is os.ReadFile's; callers say which option it belongs to).
func (p PEM) Read() ([]byte, error) {
	if p.Inline != "" {
		return []byte(p.Inline), nil
	}
	return os.ReadFile(p.File)
}
