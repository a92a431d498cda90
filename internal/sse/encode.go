package sse

// AppendEvent appends one event to dst: an "event:" line when event is
// not empty, the payload as "data:" lines (one per line of data, split at
// LF, CR and CRLF, the line terminators the format knows), and the empty
// line that dispatches the event. event must be a name without line
// breaks (the callers' names are constants); one that holds any is cut at
// the first, so it can never inject a field.
func AppendEvent(dst []byte, event string, data []byte) []byte {
	if event != "" {
		for i := 0; i < len(event); i++ {
			if event[i] == '\n' || event[i] == '\r' {
				event = event[:i]
				break
			}
		}
		dst = append(dst, "event: "...)
		dst = append(dst, event...)
		dst = append(dst, '\n')
	}
	for {
		dst = append(dst, "data: "...)
		i := lineEnd(data)
		if i < 0 {
			dst = append(dst, data...)
			break
		}
		dst = append(dst, data[:i]...)
		dst = append(dst, '\n')
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	return append(dst, '\n', '\n')
}

// lineEnd is the index of the first LF or CR in b, or -1.
func lineEnd(b []byte) int {
	for i, c := range b {
		if c == '\n' || c == '\r' {
			return i
		}
	}
	return -1
}
