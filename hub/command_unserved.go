package hub

import "github.com/heraldhq/herald/protocol"

// checkStreamFields refuses the map paging fields (phase, cursor, limit,
// asc) on a stream subscription with error 107, rather than ignoring
// them: they belong to a map subscription. The subscription type itself
// is decided before (handleSubscribe's switch; see docs/protocol.md,
// "Subscription types and fields Herald refuses").
func (c *Client) checkStreamFields(ch string, req *protocol.SubscribeRequest) error {
	if req.Phase != 0 || req.Cursor != "" || req.Limit != 0 || req.Asc {
		c.logger().Info("map paging fields in a stream subscription", "channel", ch)
		return newError(protocol.ErrorBadRequest)
	}
	return nil
}
