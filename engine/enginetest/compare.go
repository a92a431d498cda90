package enginetest

import (
	"bytes"
	"fmt"
	"maps"
	"strconv"

	"github.com/heraldhq/herald/engine"
)

// A networked engine decodes what it carries, so nil and empty byte slices
// and maps are treated as equal throughout.

// pubDiff describes how got differs from want in the fields a publisher
// sets (Data, Info, Tags, ExceptClient, Key, Removed, Delta), or returns "".
func pubDiff(want, got *engine.Publication) string {
	switch {
	case got == nil:
		return "publication is nil"
	case !bytes.Equal(want.Data, got.Data):
		return fmt.Sprintf("data %s, want %s", abbrev(got.Data), abbrev(want.Data))
	case !sameInfo(want.Info, got.Info):
		return fmt.Sprintf("info %s, want %s", infoString(got.Info), infoString(want.Info))
	case !maps.Equal(want.Tags, got.Tags):
		return fmt.Sprintf("tags %v, want %v", got.Tags, want.Tags)
	case want.ExceptClient != got.ExceptClient:
		return fmt.Sprintf("except client %q, want %q", got.ExceptClient, want.ExceptClient)
	case want.Key != got.Key || want.Removed != got.Removed:
		return fmt.Sprintf("key %q removed %v, want %q removed %v", got.Key, got.Removed, want.Key, want.Removed)
	case want.Delta != got.Delta:
		return fmt.Sprintf("delta %v, want %v", got.Delta, want.Delta)
	}
	return ""
}

func sameInfo(a, b *engine.ClientInfo) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.User == b.User && a.Client == b.Client &&
		bytes.Equal(a.ConnInfo, b.ConnInfo) && bytes.Equal(a.ChanInfo, b.ChanInfo)
}

func infoString(i *engine.ClientInfo) string {
	if i == nil {
		return "nil"
	}
	return fmt.Sprintf("{User:%q Client:%q ConnInfo:%s ChanInfo:%s}", i.User, i.Client, abbrev(i.ConnInfo), abbrev(i.ChanInfo))
}

// abbrev keeps failure messages short for large payloads.
func abbrev(b []byte) string {
	if len(b) > 64 {
		return fmt.Sprintf("%q... (%d bytes)", b[:64], len(b))
	}
	return strconv.Quote(string(b))
}

// offsets lists the publications' offsets.
func offsets(pubs []*engine.Publication) []uint64 {
	out := make([]uint64, len(pubs))
	for i, p := range pubs {
		out[i] = p.Offset
	}
	return out
}

// seq returns the offsets from..to inclusive, descending when from > to.
func seq(from, to uint64) []uint64 {
	var out []uint64
	for o := from; ; {
		out = append(out, o)
		if o == to {
			return out
		}
		if from < to {
			o++
		} else {
			o--
		}
	}
}

// numbered is the payload the history tests publish as offset n.
func numbered(n uint64) []byte { return []byte(`{"n":` + strconv.FormatUint(n, 10) + `}`) }
