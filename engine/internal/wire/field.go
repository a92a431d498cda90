package wire

import "google.golang.org/protobuf/encoding/protowire"

// Field is one decoded protobuf field: Bytes for length-delimited fields,
// Varint for varints.
type Field struct {
	Num    protowire.Number
	Bytes  []byte
	Varint uint64
}

// nextField consumes one field of b and returns it with the rest of b.
// Fields of other wire types are skipped and reported with Num 0, which
// no message uses.
func nextField(b []byte) (Field, []byte, error) {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 {
		return Field{}, nil, protowire.ParseError(n)
	}
	b = b[n:]
	switch typ {
	case protowire.BytesType:
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return Field{}, nil, protowire.ParseError(n)
		}
		return Field{Num: num, Bytes: v}, b[n:], nil
	case protowire.VarintType:
		v, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return Field{}, nil, protowire.ParseError(n)
		}
		return Field{Num: num, Varint: v}, b[n:], nil
	default:
		n := protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return Field{}, nil, protowire.ParseError(n)
		}
		return Field{}, b[n:], nil
	}
}

// EachField calls f for every field of the encoded message b, in order,
// and stops at the first error, of decoding or of f. It serves engines'
// own messages (such as NATS fragments) so that they skip unknown fields
// as this package's messages do.
func EachField(b []byte, f func(Field) error) error {
	for len(b) > 0 {
		fl, rest, err := nextField(b)
		if err != nil {
			return err
		}
		if err := f(fl); err != nil {
			return err
		}
		b = rest
	}
	return nil
}

// sizeBytesField is the encoded size of a length-delimited field of n bytes.
func sizeBytesField(num protowire.Number, n int) int {
	return protowire.SizeTag(num) + protowire.SizeBytes(n)
}
