package ssetest

import (
	"bufio"
	"strings"
)

// Event is one event as a browser's EventSource dispatches it.
type Event struct {
	Name string // "message" when the stream named none
	Data string
}

// Reader reads an event stream as the HTML standard's parser does
// ("Interpreting an event stream"): lines end at CRLF, LF or CR; a field
// is "name:value" with one optional space after the colon; data lines are
// joined with LF; an empty line dispatches the event unless its data is
// empty; comments and other fields are ignored. Herald uses it to test
// what its streams look like to a browser.
type Reader struct {
	rd *bufio.Reader
	// Fields counts the lines that were neither data, event, comment nor
	// empty: Herald's streams send none, so any is a payload that broke
	// out of its line.
	Fields int
}

// NewReader reads events from rd.
func NewReader(rd *bufio.Reader) *Reader { return &Reader{rd: rd} }

// Next returns the next dispatched event, or the read error (io.EOF at
// the end of the stream; an event not ended by an empty line is never
// dispatched, as in a browser).
func (r *Reader) Next() (Event, error) {
	var name string
	var data strings.Builder
	hasData := false
	for {
		line, err := r.line()
		if err != nil {
			return Event{}, err
		}
		if line == "" {
			if hasData {
				if name == "" {
					name = "message"
				}
				return Event{Name: name, Data: strings.TrimSuffix(data.String(), "\n")}, nil
			}
			name = ""
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			name = value
		case "data":
			data.WriteString(value)
			data.WriteByte('\n')
			hasData = true
		default:
			r.Fields++
		}
	}
}

// line reads a line ended by LF, CR or CRLF, without its end.
func (r *Reader) line() (string, error) {
	var b strings.Builder
	for {
		c, err := r.rd.ReadByte()
		if err != nil {
			return "", err
		}
		switch c {
		case '\n':
			return b.String(), nil
		case '\r':
			if next, err := r.rd.Peek(1); err == nil && next[0] == '\n' {
				_, _ = r.rd.ReadByte()
			}
			return b.String(), nil
		}
		b.WriteByte(c)
	}
}
