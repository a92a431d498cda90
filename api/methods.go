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
			describe("`channel`, `data` or `b64data`, `skip_history`, `tags`, `delta` (sent as a Fossil delta to the subscribers that negotiated delta, with or without the namespace's `delta_publish`)", "`offset`, `epoch` (when the channel keeps history)"),
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

		endpoint("update_user_status", "mark users active now, with a state", (*handler).updateUserStatus).legacy(15).retryable().
			grpc(pbEmpty(plain(fromPBUpdateUserStatus))).
			describe("`users` (1–1000), `state` (the application's, optional)", "`{}`; each status is kept for `client.user_status_ttl` after its last update"),
		endpoint("get_user_status", "the status of users", (*handler).getUserStatus).legacy(16).retryable().
			grpc(pb(plain(fromPBGetUserStatus), toPBGetUserStatus)).
			describe("`users` (1–1000)", "`statuses`: [{`user`, `active` (Unix seconds of the last update; 0: none), `online` (Unix seconds when a node last saw the user connected; 0 unless `client.user_status_online_interval` is set), `state`}] in the order asked"),
		endpoint("delete_user_status", "forget the status of users", (*handler).deleteUserStatus).legacy(17).retryable().
			grpc(pbEmpty(plain(fromPBDeleteUserStatus))).
			describe("`users` (1–1000)", "`{}`"),
		endpoint("block_user", "block a user: connections closed, connects refused", (*handler).blockUser).legacy(18).cluster().retryable().
			grpc(pbEmpty(plain(fromPBBlockUser))).
			describe("`user`, `expire_at` (Unix seconds; 0: until unblocked)", "`{}`; the user's connections on every node close with 3503 (reason \"user blocked\"); a connect naming the user is refused the same way"),
		endpoint("unblock_user", "unblock a user", (*handler).unblockUser).legacy(19).cluster().retryable().
			grpc(pbEmpty(plain(fromPBUnblockUser))).
			describe("`user`", "`{}`"),
		endpoint("revoke_token", "revoke a token by its jti", (*handler).revokeToken).legacy(20).cluster().retryable().
			grpc(pbEmpty(plain(fromPBRevokeToken))).
			describe("`uid` (the token's `jti`), `expire_at` (Unix seconds when the record may go: the token's `exp`; 0: kept)", "`{}`; connections holding the token close with 3005 on every node; connecting or subscribing with it is error 109"),
		endpoint("invalidate_user_tokens", "invalidate a user's tokens issued before a time", (*handler).invalidateUserTokens).legacy(21).cluster().retryable().
			grpc(pbEmpty(plain(fromPBInvalidateUserTokens))).
			describe("`user`, `issued_before` (Unix seconds, compared with `iat`; 0: now), `expire_at` (0: kept), `channel` (only that channel's subscription tokens)", "`{}`; the user's connections with older connection tokens close with 3005, or, with `channel`, the user's subscriptions to it end with 2501; tokens without `iat` are not affected"),
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

		endpoint("map_publish", "set a key of a map channel", (*handler).mapPublish).legacy(33).
			grpc(pb(plain(fromPBMapPublish), toPBMapPublish)).
			describe("`channel` (in a map namespace), `key`, `data` or `b64data`; optional `tags`, `key_mode` (`if_new`, `if_exists`), `version` and `version_epoch`, `idempotency_key`, `delta` (as publish's)", "`offset`, `epoch` of the change; `suppressed` and `suppress_reason` (`key_exists`, `key_not_found`, `version`, `idempotency`: with the first change's `offset`, `epoch`) when a condition of the request left the map unchanged"),
		endpoint("map_remove", "remove a key of a map channel", (*handler).mapRemove).legacy(34).
			grpc(pb(plain(fromPBMapRemove), toPBMapRemove)).
			describe("`channel`, `key`; optional `tags`, `idempotency_key`", "`offset`, `epoch` of the change; `suppressed` and `suppress_reason` as for `map_publish`, `key_not_found` for a key not in the state (nothing is appended; with the stream's `offset`, `epoch`)"),
		endpoint("map_read_state", "a page of a map channel's keys", (*handler).mapReadState).legacy(35).retryable().
			grpc(pb(plain(fromPBMapReadState), toPBMapReadState)).
			describe("`channel`, `limit` (0: the namespace's `map.default_page_size`; above `map.max_page_size`: 107), `cursor`; `key` to read that key alone; `revision_offset`, `revision_epoch` of an earlier page (112 when the epoch changed since)", "`entries` [{`key`, `data`, `info`, `offset`, `time`}] in key order, `offset`, `epoch` (the stream's position at the read), `cursor` of the next page (absent after the last)"),
		endpoint("map_read_stream", "a map channel's changes", (*handler).mapReadStream).legacy(36).retryable().
			grpc(pb(plain(fromPBMapReadStream), toPBMapReadStream)).
			describe("`channel`, `limit` (0: position only, -1: up to `map.max_page_size`), `since_offset` and `since_epoch` (or `since` {`offset`, `epoch`}), `reverse`", "`entries` [{`key`, `data` or `removed: true`, `info`, `offset`, `time`}], `offset`, `epoch`"),
		endpoint("map_stats", "how many keys a map channel has", (*handler).mapStats).legacy(37).retryable().
			grpc(pb(plain(fromPBMapStats), toPBMapStats)).
			describe("`channel`", "`num_keys`"),
		endpoint("map_clear", "remove every key of a map channel", (*handler).mapClear).legacy(38).
			grpc(pbEmpty(plain(fromPBMapClear))).
			describe("`channel`", "`{}`; the keys and the stream go, and the stream starts a new epoch (subscribers read the state again at the next change)"),
		endpoint("shared_poll_publish", "push a new version of a key of a shared poll channel at once", (*handler).sharedPollPublish).legacy(39).cluster().
			grpc(pbEmpty(plain(fromPBSharedPollPublish))).
			describe("`channel` (in a `shared_poll` namespace with `publish_enabled`), `key`, `data` or `b64data`, `version` (above 0), `epoch`", "`{}`; on every node, the connections tracking the key with an older version get the data"),

		endpoint("invalidate_state", "make clients drop their cached state", (*handler).invalidateState).cluster().
			describe("`channel`, `user` (or `client`, `session`): either or both",
				"`{}`; without `channel` the user's connections on every node are closed with 3014 \"state invalidated\" (the SDKs drop the connection token and every subscription's position and state, then reconnect); with `channel` their subscriptions to it get the unsubscribe push 2502 (the SDKs drop that subscription's token, position and state, then subscribe again; a server-side subscription's connection is closed with 3014); `channel` alone does so to every subscriber of the channel. Not in Centrifugo 6.9"),
	}
}
