package hub

// Connection features: the client lists those it supports as bits of
// ConnectRequest.flag (field 7) and the server answers with the subset it
// enabled in ConnectResult.flag (field 12), so that a client assumes none
// the server did not confirm (centrifugal/protocol v0.23.1 client.proto).
// The one bit defined there, 1 << 0, is dictionary compression: a
// per-profile compression dictionary in ConnectResult.dict (field 13) and
// a codec marker before every later frame. Herald does not implement it:
// no SDK release asks for it (centrifuge-js 5.7.1, centrifuge-go v0.12.1
// and its newest commit, centrifuge-python 0.7.0 send no connection flag;
// only unreleased dictionary_compression branches of centrifuge-js and
// centrifuge-go do), and Centrifugo 6.9.1 does not serve it. So every bit
// a client sets is answered unset, and its frames stay as they are;
// ConnectRequest.profile (9) and dict (8) are read past.
const supportedConnectFlags int64 = 0

// connectFlags is the ConnectResult.flag for a client that asked for
// requested: the features both sides have.
func connectFlags(requested int64) int64 { return requested & supportedConnectFlags }
