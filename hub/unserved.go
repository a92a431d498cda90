package hub

import "github.com/heraldhq/herald/protocol"

// Subscription types (SubscribeRequest.type, client.proto): 0 is a stream
// subscription; 1–3 are map subscriptions (map, map_clients, map_users)
// and 4 a shared poll subscription, each allowed only in a namespace of
// that subscription_type in the reference. Publication types
// (PublishRequest.type): 0 a stream publication, 1 a map publication.
const (
	subscriptionTypeStream = 0
	publishTypeStream      = 0
)

// checkSubscriptionType refuses what this node does not serve as asked,
// rather than taking it for a stream subscription:
//   - a non-stream type gets error 103, the reference's answer where the
//     namespace's subscription_type is not the one asked for. Shared poll
//     (type 4) is among them: Herald does not build it (see
//     docs/protocol.md, "Subscription types");
//   - the map paging fields (phase, cursor, limit, asc) on a stream
//     subscription get error 107: they belong to another type.
func (c *Client) checkSubscriptionType(ch string, req *protocol.SubscribeRequest) error {
	if req.Type != subscriptionTypeStream {
		c.logger().Info("subscription type not served", "channel", ch, "type", req.Type)
		return newError(protocol.ErrorPermissionDenied)
	}
	if req.Phase != 0 || req.Cursor != "" || req.Limit != 0 || req.Asc {
		c.logger().Info("map paging fields in a stream subscription", "channel", ch)
		return newError(protocol.ErrorBadRequest)
	}
	return nil
}

// checkPublishType is checkSubscriptionType for publish: a map
// publication (type 1) or another type is error 103 where the namespace
// does not serve it, and a key or a removal on a stream publication is
// error 107 rather than a plain publication of the data.
func (c *Client) checkPublishType(req *protocol.PublishRequest) error {
	if req.Type != publishTypeStream {
		c.logger().Info("publication type not served", "channel", req.Channel, "type", req.Type)
		return newError(protocol.ErrorPermissionDenied)
	}
	if req.Key != "" || req.Removed {
		c.logger().Info("map key or removal in a stream publication", "channel", req.Channel)
		return newError(protocol.ErrorBadRequest)
	}
	return nil
}
