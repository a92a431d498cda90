package postgres

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/heraldhq/herald/engine"
)

// The notification encoding. A NOTIFY payload is text shorter than 8000
// bytes, so one payload carries a header record and then as many records
// as fit:
//
//	payload = header record*
//	record  = kind field*
//	field   = length ':' bytes      (bytes that are valid UTF-8 without NUL)
//	        | length '!' base64     (anything else; length of the base64 text)
//
// Lengths are decimal byte counts. Raw fields cost no escaping, which
// matters because most payloads are JSON; the SQL functions in the schema
// build the same records. Records by kind:
//
//	'n' token                                    header, unique per payload
//	'p' channel offset epoch time ntags {key value} hasinfo [user client conninfo chaninfo] data
//	'x' the fields of 'p', then except-client      a publication with Publication.ExceptClient
//	'k' the fields of 'x', then key removed        a map change (Publication.Key, Removed '1' or '0')
//	'j' / 'l' channel user client conninfo chaninfo
//	'c' data
//	'r' channel offset epoch spill-id             a record stored in the spill table
//
// The header makes every payload unique, because PostgreSQL collapses
// identical notifications sent in one transaction.
//
// The format has no version: a node reads only the kinds it knows and
// drops the rest of a payload with an unknown one. So a publication
// without ExceptClient stays a 'p' record, byte for byte what older nodes
// and the schema's SQL functions write and read, and only one with it
// takes the newer 'x'. ExceptClient is for live delivery only: the history
// table has no column for it, so a publication read back from there (a
// gap refilled, a replay, an expired spilled record) comes without it.
//
// Publication.Delta travels the same way as ExceptClient (live delivery
// only), but as a header record with the token deltaMark just before the
// publication record it marks: every node, older ones included, skips
// header records wherever they stand, so an older node delivers the
// publication in full (as it always did) instead of dropping the payload
// as it would for a new kind. A spilled record keeps its mark in the
// spill table, since the mark is part of the record's bytes.
const (
	kindHeader  = 'n'
	kindPub     = 'p'
	kindExcept  = 'x' // decoded as kindPub
	kindMap     = 'k' // decoded as kindPub
	kindJoin    = 'j'
	kindLeave   = 'l'
	kindControl = 'c'
	kindRef     = 'r'
)

// deltaMark is the token of the header record that marks the next
// publication record as Publication.Delta. A payload's own header token is
// a hex string, a dot and a number (writer.go), or "s" and a number
// (emit_record in the schema), so it is never this.
const deltaMark = "+delta"

// maxPayload is the largest NOTIFY payload PostgreSQL accepts with default
// build settings ("must be shorter than 8000 bytes").
const maxPayload = 7999

// textSafe reports whether s can travel raw in a notification payload.
func textSafe[T ~string | ~[]byte](s T) bool {
	return utf8.ValidString(string(s)) && strings.IndexByte(string(s), 0) < 0
}

// appendField appends s as a field. raw forces the raw form, for records
// stored in the spill table, which is bytea and takes any bytes.
func appendField[T ~string | ~[]byte](dst []byte, s T, raw bool) []byte {
	if raw || textSafe(s) {
		dst = strconv.AppendInt(dst, int64(len(s)), 10)
		dst = append(dst, ':')
		return append(dst, s...)
	}
	n := base64.StdEncoding.EncodedLen(len(s))
	dst = strconv.AppendInt(dst, int64(n), 10)
	dst = append(dst, '!')
	return base64.StdEncoding.AppendEncode(dst, []byte(s))
}

func appendUintField(dst []byte, v uint64) []byte {
	var buf [20]byte
	return appendField(dst, strconv.AppendUint(buf[:0], v, 10), true)
}

func appendIntField(dst []byte, v int64) []byte {
	var buf [20]byte
	return appendField(dst, strconv.AppendInt(buf[:0], v, 10), true)
}

func appendHeader(dst []byte, token string) []byte {
	dst = append(dst, kindHeader)
	return appendField(dst, token, true)
}

// appendPub appends a publication record. pub.Offset is ignored; offset
// is the position the publication was given.
func appendPub(dst []byte, ch string, offset uint64, epoch string, pub *engine.Publication, raw bool) []byte {
	if pub.Delta {
		dst = appendHeader(dst, deltaMark)
	}
	kind := byte(kindPub)
	switch {
	case pub.Key != "":
		kind = kindMap
	case pub.ExceptClient != "":
		kind = kindExcept
	}
	dst = append(dst, kind)
	dst = appendField(dst, ch, raw)
	dst = appendUintField(dst, offset)
	dst = appendField(dst, epoch, raw)
	dst = appendIntField(dst, pub.Time)
	dst = appendIntField(dst, int64(len(pub.Tags)))
	for k, v := range pub.Tags {
		dst = appendField(dst, k, raw)
		dst = appendField(dst, v, raw)
	}
	if pub.Info == nil {
		dst = appendField(dst, "0", true)
	} else {
		dst = appendField(dst, "1", true)
		dst = appendInfo(dst, pub.Info, raw)
	}
	dst = appendField(dst, pub.Data, raw)
	if kind == kindExcept || kind == kindMap {
		dst = appendField(dst, pub.ExceptClient, raw)
	}
	if kind == kindMap {
		dst = appendField(dst, pub.Key, raw)
		removed := "0"
		if pub.Removed {
			removed = "1"
		}
		dst = appendField(dst, removed, true)
	}
	return dst
}

func appendInfo(dst []byte, info *engine.ClientInfo, raw bool) []byte {
	dst = appendField(dst, info.User, raw)
	dst = appendField(dst, info.Client, raw)
	dst = appendField(dst, info.ConnInfo, raw)
	return appendField(dst, info.ChanInfo, raw)
}

func appendJoinLeave(dst []byte, kind byte, ch string, info *engine.ClientInfo, raw bool) []byte {
	dst = append(dst, kind)
	dst = appendField(dst, ch, raw)
	return appendInfo(dst, info, raw)
}

func appendControl(dst []byte, data []byte, raw bool) []byte {
	dst = append(dst, kindControl)
	return appendField(dst, data, raw)
}

func appendRef(dst []byte, ch string, offset uint64, epoch string, id int64) []byte {
	dst = append(dst, kindRef)
	dst = appendField(dst, ch, false)
	dst = appendUintField(dst, offset)
	dst = appendField(dst, epoch, false)
	return appendIntField(dst, id)
}

// record is one decoded record. Strings and byte slices are the
// decoder's own copies except channel and epoch, which point into the
// payload: the dispatcher replaces them with strings it keeps anyway.
type record struct {
	kind    byte
	channel string
	offset  uint64
	epoch   string
	pub     *engine.Publication // kindPub
	info    *engine.ClientInfo  // kindJoin, kindLeave
	data    []byte              // kindControl
	spillID int64               // kindRef
}

var errMalformed = errors.New("malformed notification record")

// decoder reads records from a payload.
type decoder struct {
	s   string
	pos int
}

func (d *decoder) more() bool { return d.pos < len(d.s) }

// field returns the next field as it appears in the payload and whether
// it is base64.
func (d *decoder) field() (string, bool, error) {
	n := 0
	i := d.pos
	for ; i < len(d.s) && d.s[i] >= '0' && d.s[i] <= '9'; i++ {
		n = n*10 + int(d.s[i]-'0')
		if n > len(d.s) {
			return "", false, errMalformed
		}
	}
	if i == d.pos || i >= len(d.s) || (d.s[i] != ':' && d.s[i] != '!') {
		return "", false, errMalformed
	}
	b64 := d.s[i] == '!'
	start := i + 1
	if start+n > len(d.s) {
		return "", false, errMalformed
	}
	d.pos = start + n
	return d.s[start : start+n], b64, nil
}

// str returns the next field as a string that points into the payload
// when the field is raw.
func (d *decoder) str() (string, error) {
	f, b64, err := d.field()
	if err != nil || !b64 {
		return f, err
	}
	b, err := base64.StdEncoding.DecodeString(f)
	if err != nil {
		return "", fmt.Errorf("%w: %w", errMalformed, err)
	}
	return string(b), nil
}

// ownedStr is str for strings that outlive the payload.
func (d *decoder) ownedStr() (string, error) {
	f, b64, err := d.field()
	if err != nil {
		return "", err
	}
	if !b64 {
		return strings.Clone(f), nil
	}
	b, err := base64.StdEncoding.DecodeString(f)
	if err != nil {
		return "", fmt.Errorf("%w: %w", errMalformed, err)
	}
	return string(b), nil
}

// bytes returns the next field as a new slice, nil when empty.
func (d *decoder) bytes() ([]byte, error) {
	f, b64, err := d.field()
	if err != nil || len(f) == 0 {
		return nil, err
	}
	if !b64 {
		return []byte(f), nil
	}
	b, err := base64.StdEncoding.DecodeString(f)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errMalformed, err)
	}
	return b, nil
}

func (d *decoder) uint() (uint64, error) {
	f, _, err := d.field()
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(f, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", errMalformed, err)
	}
	return v, nil
}

func (d *decoder) int() (int64, error) {
	f, _, err := d.field()
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(f, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", errMalformed, err)
	}
	return v, nil
}

// next decodes the next record. Header records are skipped, but a
// deltaMark one sets Delta on the publication that follows it.
func (d *decoder) next() (record, error) {
	delta := false
	for d.more() && d.s[d.pos] == kindHeader {
		d.pos++
		token, _, err := d.field()
		if err != nil {
			return record{}, err
		}
		delta = delta || token == deltaMark
	}
	if !d.more() {
		return record{}, errMalformed
	}
	r := record{kind: d.s[d.pos]}
	d.pos++
	var err error
	switch r.kind {
	case kindPub:
		err = d.pub(&r)
	case kindExcept:
		if err = d.pub(&r); err == nil {
			r.pub.ExceptClient, err = d.ownedStr()
		}
	case kindMap:
		err = d.mapChange(&r)
	case kindJoin, kindLeave:
		if r.channel, err = d.str(); err == nil {
			r.info, err = d.info()
		}
	case kindControl:
		r.data, err = d.bytes()
		if err == nil && r.data == nil {
			r.data = []byte{}
		}
	case kindRef:
		err = d.ref(&r)
	default:
		return record{}, fmt.Errorf("%w: kind %q", errMalformed, r.kind)
	}
	if err != nil {
		return record{}, fmt.Errorf("record %q: %w", r.kind, err)
	}
	if r.kind == kindExcept || r.kind == kindMap {
		r.kind = kindPub // one kind of publication from here on
	}
	if delta && r.pub != nil {
		r.pub.Delta = true
	}
	return r, nil
}

func (d *decoder) pub(r *record) error {
	var err error
	if r.channel, err = d.str(); err != nil {
		return err
	}
	if r.offset, err = d.uint(); err != nil {
		return err
	}
	if r.epoch, err = d.str(); err != nil {
		return err
	}
	p := &engine.Publication{Offset: r.offset}
	if p.Time, err = d.int(); err != nil {
		return err
	}
	ntags, err := d.int()
	if err != nil {
		return err
	}
	if ntags < 0 || ntags > int64(len(d.s)) {
		return errMalformed
	}
	if ntags > 0 {
		p.Tags = make(map[string]string, ntags)
		for range ntags {
			k, err := d.ownedStr()
			if err != nil {
				return err
			}
			v, err := d.ownedStr()
			if err != nil {
				return err
			}
			p.Tags[k] = v
		}
	}
	hasInfo, _, err := d.field()
	if err != nil {
		return err
	}
	if hasInfo == "1" {
		if p.Info, err = d.info(); err != nil {
			return err
		}
	}
	if p.Data, err = d.bytes(); err != nil {
		return err
	}
	r.pub = p
	return nil
}

// mapChange decodes the fields of a kindMap record.
func (d *decoder) mapChange(r *record) error {
	err := d.pub(r)
	if err == nil {
		r.pub.ExceptClient, err = d.ownedStr()
	}
	if err == nil {
		r.pub.Key, err = d.ownedStr()
	}
	if err != nil {
		return err
	}
	removed, _, err := d.field()
	if err != nil {
		return err
	}
	if removed != "0" && removed != "1" {
		return fmt.Errorf("%w: removed %q", errMalformed, removed)
	}
	r.pub.Removed = removed == "1"
	return nil
}

func (d *decoder) info() (*engine.ClientInfo, error) {
	var info engine.ClientInfo
	var err error
	if info.User, err = d.ownedStr(); err != nil {
		return nil, err
	}
	if info.Client, err = d.ownedStr(); err != nil {
		return nil, err
	}
	if info.ConnInfo, err = d.bytes(); err != nil {
		return nil, err
	}
	if info.ChanInfo, err = d.bytes(); err != nil {
		return nil, err
	}
	return &info, nil
}

func (d *decoder) ref(r *record) error {
	var err error
	if r.channel, err = d.str(); err != nil {
		return err
	}
	if r.offset, err = d.uint(); err != nil {
		return err
	}
	if r.epoch, err = d.str(); err != nil {
		return err
	}
	r.spillID, err = d.int()
	return err
}

// decodeSpilled decodes a record read back from the spill table and gives
// it the position its reference carried.
func decodeSpilled(body []byte, ref record) (record, error) {
	d := decoder{s: string(body)}
	r, err := d.next()
	if err != nil {
		return record{}, fmt.Errorf("spilled record %d: %w", ref.spillID, err)
	}
	if r.kind == kindRef {
		return record{}, fmt.Errorf("spilled record %d: %w: reference to a reference", ref.spillID, errMalformed)
	}
	if r.kind == kindPub {
		r.channel, r.offset, r.epoch = ref.channel, ref.offset, ref.epoch
		r.pub.Offset = ref.offset
	}
	return r, nil
}
