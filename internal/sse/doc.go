// Package sse writes server-sent events (the text/event-stream format of
// the HTML standard) so that what a browser's EventSource receives is
// exactly one event per call, whatever bytes the payload holds.
//
// The format ends a line at LF, CR or CRLF, and an event at an empty
// line. A payload written into one "data:" line as it is would be split
// by any of the three: a raw CR in a publication (JSON allows it as
// whitespace between tokens) would end the event early and the rest would
// become a field the browser ignores or a second, broken event. So the
// encoder writes each line of the payload as its own "data:" line; the
// browser joins them with LF. A CR or CRLF in the payload therefore
// arrives as LF: for JSON, whose only raw line breaks are whitespace
// between tokens, the value is unchanged.
package sse
