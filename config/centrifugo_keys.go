package config

// The Centrifugo import is driven by one table: a row per Centrifugo v6
// key that Herald names, shapes or refuses differently from its own key of
// the same name. centrifugo_map.go walks a Centrifugo file with it,
// centrifugo_env.go reads the CENTRIFUGO_ variables with it, and
// centrifugo_docs.go prints the key map of docs/migrating-from-centrifugo.md
// from it. A key with no row whose name is a Herald key at the same place
// is copied as it is.
//
// To map a Centrifugo key: add its row here, in key order. A value that
// must change on the way (a unit, a shape, a key split in two) needs a
// converter (centrifugo_convert.go) named in the row's Convert; a rename
// needs none. TestCentrifugoKeysMatchHerald checks every row against
// Config's keys, so a row cannot name a Herald key that does not exist,
// nor refuse a key Herald has.

// cfAction is what the importer does with a Centrifugo key.
type cfAction int

const (
	// cfRename copies the value, as it is, to the Herald key of the row
	// (relative to the list item for a key with "[]").
	cfRename cfAction = iota + 1
	// cfConvert hands the value to the row's converter, which writes the
	// Herald keys of the row.
	cfConvert
	// cfDrop takes any value and writes nothing: Herald needs no setting
	// for it (Note says why).
	cfDrop
	// cfRefuse takes a value that changes nothing in Herald (off, empty,
	// Centrifugo's default, or one of Takes) and refuses any other with
	// Note, which says what to do instead.
	cfRefuse
	// cfTune takes any value of a key that tunes something Herald does
	// without a setting (a buffer size, a client timeout): one that is not
	// Centrifugo's default is named in the start-up log as not needed.
	cfTune
)

// cfConverter writes what the value v of the Centrifugo key at c means in
// Herald's tree, or reports why it cannot (m.refuse).
type cfConverter func(m *cfMapper, c cfCtx, v any)

// centrifugoKey is one row of the table.
type centrifugoKey struct {
	Key     string      // Centrifugo's key, dotted as in its config file; "[]" is any item of a list
	Herald  string      // the Herald key(s) it becomes, ", " between them ("[]" as in Key); "" for none
	Action  cfAction    // what the importer does with it
	Convert cfConverter // for cfConvert
	Note    string      // for the key map of the docs; for cfRefuse, the message of the refusal
	Takes   []string    // for cfRefuse: values besides off ones that change nothing in Herald
}

// centrifugoKeys is the table, in key order.
func centrifugoKeys() []centrifugoKey {
	return []centrifugoKey{
		{Key: "admin.enabled", Herald: "admin.ui.enabled", Action: cfRename, Note: "the admin web UI"},
		{Key: "admin.external", Herald: "admin.ui.external", Action: cfRename, Note: "with an internal listener (http_server.internal_port), the admin UI stays on the main one"},
		{Key: "admin.handler_prefix", Herald: "admin.ui.path", Action: cfConvert, Convert: adminPath, Note: "the admin UI and its API move with it; empty or '/' (Centrifugo's default, the UI at '/') becomes Herald's default, '/admin', since Herald serves other endpoints beside it"},
		{Key: "admin.insecure", Herald: "admin.ui.insecure", Action: cfRename, Note: ""},
		{Key: "admin.password", Herald: "admin.ui.password", Action: cfRename, Note: "at least 8 characters in Herald"},
		{Key: "admin.secret", Herald: "admin.ui.token_secret", Action: cfRename, Note: "the HMAC key of admin tokens; at least 16 characters in Herald"},
		{Key: "admin.web_path", Herald: "admin.ui.web_path", Action: cfRename, Note: "a directory of UI pages served instead of the built-in ones; they must be a build of Herald's UI, which talks to Herald's admin API, not Centrifugo's web app"},
		{Key: "admin.web_proxy_address", Herald: "admin.ui.web_proxy_address", Action: cfRename, Note: "the UI's pages from a development server, over web_path, as in Centrifugo"},
		{Key: "broker", Herald: "engine.type, engine.presence, engine.nats, engine.postgres, engine.redis", Action: cfConvert, Convert: brokerSection, Note: "used with 'enabled: true', as in Centrifugo: its type becomes engine.type and its redis, nats or postgres section Herald's engine section of that name; the presence store stays the engine's unless presence_manager names another (engine.presence). Herald keeps one Redis deployment: a Redis broker and Redis presence from two different sections are refused"},
		{Key: "broker.nats.dial_timeout", Action: cfTune, Note: "Herald uses the NATS client's connect timeout"},
		{Key: "broker.nats.tls", Herald: "engine.nats.tls", Action: cfConvert, Convert: clientTLS, Note: "as engine.redis.tls, for the NATS connection"},
		{Key: "broker.nats.write_timeout", Action: cfTune, Note: "Herald flushes NATS writes with its own timeout"},
		{Key: "channel.history_meta_ttl", Herald: "channel.namespaces[].history_meta_ttl", Action: cfConvert, Convert: historyMetaTTL, Note: "Herald sets it per namespace: it becomes the history_meta_ttl of channel.without_namespace and of every namespace that sets none"},
		{Key: "channel.namespace_boundary", Herald: "channel.namespace_boundary", Action: cfRename, Note: "as in Centrifugo; empty is the default, ':'"},
		{Key: "channel.namespaces[].allow_tags_filter", Herald: "channel.namespaces[].allow_tags_filter", Action: cfRename, Note: "publication tag filters of subscriptions"},
		{Key: "channel.namespaces[].client_publish_debounce_interval", Herald: "channel.namespaces[].client_publish_debounce_interval", Action: cfRename, Note: "announced to subscribers as 'publish_debounce', as in Centrifugo"},
		{Key: "channel.namespaces[].delta_publish", Herald: "channel.namespaces[].delta_publish", Action: cfRename, Note: "as in Centrifugo: publications and map changes go as Fossil deltas to the subscribers that negotiated delta; the API's per-publish 'delta' flag does the same for one publication"},
		{Key: "channel.namespaces[].force_recovery_mode", Herald: "channel.namespaces[].force_recovery_mode", Action: cfRename, Note: "'stream' or 'cache', as in Centrifugo"},
		{Key: "channel.namespaces[].map.live_transition_max_publication_limit", Herald: "channel.namespaces[].map.live_transition_max_publication_limit", Action: cfRename, Note: "as in Centrifugo: the most changes the reply that makes a map subscriber live may recover; more is error 112 (0: max_page_size; -1: no bound)"},
		{Key: "channel.namespaces[].map.publish_proxy_enabled", Herald: "channel.namespaces[].map_publish_proxy", Action: cfConvert, Convert: proxyEnabled, Note: "true: 'map_publish_proxy' names 'map.publish_proxy_name', or the proxy of channel.proxy.map_publish"},
		{Key: "channel.namespaces[].map.publish_proxy_name", Herald: "channel.namespaces[].map_publish_proxy", Action: cfConvert, Convert: proxyName, Note: "read with map.publish_proxy_enabled"},
		{Key: "channel.namespaces[].map.remove_proxy_enabled", Herald: "channel.namespaces[].map_remove_proxy", Action: cfConvert, Convert: proxyEnabled, Note: "true: 'map_remove_proxy' names 'map.remove_proxy_name', or the proxy of channel.proxy.map_remove"},
		{Key: "channel.namespaces[].map.remove_proxy_name", Herald: "channel.namespaces[].map_remove_proxy", Action: cfConvert, Convert: proxyName, Note: "read with map.remove_proxy_enabled"},
		{Key: "channel.namespaces[].map.subscribe_catch_up_timeout", Herald: "channel.namespaces[].map.subscribe_catch_up_timeout", Action: cfConvert, Convert: mapCatchUpTimeout, Note: "as in Centrifugo: a map subscriber that takes longer to go live is closed with 3008; 0 becomes Centrifugo's 5s and a negative value no bound (Herald's own zero is no bound, so a Centrifugo namespace without the key has none)"},
		{Key: "channel.namespaces[].publish_proxy_enabled", Herald: "channel.namespaces[].publish_proxy", Action: cfConvert, Convert: proxyEnabled, Note: "as subscribe_proxy_enabled"},
		{Key: "channel.namespaces[].publish_proxy_name", Herald: "channel.namespaces[].publish_proxy", Action: cfConvert, Convert: proxyName, Note: "read with publish_proxy_enabled"},
		{Key: "channel.namespaces[].shared_poll.channel_shutdown_delay", Action: cfDrop, Note: "Herald stops a shared poll channel's poller when its last subscriber on the node leaves"},
		{Key: "channel.namespaces[].shared_poll.proxy_name", Herald: "channel.namespaces[].shared_poll.proxy_name", Action: cfConvert, Convert: proxyName, Note: "read with subscription_type: empty or 'default' (and absent, as in Centrifugo) is the proxy of channel.proxy.shared_poll_refresh"},
		{Key: "channel.namespaces[].shared_poll.track_expired_extra_delay", Herald: "channel.namespaces[].shared_poll.track_expired_extra_delay", Action: cfRename, Note: "as in Centrifugo; zero is the default, 25 s"},
		{Key: "channel.namespaces[].sub_refresh_proxy_enabled", Herald: "channel.namespaces[].sub_refresh_proxy", Action: cfConvert, Convert: proxyEnabled, Note: "as subscribe_proxy_enabled"},
		{Key: "channel.namespaces[].sub_refresh_proxy_name", Herald: "channel.namespaces[].sub_refresh_proxy", Action: cfConvert, Convert: proxyName, Note: "read with sub_refresh_proxy_enabled"},
		{Key: "channel.namespaces[].subscribe_proxy_enabled", Herald: "channel.namespaces[].subscribe_proxy", Action: cfConvert, Convert: proxyEnabled, Note: "true: 'subscribe_proxy' names 'subscribe_proxy_name', or the proxy of channel.proxy.subscribe. Also under channel.without_namespace"},
		{Key: "channel.namespaces[].subscribe_proxy_name", Herald: "channel.namespaces[].subscribe_proxy", Action: cfConvert, Convert: proxyName, Note: "read with subscribe_proxy_enabled (alone it is not used, as in Centrifugo)"},
		{Key: "channel.namespaces[].subscribe_stream_proxy_bidirectional", Herald: "channel.namespaces[].subscribe_stream_proxy_bidirectional", Action: cfRename, Note: ""},
		{Key: "channel.namespaces[].subscribe_stream_proxy_enabled", Herald: "channel.namespaces[].subscribe_stream_proxy", Action: cfConvert, Convert: proxyEnabled, Note: "as subscribe_proxy_enabled"},
		{Key: "channel.namespaces[].subscribe_stream_proxy_name", Herald: "channel.namespaces[].subscribe_stream_proxy", Action: cfConvert, Convert: proxyName, Note: "read with subscribe_stream_proxy_enabled"},
		{Key: "channel.namespaces[].subscription_type", Herald: "channel.namespaces[].subscription_type, channel.namespaces[].shared_poll.proxy_name", Action: cfConvert, Convert: subscriptionType, Note: "as it is; a 'shared_poll' namespace without shared_poll.proxy_name polls the proxy of channel.proxy.shared_poll_refresh, as in Centrifugo"},
		{Key: "channel.private_prefix", Herald: "channel.private_prefix", Action: cfRename, Note: "as in Centrifugo; empty is the default, '$'"},
		{Key: "channel.proxy.map_publish", Herald: "proxies[]", Action: cfConvert, Convert: defaultProxy, Note: "becomes a proxy named 'channel.proxy.map_publish'"},
		{Key: "channel.proxy.map_remove", Herald: "proxies[]", Action: cfConvert, Convert: defaultProxy, Note: "becomes a proxy named 'channel.proxy.map_remove'"},
		{Key: "channel.proxy.publish", Herald: "proxies[]", Action: cfConvert, Convert: defaultProxy, Note: "becomes a proxy named 'channel.proxy.publish'"},
		{Key: "channel.proxy.shared_poll_refresh", Herald: "proxies[]", Action: cfConvert, Convert: defaultProxy, Note: "becomes a proxy named 'channel.proxy.shared_poll_refresh'; a shared_poll namespace names its proxy in shared_poll.proxy_name"},
		{Key: "channel.proxy.state", Herald: "proxies[], channel.state_proxy", Action: cfConvert, Convert: stateProxy, Note: "Centrifugo PRO's channel state events: becomes a proxy named 'channel.proxy.state', which channel.state_proxy names for the namespaces with state_proxy_enabled"},
		{Key: "channel.proxy.sub_refresh", Herald: "proxies[]", Action: cfConvert, Convert: defaultProxy, Note: "becomes a proxy named 'channel.proxy.sub_refresh'"},
		{Key: "channel.proxy.subscribe", Herald: "proxies[]", Action: cfConvert, Convert: defaultProxy, Note: "becomes a proxy named 'channel.proxy.subscribe', used by the namespaces that enable the subscribe proxy without naming one"},
		{Key: "channel.proxy.subscribe_stream", Herald: "proxies[]", Action: cfConvert, Convert: defaultProxy, Note: "becomes a proxy named 'channel.proxy.subscribe_stream'"},
		{Key: "channel.publication_data_format", Herald: "channel.namespaces[].publication_data_format", Action: cfConvert, Convert: publicationDataFormat, Note: "Herald sets it per namespace: it becomes the publication_data_format of channel.without_namespace and of every namespace that sets none"},
		{Key: "channel.user_boundary", Herald: "channel.user_boundary", Action: cfRename, Note: "as in Centrifugo; empty is the default, '#'"},
		{Key: "channel.user_separator", Herald: "channel.user_separator", Action: cfRename, Note: "as in Centrifugo; empty is the default, ','"},
		{Key: "channel.without_namespace", Herald: "channel.without_namespace", Action: cfConvert, Convert: withoutNamespace, Note: "the namespace options, mapped as those of channel.namespaces[]"},
		{Key: "client.allowed_delta_types", Herald: "channel.without_namespace.allowed_delta_types, channel.namespaces[].allowed_delta_types", Action: cfConvert, Convert: allowedDeltaTypes, Note: "an older Centrifugo's global key: becomes the allowed_delta_types of channel.without_namespace and of every namespace that sets none"},
		{Key: "client.allowed_origins", Herald: "websocket.allowed_origins", Action: cfRename, Note: "the browser origins allowed to connect, on every transport"},
		{Key: "client.channel_position_check_delay", Action: cfTune, Note: "Herald checks stream positions on its own schedule"},
		{Key: "client.channel_position_max_time_lag", Action: cfTune, Note: "Herald checks stream positions on its own schedule"},
		{Key: "client.connect_code_to_unidirectional_disconnect", Herald: "client.connect_code_to_unidirectional_disconnect", Action: cfRename, Note: "enabled and transforms ({code, to: {code, reason}}), as in Centrifugo"},
		{Key: "client.connection_rate_limit", Herald: "client.connection_rate_limit", Action: cfRename, Note: "node-wide, as Centrifugo counts it (a bucket of N refilled at one a second, '503' over it); websocket.ip_rate_limit limits each client address besides"},
		{Key: "client.insecure_skip_token_signature_verify", Herald: "client.insecure_skip_token_signature_verify", Action: cfRename, Note: "testing only, as in Centrifugo: claims are checked, signatures are not"},
		{Key: "client.presence_update_interval", Action: cfTune, Note: "Herald refreshes presence on its own schedule within client.presence_ttl"},
		{Key: "client.proxy.connect", Herald: "proxies[], client.proxy.connect", Action: cfConvert, Convert: clientProxy, Note: "with 'enabled: true', becomes a proxy named 'client.proxy.connect' that client.proxy.connect names; without, it is not used, as in Centrifugo"},
		{Key: "client.proxy.refresh", Herald: "proxies[], client.proxy.refresh", Action: cfConvert, Convert: clientProxy, Note: "as client.proxy.connect, named 'client.proxy.refresh'"},
		{Key: "client.rate_limit.redis_user_command.redis", Herald: "client.rate_limit.redis_user_command.redis", Action: cfConvert, Convert: rateLimitRedis, Note: "Centrifugo PRO's Redis for redis_user_command: 'reuse_from_engine: true' keeps the buckets in the engine, as Herald does when its key names no server (in the engine's Redis or PostgreSQL); a Redis of its own, with the keys of engine.redis converted as those are, becomes Herald's key of the same name (one deployment, not shards), on any engine"},
		{Key: "client.subscription_token", Herald: "client.subscription_token", Action: cfConvert, Convert: enabledRename, Note: "with 'enabled: true', subscription tokens are verified with its keys instead of those of client.token, as in Centrifugo"},
		{Key: "client.subscription_token.hmac_previous_secret_key_valid_until", Herald: "client.subscription_token.hmac_previous_secret_key_valid_until", Action: cfConvert, Convert: unixValidUntil, Note: "as client.token.hmac_previous_secret_key_valid_until"},
		{Key: "client.subscription_token.insecure_skip_jwks_endpoint_safety_check", Action: cfDrop, Note: "as client.token.insecure_skip_jwks_endpoint_safety_check"},
		{Key: "client.token.audience_regex", Herald: "client.token.audience_regex", Action: cfRename, Note: ""},
		{Key: "client.token.hmac_previous_secret_key_valid_until", Herald: "client.token.hmac_previous_secret_key_valid_until", Action: cfConvert, Convert: unixValidUntil, Note: "a Unix time in seconds in Centrifugo (0: no limit), an RFC 3339 time in Herald"},
		{Key: "client.token.insecure_skip_jwks_endpoint_safety_check", Action: cfDrop, Note: "Herald makes no such check of the JWKS endpoint's address"},
		{Key: "client.token.issuer_regex", Herald: "client.token.issuer_regex", Action: cfRename, Note: ""},
		{Key: "client.token.jwks_public_endpoint", Herald: "client.token.jwks_public_endpoint", Action: cfRename, Note: "tokens are verified against the keys of a JWKS endpoint"},
		{Key: "client.token.user_id_claim", Herald: "client.token.user_id_claim", Action: cfRename, Note: ""},
		{Key: "client.user_id_http_header", Herald: "client.user_id_http_header", Action: cfRename, Note: "the user a trusted proxy in front of Herald set, for a connect without a token"},
		{Key: "consumers", Herald: "consumers", Action: cfRename, Note: "PostgreSQL outbox, Redis Streams, NATS JetStream, Kafka, AWS SQS, Google Cloud Pub/Sub and Azure Service Bus consumers, in Centrifugo's formats"},
		{Key: "controller", Action: cfTune, Note: "Herald's nodes send each other control messages through the engine, which every node shares: a separate controller is not needed"},
		{Key: "enable_unreleased_features", Action: cfDrop, Note: "Herald's features are turned on by their own keys; those of features it does not have are refused by name"},
		{Key: "engine.redis.address", Herald: "engine.redis.address", Action: cfConvert, Convert: redisAddress, Note: "'host:port' or a 'redis://' URL (whose user, password and database number are taken too); several addresses are shards, as in Centrifugo, but Herald places channels on them by its own hash, so existing streams are not found"},
		{Key: "engine.redis.channel_state.num_partitions", Action: cfDrop, Note: "Centrifugo PRO's: Herald's Redis engine keeps channel state in 16 partitions of its own layout"},
		{Key: "engine.redis.channel_state.vacated_event_delay", Herald: "channel.state.vacated_event_delay", Action: cfRename, Note: "Centrifugo PRO's: Herald's applies on every engine"},
		{Key: "engine.redis.client_name", Action: cfTune, Note: "Herald's Redis connections are not named"},
		{Key: "engine.redis.cluster_address", Herald: "engine.redis.addresses, engine.redis.cluster", Action: cfConvert, Convert: clusterAddress, Note: "one entry, the seed addresses of a Redis Cluster separated by commas; Centrifugo reads each entry as a Cluster of its own (a shard), which Herald refuses: its shards are standalone servers or Sentinel sets"},
		{Key: "engine.redis.connect_timeout", Action: cfTune, Note: "Herald uses the Redis client's timeouts"},
		{Key: "engine.redis.force_resp2", Action: cfTune, Note: "Herald's Redis client chooses the protocol version with the server"},
		{Key: "engine.redis.history_use_lists", Action: cfTune, Note: "Herald keeps history in Redis streams of its own layout"},
		{Key: "engine.redis.io_timeout", Action: cfTune, Note: "Herald uses the Redis client's timeouts"},
		{Key: "engine.redis.presence_hash_field_ttl", Action: cfTune, Note: "Herald expires presence entries its own way, within client.presence_ttl"},
		{Key: "engine.redis.presence_ttl", Action: cfTune, Note: "Herald expires presence entries its own way, within client.presence_ttl"},
		{Key: "engine.redis.presence_user_mapping", Action: cfTune, Note: "Herald counts presence its own way"},
		{Key: "engine.redis.replica_client", Action: cfTune, Note: "Herald reads from the Redis primary, so a read is never behind a write"},
		{Key: "engine.redis.sentinel_address", Herald: "engine.redis.addresses, engine.redis.shards", Action: cfConvert, Convert: sentinelAddress, Note: "as in Centrifugo, each entry is one shard, its Sentinels separated by commas ('s1:26379,s2:26379'): one entry becomes addresses; several become shards, each with sentinel_master_name and db (Herald places channels on them by its own hash, so existing streams are not found). Centrifugo also reads several entries of one Sentinel each as shards: if they are the Sentinels of one set, write them as one entry"},
		{Key: "engine.redis.sentinel_client_name", Action: cfTune, Note: "Herald's Redis connections are not named"},
		{Key: "engine.redis.sentinel_master_name", Herald: "engine.redis.sentinel_master", Action: cfRename, Note: ""},
		{Key: "engine.redis.sentinel_tls", Herald: "engine.redis.sentinel_tls", Action: cfConvert, Convert: sentinelTLS, Note: "as engine.redis.tls, for the connections to the Sentinels alone, as in Centrifugo; without it (or off), Sentinels are dialed without TLS even when tls is on (engine.redis.sentinel_tls.plain)"},
		{Key: "engine.redis.sentinel_user", Herald: "engine.redis.sentinel_username", Action: cfRename, Note: ""},
		{Key: "engine.redis.tls", Herald: "engine.redis.tls", Action: cfConvert, Convert: clientTLS, Note: "with 'enabled: true': server_ca_pem, cert_pem and key_pem become ca_file, cert_file and key_file when they are file paths, ca_pem, cert_pem and key_pem when they are PEM text or base64-encoded PEM (decoded), as Centrifugo reads them; anything else is refused as Centrifugo refuses it. server_name and insecure_skip_verify as they are"},
		{Key: "engine.redis.user", Herald: "engine.redis.username", Action: cfRename, Note: ""},
		{Key: "graphite", Herald: "graphite", Action: cfRename, Note: "the same keys; the samples are the Prometheus ones (Herald's metric names, labels as path components or, with 'tags', as tags), and prefix's default is 'herald'"},
		{Key: "grpc_api", Herald: "grpc_api", Action: cfRename, Note: "the gRPC server API, Centrifugo's api.proto; it listens on 127.0.0.1 unless grpc_api.address is set (Centrifugo: every interface), and takes messages of up to 1 MiB unless grpc_api.max_receive_message_size is set (Centrifugo: 4 MiB)"},
		{Key: "grpc_api.tls", Herald: "grpc_api.tls", Action: cfConvert, Convert: listenerTLS, Note: "as http_server.tls, for the gRPC API's listener"},
		{Key: "http_api.disabled", Herald: "http_api.disabled", Action: cfRename, Note: "true: no HTTP API at all, as in Centrifugo"},
		{Key: "http_api.external", Herald: "http_api.external", Action: cfRename, Note: "with an internal listener (http_server.internal_port), the API stays on the main one"},
		{Key: "http_server.address", Herald: "address", Action: cfConvert, Convert: listenAddress, Note: "'address' is host:port; the port comes from http_server.port (default 8000)"},
		{Key: "http_server.h2c_external", Herald: "http.h2c_external", Action: cfRename, Note: "HTTP/2 without TLS beside HTTP/1.1 on the main listener; as in Centrifugo, only with a separate internal listener and no TLS on the main one"},
		{Key: "http_server.http3", Herald: "http.http3", Action: cfRename, Note: "HTTP/3 on the main listener's port (UDP), advertised with Alt-Svc; needs TLS from files or tls_autocert, as in Centrifugo (which refuses autocert with it)"},
		{Key: "http_server.internal_address", Herald: "internal.address", Action: cfConvert, Convert: internalAddress, Note: "the host of the internal listener; empty: http_server.address's, as in Centrifugo"},
		{Key: "http_server.internal_port", Herald: "internal.address", Action: cfConvert, Convert: internalAddress, Note: "a port other than http_server.port turns the internal listener on: the API, '/metrics', the health checks and the admin UI move to it"},
		{Key: "http_server.internal_tls", Herald: "internal.tls", Action: cfConvert, Convert: listenerTLS, Note: "as http_server.tls, for the internal listener"},
		{Key: "http_server.port", Herald: "address", Action: cfConvert, Convert: listenAddress, Note: "'address' is host:port; the host comes from http_server.address"},
		{Key: "http_server.tls", Herald: "tls", Action: cfConvert, Convert: listenerTLS, Note: "with 'enabled: true': cert_pem and key_pem become tls.cert_file and tls.key_file, client_ca_pem becomes tls.client_ca_file with tls.client_auth: require, when they are file paths (reloaded when they change); PEM text or base64-encoded PEM (decoded) becomes tls.cert_pem, tls.key_pem and tls.client_ca_pem (read once), as Centrifugo reads them; anything else is refused as Centrifugo refuses it"},
		{Key: "http_server.tls_autocert", Herald: "tls_autocert", Action: cfRename, Note: "enabled, host_whitelist, cache_dir and email as they are"},
		{Key: "http_server.tls_autocert.http", Action: cfDrop, Note: "Herald always answers the HTTP-01 challenge, on tls_autocert.http_address"},
		{Key: "http_server.tls_autocert.http_addr", Herald: "tls_autocert.http_address", Action: cfRename, Note: "where the HTTP-01 challenge listener listens"},
		{Key: "http_server.tls_autocert.server_name", Herald: "tls_autocert.server_name", Action: cfRename, Note: "the certificate a client without SNI gets, as in Centrifugo"},
		{Key: "http_server.tls_external", Herald: "internal.tls_external", Action: cfRename, Note: "the main listener's TLS is not used on the internal one"},
		{Key: "init", Herald: "init", Action: cfRename, Note: "the same keys: 'GET' on the main listener answers '200' with '{}'"},
		{Key: "log.file", Herald: "log.file", Action: cfRename, Note: "the log goes to the file instead of standard error"},
		{Key: "log.level", Herald: "log.level", Action: cfConvert, Convert: logLevel, Note: "'trace' becomes 'debug' and 'none' becomes 'error'"},
		{Key: "map_broker", Action: cfTune, Note: "Herald keeps the state of map channels in its engine (engine.type; every node shares it with the postgres and redis engines), so a store of their own is not needed; the nats engine keeps none, and map namespaces are then refused by name"},
		{Key: "node.info_metrics_aggregate_interval", Action: cfTune, Note: "Herald aggregates node metrics on its own schedule"},
		{Key: "node.name", Herald: "name", Action: cfRename, Note: "the node's name"},
		{Key: "opentelemetry.api", Action: cfDrop, Note: "Herald traces API requests whenever opentelemetry.enabled is on"},
		{Key: "opentelemetry.consuming", Action: cfDrop, Note: "Herald runs consumed commands through the server API, which it traces whenever opentelemetry.enabled is on"},
		{Key: "opentelemetry.google_cloud_adc_auth", Herald: "opentelemetry.google_cloud_adc_auth", Action: cfRename, Note: "as in Centrifugo, for the spans Herald exports"},
		{Key: "pid_file", Herald: "pid_file", Action: cfRename, Note: "written at start; Herald also removes it on a clean shutdown"},
		{Key: "presence_manager", Herald: "engine.presence, engine.redis", Action: cfConvert, Convert: presenceManagerSection, Note: "used with 'enabled: true', as in Centrifugo: type redis with another broker becomes engine.presence: redis (the broker's engine paired with Redis presence, e.g. a NATS broker), its redis section engine.redis; type memory (each node's own clients in Centrifugo) leaves presence to the broker's engine, which the Redis and PostgreSQL engines keep for all nodes; with a NATS broker, namespaces cannot then turn presence on"},
		{Key: "prometheus.enabled", Action: cfDrop, Note: "Herald always serves the metrics, at prometheus.handler_prefix"},
		{Key: "prometheus.instrument_http_handlers", Action: cfTune, Note: "Herald's metrics of its HTTP handlers are fixed"},
		{Key: "prometheus.native_histograms", Action: cfTune, Note: "Herald's histograms are classic Prometheus ones"},
		{Key: "prometheus.recovered_publications_histogram", Action: cfTune, Note: "Herald's recovery metrics are fixed"},
		{Key: "proxies[].emulated_headers", Herald: "proxies[].emulated_headers", Action: cfRename, Note: "as in Centrifugo: the headers of the client's connect command listed here reach the proxy on every call of the connection, and http_headers takes the HTTP request's alone"},
		{Key: "proxies[].grpc.compression", Herald: "proxies[].grpc.compression", Action: cfRename, Note: ""},
		{Key: "proxies[].grpc.credentials_key", Herald: "proxies[].grpc.credentials_key", Action: cfRename, Note: ""},
		{Key: "proxies[].grpc.credentials_value", Herald: "proxies[].grpc.credentials_value", Action: cfRename, Note: ""},
		{Key: "proxies[].grpc.tls", Herald: "proxies[].grpc.tls", Action: cfConvert, Convert: clientTLS, Note: "as engine.redis.tls, for a 'grpc://' proxy's connection"},
		{Key: "proxies[].grpc_metadata", Herald: "proxies[].grpc_metadata", Action: cfRename, Note: ""},
		{Key: "proxies[].http.static_headers", Herald: "proxies[].static_http_headers", Action: cfRename, Note: "headers sent with every call"},
		{Key: "proxies[].http.status_to_code_transforms", Herald: "proxies[].status_to_code_transforms", Action: cfRename, Note: "status_code with to_error or to_disconnect, as in Centrifugo"},
		{Key: "proxies[].http.tls", Herald: "proxies[].tls", Action: cfConvert, Convert: proxyHTTPTLS, Note: "with 'enabled: true', the TLS of calls to an https endpoint, as engine.redis.tls (server_ca_pem, cert_pem and key_pem become ca_file, cert_file and key_file, or ca_pem, cert_pem and key_pem for PEM text or base64 PEM)"},
		{Key: "rpc.namespaces[].proxy_enabled", Herald: "rpc.namespaces[].proxy", Action: cfConvert, Convert: proxyEnabled, Note: "true: 'proxy' names 'proxy_name', or the proxy of rpc.proxy"},
		{Key: "rpc.namespaces[].proxy_name", Herald: "rpc.namespaces[].proxy", Action: cfConvert, Convert: proxyName, Note: "read with proxy_enabled"},
		{Key: "rpc.proxy", Herald: "proxies[]", Action: cfConvert, Convert: defaultProxy, Note: "becomes a proxy named 'rpc.proxy', used by the RPC namespaces that enable the proxy without naming one"},
		{Key: "rpc.without_namespace.proxy_enabled", Herald: "rpc.proxy", Action: cfConvert, Convert: proxyEnabled, Note: "true: 'rpc.proxy' names rpc.without_namespace.proxy_name, or the proxy of rpc.proxy"},
		{Key: "rpc.without_namespace.proxy_name", Herald: "rpc.proxy", Action: cfConvert, Convert: proxyName, Note: "read with rpc.without_namespace.proxy_enabled"},
		{Key: "shared_poll.concurrency_limit", Action: cfDrop, Note: "each shared poll channel has one poller on a node, which asks its proxy one batch at a time"},
		{Key: "swagger", Herald: "swagger", Action: cfRename, Note: "the OpenAPI document and a page of Herald's own that calls its methods (not the Swagger UI bundle), at handler_prefix, on the internal listener when there is one"},
		{Key: "uni_grpc", Herald: "uni_grpc", Action: cfRename, Note: "the unidirectional gRPC transport"},
		{Key: "uni_grpc.tls", Herald: "uni_grpc.tls", Action: cfConvert, Convert: listenerTLS, Note: "as http_server.tls, for the uni_grpc listener"},
		{Key: "uni_http_stream.connect_code_to_http_response", Herald: "uni_http_stream.connect_code_to_http_response", Action: cfRename, Note: "enabled and transforms ({code, to: {status_code, body}}), as in Centrifugo"},
		{Key: "uni_sse.connect_code_to_http_response", Herald: "uni_sse.connect_code_to_http_response", Action: cfRename, Note: "as uni_http_stream.connect_code_to_http_response"},
		{Key: "uni_websocket.compression", Herald: "uni_websocket.compression", Action: cfRename, Note: "for this endpoint alone, as in Centrifugo"},
		{Key: "uni_websocket.compression_level", Herald: "uni_websocket.compression_level", Action: cfRename, Note: ""},
		{Key: "uni_websocket.compression_min_size", Herald: "uni_websocket.compression_min_size", Action: cfRename, Note: ""},
		{Key: "uni_websocket.decompressed_message_size_limit", Action: cfTune, Note: "Herald bounds each message by uni_websocket.message_size_limit once decompressed"},
		{Key: "uni_websocket.join_push_messages", Herald: "uni_websocket.join_push_messages", Action: cfRename, Note: "pushes ready together go in one frame, newline-separated"},
		{Key: "uni_websocket.message_size_limit", Herald: "uni_websocket.message_size_limit", Action: cfRename, Note: ""},
		{Key: "uni_websocket.read_buffer_size", Herald: "uni_websocket.read_buffer_size", Action: cfRename, Note: "as websocket.read_buffer_size, for this endpoint; 0: the websocket section's"},
		{Key: "uni_websocket.use_write_buffer_pool", Action: cfDrop, Note: "Herald always writes from pooled buffers"},
		{Key: "uni_websocket.write_buffer_size", Action: cfTune, Note: "Herald keeps no write buffer per connection: it writes each frame to the socket from a pooled buffer sized to the frame"},
		{Key: "uni_websocket.write_timeout", Herald: "uni_websocket.write_timeout", Action: cfRename, Note: ""},
		{Key: "usage_stats", Action: cfDrop, Note: "Herald sends no usage statistics"},
		{Key: "websocket.decompressed_message_size_limit", Action: cfTune, Note: "Herald bounds each message by websocket.message_size_limit"},
		{Key: "websocket.disabled", Herald: "websocket.disabled", Action: cfRename, Note: ""},
		{Key: "websocket.read_buffer_size", Herald: "websocket.read_buffer_size", Action: cfRename, Note: "the read buffer of each connection of the portable poller (websocket.poller), as Centrifugo's per-connection read buffer; 0 is 4096 in both; the epoll poller holds no buffer per connection"},
		{Key: "websocket.use_write_buffer_pool", Action: cfDrop, Note: "Herald always writes from pooled buffers"},
		{Key: "websocket.write_buffer_size", Action: cfTune, Note: "Herald keeps no write buffer per connection: it writes each frame to the socket from a pooled buffer sized to the frame"},
		{Key: "webtransport", Herald: "webtransport", Action: cfRename, Note: "the WebTransport transport: enabled, handler_prefix and message_size_limit as they are; needs http_server.http3"},
	}
}
