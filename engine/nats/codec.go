package nats

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/heraldhq/herald/engine/internal/wire"
)

// What travels through NATS: one kind byte, then
//
//	'p' Publication  publication
//	'j' ClientInfo   join
//	'l' ClientInfo   leave
//	'c' data         control message
//	'f' Fragment     part of a message larger than the server's max_payload
//
// Publications and ClientInfos are encoded by package wire, as in the
// Redis engine. A fragment is protobuf too (written with protowire;
// unknown fields are skipped, so fields can be added later):
//
//	Fragment = 1: origin string, 2: id uint64, 3: index uint64, 4: count uint64, 5: chunk bytes
const (
	msgPub      = 'p'
	msgJoin     = 'j'
	msgLeave    = 'l'
	msgControl  = 'c'
	msgFragment = 'f'
)

const (
	fragOrigin protowire.Number = 1
	fragID     protowire.Number = 2
	fragIndex  protowire.Number = 3
	fragCount  protowire.Number = 4
	fragChunk  protowire.Number = 5
)

var errEmpty = errors.New("empty message")

// fragment is one decoded part of a large message.
type fragment struct {
	origin       string
	id           uint64
	index, count uint64
	chunk        []byte
}

func appendFragment(dst []byte, f fragment) []byte {
	dst = append(dst, msgFragment)
	dst = protowire.AppendTag(dst, fragOrigin, protowire.BytesType)
	dst = protowire.AppendString(dst, f.origin)
	dst = protowire.AppendTag(dst, fragID, protowire.VarintType)
	dst = protowire.AppendVarint(dst, f.id)
	dst = protowire.AppendTag(dst, fragIndex, protowire.VarintType)
	dst = protowire.AppendVarint(dst, f.index)
	dst = protowire.AppendTag(dst, fragCount, protowire.VarintType)
	dst = protowire.AppendVarint(dst, f.count)
	dst = protowire.AppendTag(dst, fragChunk, protowire.BytesType)
	return protowire.AppendBytes(dst, f.chunk)
}

// decodeFragment decodes a fragment; its chunk shares b's memory.
func decodeFragment(b []byte) (fragment, error) {
	var fr fragment
	err := wire.EachField(b, func(f wire.Field) error {
		switch f.Num {
		case fragOrigin:
			fr.origin = string(f.Bytes)
		case fragID:
			fr.id = f.Varint
		case fragIndex:
			fr.index = f.Varint
		case fragCount:
			fr.count = f.Varint
		case fragChunk:
			fr.chunk = f.Bytes
		}
		return nil
	})
	if err != nil {
		return fragment{}, fmt.Errorf("fragment: %w", err)
	}
	if fr.count == 0 || fr.index >= fr.count {
		return fragment{}, fmt.Errorf("fragment %d of %d", fr.index, fr.count)
	}
	return fr, nil
}
