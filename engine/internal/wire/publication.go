package wire

import (
	"fmt"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/heraldhq/herald/engine"
)

const (
	pubData protowire.Number = 1
	pubInfo protowire.Number = 2
	pubTag  protowire.Number = 3
	pubTime protowire.Number = 4
	// pubExcept is written only when set, so a publication without it
	// encodes as it did before the field existed.
	pubExcept protowire.Number = 5
	// pubKey and pubRemoved are a map change's (written only when set).
	pubKey     protowire.Number = 6
	pubRemoved protowire.Number = 7
	// pubDelta is Publication.Delta, written only when set: a node that
	// predates it skips the unknown field and delivers the publication in
	// full, as it did.
	pubDelta protowire.Number = 8

	tagKey   protowire.Number = 1
	tagValue protowire.Number = 2
)

func tagSize(k, v string) int {
	return sizeBytesField(tagKey, len(k)) + sizeBytesField(tagValue, len(v))
}

// AppendPublication appends the encoding of pub, without its Offset, to
// dst, growing dst at most once.
func AppendPublication(dst []byte, pub *engine.Publication) []byte {
	size := sizeBytesField(pubData, len(pub.Data)) + protowire.SizeTag(pubTime) + protowire.SizeVarint(uint64(pub.Time))
	if pub.Info != nil {
		size += sizeBytesField(pubInfo, clientInfoSize(pub.Info))
	}
	for k, v := range pub.Tags {
		size += sizeBytesField(pubTag, tagSize(k, v))
	}
	if pub.ExceptClient != "" {
		size += sizeBytesField(pubExcept, len(pub.ExceptClient))
	}
	if pub.Key != "" {
		size += sizeBytesField(pubKey, len(pub.Key))
	}
	if pub.Removed {
		size += protowire.SizeTag(pubRemoved) + 1
	}
	if pub.Delta {
		size += protowire.SizeTag(pubDelta) + 1
	}
	dst = slices.Grow(dst, size)
	dst = protowire.AppendTag(dst, pubData, protowire.BytesType)
	dst = protowire.AppendBytes(dst, pub.Data)
	if pub.Info != nil {
		dst = protowire.AppendTag(dst, pubInfo, protowire.BytesType)
		dst = protowire.AppendVarint(dst, uint64(clientInfoSize(pub.Info)))
		dst = appendClientInfo(dst, pub.Info)
	}
	for k, v := range pub.Tags {
		dst = protowire.AppendTag(dst, pubTag, protowire.BytesType)
		dst = protowire.AppendVarint(dst, uint64(tagSize(k, v)))
		dst = protowire.AppendTag(dst, tagKey, protowire.BytesType)
		dst = protowire.AppendString(dst, k)
		dst = protowire.AppendTag(dst, tagValue, protowire.BytesType)
		dst = protowire.AppendString(dst, v)
	}
	dst = protowire.AppendTag(dst, pubTime, protowire.VarintType)
	dst = protowire.AppendVarint(dst, uint64(pub.Time))
	if pub.ExceptClient != "" {
		dst = protowire.AppendTag(dst, pubExcept, protowire.BytesType)
		dst = protowire.AppendString(dst, pub.ExceptClient)
	}
	if pub.Key != "" {
		dst = protowire.AppendTag(dst, pubKey, protowire.BytesType)
		dst = protowire.AppendString(dst, pub.Key)
	}
	if pub.Removed {
		dst = protowire.AppendTag(dst, pubRemoved, protowire.VarintType)
		dst = protowire.AppendVarint(dst, 1)
	}
	if pub.Delta {
		dst = protowire.AppendTag(dst, pubDelta, protowire.VarintType)
		dst = protowire.AppendVarint(dst, 1)
	}
	return dst
}

// DecodePublication decodes what AppendPublication wrote; Offset is left
// 0 for the caller to set from its framing. Data and the info's byte
// fields share b's memory, so b must not be modified afterwards.
func DecodePublication(b []byte) (*engine.Publication, error) {
	pub := &engine.Publication{}
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return nil, fmt.Errorf("publication: %w", err)
		}
		b = rest
		switch f.Num {
		case pubData:
			pub.Data = f.Bytes
		case pubInfo:
			if pub.Info, err = DecodeClientInfo(f.Bytes); err != nil {
				return nil, fmt.Errorf("publication: %w", err)
			}
		case pubTag:
			k, v, err := decodeTag(f.Bytes)
			if err != nil {
				return nil, fmt.Errorf("publication: %w", err)
			}
			if pub.Tags == nil {
				pub.Tags = make(map[string]string)
			}
			pub.Tags[k] = v
		case pubTime:
			pub.Time = int64(f.Varint)
		case pubExcept:
			pub.ExceptClient = string(f.Bytes)
		case pubKey:
			pub.Key = string(f.Bytes)
		case pubRemoved:
			pub.Removed = f.Varint != 0
		case pubDelta:
			pub.Delta = f.Varint != 0
		}
	}
	return pub, nil
}

func decodeTag(b []byte) (k, v string, err error) {
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return "", "", fmt.Errorf("tag: %w", err)
		}
		b = rest
		switch f.Num {
		case tagKey:
			k = string(f.Bytes)
		case tagValue:
			v = string(f.Bytes)
		}
	}
	return k, v, nil
}
