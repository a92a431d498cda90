package api

import (
	"encoding/base64"
	"encoding/json"

	"github.com/heraldhq/herald/hub"
)

// Result bodies. Zero fields are left out except those Centrifugo always
// writes (and cent's models require): ClientInfo user and client, the
// presence map, presence stats counts, the history's publications, epoch
// and offset, the nodes' identity and counts, and the channels map.

type emptyResult struct{}

type publishResult struct {
	Offset uint64 `json:"offset,omitempty"`
	Epoch  string `json:"epoch,omitempty"`
}

// publishResponse is one channel's outcome in a broadcast.
type publishResponse struct {
	Error  *Error         `json:"error,omitempty"`
	Result *publishResult `json:"result,omitempty"`
}

type broadcastResult struct {
	Responses []publishResponse `json:"responses"`
}

type clientInfo struct {
	User     string  `json:"user"`
	Client   string  `json:"client"`
	ConnInfo rawJSON `json:"conn_info,omitempty"`
	ChanInfo rawJSON `json:"chan_info,omitempty"`
}

type presenceResult struct {
	Presence map[string]clientInfo `json:"presence"`
}

type presenceStatsResult struct {
	NumClients uint32 `json:"num_clients"`
	NumUsers   uint32 `json:"num_users"`
}

type publication struct {
	Data   rawJSON           `json:"data"`
	Info   *clientInfo       `json:"info,omitempty"`
	Offset uint64            `json:"offset,omitempty"`
	Tags   map[string]string `json:"tags,omitempty"`
}

type historyResult struct {
	Publications []publication `json:"publications"`
	Epoch        string        `json:"epoch"`
	Offset       uint64        `json:"offset"`
}

type channelInfo struct {
	NumClients uint32 `json:"num_clients"`
}

type channelsResult struct {
	Channels map[string]channelInfo `json:"channels"`
	// Partial marks an answer without some nodes (MissingNodes) that did
	// not answer in time; Herald's extension of the reference's result.
	Partial      bool     `json:"partial,omitempty"`
	MissingNodes []string `json:"missing_nodes,omitempty"`
}

type connectionsResult struct {
	Connections []hub.ConnectionInfo `json:"connections"`
	// NextCursor, when not empty, asks for the next page.
	NextCursor   string   `json:"next_cursor,omitempty"`
	Partial      bool     `json:"partial,omitempty"`
	MissingNodes []string `json:"missing_nodes,omitempty"`
}

type nodeResult struct {
	UID         string `json:"uid"`
	Name        string `json:"name"`
	Version     string `json:"version"`
	NumClients  uint32 `json:"num_clients"`
	NumUsers    uint32 `json:"num_users"`
	NumChannels uint32 `json:"num_channels"`
	Uptime      uint32 `json:"uptime,omitempty"`
	NumSubs     uint32 `json:"num_subs"`
}

type infoResult struct {
	Nodes []nodeResult `json:"nodes"`
}

// errorReply is a batch reply that holds only its error. The replies
// with results are of the type the method table makes (method.go).
type errorReply struct {
	Error *Error `json:"error"`
}

// rawJSON is a payload stored as bytes: JSON is embedded as it is, and
// anything else (binary published with b64data) is written as a base64
// string, so one binary entry cannot fail a whole history or presence
// answer. Empty is null.
type rawJSON []byte

// MarshalJSON implements json.Marshaler.
func (r rawJSON) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("null"), nil
	}
	if json.Valid(r) {
		return r, nil
	}
	out := make([]byte, 0, base64.StdEncoding.EncodedLen(len(r))+2)
	out = append(out, '"')
	out = base64.StdEncoding.AppendEncode(out, r)
	return append(out, '"'), nil
}
