package wire

import (
	"fmt"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/heraldhq/herald/engine"
)

const (
	infoUser     protowire.Number = 1
	infoClient   protowire.Number = 2
	infoConnInfo protowire.Number = 3
	infoChanInfo protowire.Number = 4
)

func clientInfoSize(info *engine.ClientInfo) int {
	return sizeBytesField(infoUser, len(info.User)) + sizeBytesField(infoClient, len(info.Client)) +
		sizeBytesField(infoConnInfo, len(info.ConnInfo)) + sizeBytesField(infoChanInfo, len(info.ChanInfo))
}

// AppendClientInfo appends the encoding of info, which must not be nil, to
// dst, growing dst at most once.
func AppendClientInfo(dst []byte, info *engine.ClientInfo) []byte {
	return appendClientInfo(slices.Grow(dst, clientInfoSize(info)), info)
}

func appendClientInfo(dst []byte, info *engine.ClientInfo) []byte {
	dst = protowire.AppendTag(dst, infoUser, protowire.BytesType)
	dst = protowire.AppendString(dst, info.User)
	dst = protowire.AppendTag(dst, infoClient, protowire.BytesType)
	dst = protowire.AppendString(dst, info.Client)
	dst = protowire.AppendTag(dst, infoConnInfo, protowire.BytesType)
	dst = protowire.AppendBytes(dst, info.ConnInfo)
	dst = protowire.AppendTag(dst, infoChanInfo, protowire.BytesType)
	return protowire.AppendBytes(dst, info.ChanInfo)
}

// DecodeClientInfo decodes what AppendClientInfo wrote. ConnInfo and
// ChanInfo share b's memory, so b must not be modified afterwards.
func DecodeClientInfo(b []byte) (*engine.ClientInfo, error) {
	info := &engine.ClientInfo{}
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return nil, fmt.Errorf("client info: %w", err)
		}
		b = rest
		switch f.Num {
		case infoUser:
			info.User = string(f.Bytes)
		case infoClient:
			info.Client = string(f.Bytes)
		case infoConnInfo:
			info.ConnInfo = f.Bytes
		case infoChanInfo:
			info.ChanInfo = f.Bytes
		}
	}
	return info, nil
}

// DecodeUser returns only the user of an encoded ClientInfo, so that
// presence statistics count users without decoding whole entries. Like
// DecodeClientInfo it takes the last user field, as protobuf readers do.
func DecodeUser(b []byte) (string, error) {
	var user []byte
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return "", fmt.Errorf("client info: %w", err)
		}
		if f.Num == infoUser {
			user = f.Bytes
		}
		b = rest
	}
	return string(user), nil
}
