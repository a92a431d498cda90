package protocol

// AppendJSONString appends b as a JSON string (quoted and escaped, invalid
// UTF-8 replaced by U+FFFD). Delta compression needs it: over the JSON
// protocol a delta subscription's publication data travels as a JSON string
// holding the payload or the fossil delta, not as embedded JSON.
func AppendJSONString(dst, b []byte) []byte {
	return appendString(dst, string(b))
}
