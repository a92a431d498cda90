package api

// methodTable is the API's methods, each declared once, in the order of
// the fields of api.proto's batch Command (a batch command runs its first
// method-named field in this order), then Herald's own methods (maps,
// invalidate_state). To add a method: a row here and the function it runs
// (with its gRPC conversion, when api.proto has an rpc for it); `go
// generate ./api` rewrites the docs.
func methodTable() []method {
	return []method{
		endpoint("publish", "publish data into a channel", (*handler).publish).legacy(0).
			grpc(pb(plain(fromPBPublish), toPBPublish)).
			describe("`channel`, `data` or `b64data`, `skip_history`, `tags`", "`offset`, `epoch` (when the channel keeps history)"),
		endpoint("broadcast", "publish the same data into several channels", (*handler).broadcast).legacy(1).
			grpc(pb(plain(fromPBBroadcast), toPBBroadcast)).
			describe("`channels` (list), and the rest as publish", "`responses`: one `{result}` or `{error}` per channel"),
		endpoint("subscribe", "subscribe a user's connections to a channel", (*handler).subscribe).legacy(11).cluster().
			grpc(pbEmpty(fromPBSubscribe)).
			describe("`user` (or `client`, `session`), `channel`, `info`, `data`, `expire_at`, `recover_since` {`offset`, `epoch`}, `override` {`presence`, `join_leave`, `force_recovery`, `force_positioning`, `force_push_join_leave`: each `{\"value\": bool}`}",
				"`{}`; each of the user's connections on every node gets a subscribe push; `override` replaces the namespace's options for this subscription (an unknown option is error 107)"),
		endpoint("unsubscribe", "unsubscribe a user's connections from a channel", (*handler).unsubscribe).legacy(2).cluster().retryable().
			grpc(pbEmpty(plain(fromPBUnsubscribe))).
			describe("`user` (or `client`, `session`), `channel` (empty: every channel)", "`{}`; the connections get the unsubscribe push 2000"),
		endpoint("disconnect", "disconnect a user's connections", (*handler).disconnect).legacy(3).cluster().
			grpc(pbEmpty(plain(fromPBDisconnect))).
			describe("`user` (or `client`, `session`), `disconnect` {`code`, `reason`}, `whitelist` (client ids to spare)", "`{}`; default code 3503 \"force disconnect\""),
		endpoint("presence", "the clients subscribed to a channel", (*handler).presence).legacy(4).retryable().
			grpc(pb(plain(fromPBPresence), toPBPresence)).
			describe("`channel`", "`presence`: client id → {`client`, `user`, `conn_info`, `chan_info`}; past `http_api.max_response_size`, error 106 (use `presence_stats`, or `connections` with the channel, which pages)"),
		endpoint("presence_stats", "how many clients and users a channel has", (*handler).presenceStats).legacy(5).retryable().
			grpc(pb(plain(fromPBPresenceStats), toPBPresenceStats)).
			describe("`channel`", "`num_clients`, `num_users`"),
		endpoint("history", "a channel's publications and stream position", (*handler).history).legacy(6).retryable().
			grpc(pb(plain(fromPBHistory), toPBHistory)).
			describe("`channel`, `limit` (0: position only, -1: all), `since` {`offset`, `epoch`}, `reverse`", "`publications` [{`data`, `info`, `offset`, `tags`}], `epoch`, `offset`; publications past `http_api.max_response_size` are error 106 naming how many fit (page with `since`)"),
		endpoint("history_remove", "remove a channel's publications", (*handler).historyRemove).legacy(7).retryable().
			grpc(pbEmpty(plain(fromPBHistoryRemove))).
			describe("`channel`", "`{}`; publications go, the position stays"),
		endpoint("info", "the nodes of the cluster", (*handler).info).legacy(9).cluster().retryable().
			grpc(pb(plain(fromPBInfo), toPBInfo)).
			describe("—", "`nodes`: [{`uid`, `name`, `version`, `num_clients`, `num_users`, `num_channels`, `num_subs`, `uptime`}]"),
		endpoint("rpc", "Centrifugo's API RPC extensions: Herald has none (108)", (*handler).rpc).legacy(10).
			grpc(pbEmpty(plain(fromPBRPC))).
			describe("`method`, `params`", "error 108: Herald has no API RPC extensions"),
		endpoint("refresh", "set the expiry of a user's connections", (*handler).refresh).legacy(12).cluster().
			grpc(pbEmpty(plain(fromPBRefresh))).
			describe("`user` (or `client`, `session`), `expired`, `expire_at`, `info`", "`{}`; `expired` closes with 3005"),
		endpoint("channels", "the active channels of the cluster", (*handler).channels).legacy(8).cluster().retryable().
			grpc(pb(plain(fromPBChannels), toPBChannels)).
			describe("`pattern` (glob; `*` matches any run of characters, `:` included)", "`channels`: name → {`num_clients`}, over every node of the cluster; `partial: true` and `missing_nodes` when a node did not answer within 2 s"),
		endpoint("connections", "the live connections of the cluster", (*handler).connections).legacy(14).cluster().retryable().
			grpc(pbCustom(grpcConnections)).
			describe("`user`, `channel` (either, both or neither), `limit` (1–1000, default 100), `cursor`", "`connections`: [{`client`, `user`, `transport`, `protocol`, `node`, `connected_at` (Unix ms), `channels`, `info`, `meta`}] in client id order, over every node; `next_cursor` when another page follows (send it as `cursor`); `partial` and `missing_nodes` as for `channels`"),

		unavailableMethod("update_user_status", 15, "Centrifugo PRO's user status"),
		unavailableMethod("get_user_status", 16, "Centrifugo PRO's user status"),
		unavailableMethod("delete_user_status", 17, "Centrifugo PRO's user status"),
		unavailableMethod("block_user", 18, "Centrifugo PRO's user blocking"),
		unavailableMethod("unblock_user", 19, "Centrifugo PRO's user blocking"),
		unavailableMethod("revoke_token", 20, "Centrifugo PRO's token revocation"),
		unavailableMethod("invalidate_user_tokens", 21, "Centrifugo PRO's token revocation"),
		unavailableMethod("device_register", 22, "Centrifugo PRO's push notifications"),
		unavailableMethod("device_update", 23, "Centrifugo PRO's push notifications"),
		unavailableMethod("device_remove", 24, "Centrifugo PRO's push notifications"),
		unavailableMethod("device_list", 25, "Centrifugo PRO's push notifications"),
		unavailableMethod("device_topic_list", 26, "Centrifugo PRO's push notifications"),
		unavailableMethod("device_topic_update", 27, "Centrifugo PRO's push notifications"),
		unavailableMethod("user_topic_list", 28, "Centrifugo PRO's push notifications"),
		unavailableMethod("user_topic_update", 29, "Centrifugo PRO's push notifications"),
		unavailableMethod("send_push_notification", 30, "Centrifugo PRO's push notifications"),
		unavailableMethod("update_push_status", 31, "Centrifugo PRO's push notifications"),
		unavailableMethod("cancel_push", 32, "Centrifugo PRO's push notifications"),

		endpoint("map_publish", "set a key of a map channel", (*handler).mapPublish).
			describe("`channel` (in a map namespace), `key`, `data` or `b64data`", "`offset`, `epoch` of the change"),
		endpoint("map_remove", "remove a key of a map channel", (*handler).mapRemove).
			describe("`channel`, `key`", "`offset`, `epoch` of the change"),
		endpoint("map_read_state", "a page of a map channel's keys", (*handler).mapReadState).retryable().
			describe("`channel`, `limit` (0: the namespace's `map.default_page_size`; above `map.max_page_size`: 107), `cursor`", "`publications` [{`key`, `data`, `info`, `offset`}] in key order, `offset`, `epoch` (the stream's position at the read), `cursor` of the next page (absent after the last)"),
		endpoint("map_read_stream", "a map channel's changes", (*handler).mapReadStream).retryable().
			describe("`channel`, `limit` (0: position only, -1: up to `map.max_page_size`), `since` {`offset`, `epoch`}, `reverse`", "`publications` [{`key`, `data` or `removed: true`, `info`, `offset`}], `offset`, `epoch`"),
		endpoint("map_stats", "how many keys a map channel has", (*handler).mapStats).retryable().
			describe("`channel`", "`num_keys`"),
		endpoint("map_clear", "remove every key of a map channel", (*handler).mapClear).
			describe("`channel`", "`{}`; the keys and the stream go, and the stream starts a new epoch (subscribers read the state again at the next change)"),

		endpoint("invalidate_state", "make clients drop their cached state", (*handler).invalidateState).cluster().
			describe("`channel`, `user` (or `client`, `session`): either or both",
				"`{}`; without `channel` the user's connections on every node are closed with 3014 \"state invalidated\" (the SDKs drop the connection token and every subscription's position and state, then reconnect); with `channel` their subscriptions to it get the unsubscribe push 2502 (the SDKs drop that subscription's token, position and state, then subscribe again; a server-side subscription's connection is closed with 3014); `channel` alone does so to every subscriber of the channel. Not in Centrifugo 6.9"),
	}
}
