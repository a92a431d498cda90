package server

// ExampleConfig is the commented configuration `herald config example`
// prints. Every key is present with its default; a test keeps it complete
// and valid.
const ExampleConfig = `# Herald configuration (YAML). Every key is optional; shown here with its default.
# Any key can be overridden by an environment variable: HERALD_ + the key path in
# capitals with '_' for '.', e.g. HERALD_CLIENT_TOKEN_HMAC_SECRET_KEY.
# With no client.token key and no http_api.key, "herald serve" generates random ones
# at each start and prints them; "herald config init" writes this file with fresh keys.

address: ":8000"          # HTTP listen address; clients connect to /connection/websocket
name: ""                  # node name in the info API and logs; default the host name

log:
  level: info             # debug | info | warn | error
  format: text            # text | json

engine:
  type: memory            # memory: one node, nothing else to run | postgres | redis | nats (see docs/engines.md)
  postgres:               # engine.type postgres: scale out on PostgreSQL alone (docs/postgres.md)
    dsn: ""                     # postgres://user:pass@host:5432/db (may go through a transaction-mode pooler)
    listen_dsn: ""              # a direct session connection for LISTEN, when dsn goes through a pooler
    schema: herald
    pool_size: 2                # publishing connections per node
    query_pool_size: 4          # history and presence read connections per node
    synchronous_commit_off: false  # faster publishing, may lose the last ms of publications on a database crash
    skip_migrate: false         # true: run "herald migrate" (or "herald migrate --sql") yourself
    listener_ping: 5s           # a silently dead listening connection is noticed within twice this
    write_timeout: 10s          # bounds a publishing transaction and a listener reconnect attempt
  redis:                  # engine.type redis, or NATS presence in Redis
    address: "127.0.0.1:6379"   # a standalone server
    addresses: []               # Sentinel or Cluster seed addresses (instead of address)
    sentinel_master: ""
    sentinel_username: ""
    sentinel_password: ""
    cluster: false
    username: ""
    password: ""
    db: 0
    prefix: herald              # starts every key and pub/sub channel
    pubsub_shards: 4            # connections that channel subscriptions are spread over
    pool_size: 0                # 0: go-redis default
    min_replicas: 0             # 1+: acknowledge a publication with history once that many replicas have it
    replica_timeout: 1s         # how long a publication waits for min_replicas
  nats:                   # engine.type nats: delivery only, no history
    url: "nats://127.0.0.1:4222"
    prefix: herald
    presence: none              # none | redis (presence in engine.redis)

client:
  token:                  # keys that connection and subscription JWTs are checked with
    hmac_secret_key: ""   # HS256/384/512
    rsa_public_key: ""    # PEM, RS256/384/512
    ecdsa_public_key: ""  # PEM, ES256/384/512 (algorithm must match the curve)
    audience: ""          # when set, tokens must carry this aud
    issuer: ""            # when set, tokens must carry this iss
    cache_size: 10000     # verified connection tokens remembered until they expire; 0: off
  allow_anonymous_connect_without_token: false
  disallow_anonymous_connection_tokens: false
  insecure: false         # development only: no authentication or permission checks at all
  ping_interval: 25s
  pong_timeout: 8s        # must be shorter than ping_interval; no pong in time closes with 3012
  stale_close_delay: 10s  # no connect command by then closes with 3502
  expired_close_delay: 25s
  expired_sub_close_delay: 25s
  channel_limit: 128      # subscriptions per connection
  queue_max_size: 1048576 # bytes waiting for a slow client before it is closed with 3008
  write_coalesce: 0s      # write to one connection at most once per this interval (0: off; see docs/benchmarks.md)
  recovery_max_publication_limit: 300
  history_max_publication_limit: 300
  presence_ttl: 60s
  command_timeout: 10s      # bounds one command's engine calls and handlers; over it: error 100, client stays
  connection_limit: 0       # connected clients per node (0: none); more get 3504
  user_connection_limit: 0  # connections of one user per node (0: none); more get 3504
  command_rate_limit: 0     # commands per second per connection (0: none); over it: error 111, then 3013
  command_rate_burst: 0     # burst above the rate (default: the rate)
  proxy:                    # proxies (below) for the client-wide events (docs/proxy.md)
    connect: ""             # authenticates connections that send no token
    refresh: ""             # extends sessions of connections the connect proxy authenticated

channel:
  max_length: 255
  without_namespace:      # options for channels with no "ns:" prefix; all off by default
    presence: false
    join_leave: false
    force_push_join_leave: false
    history_size: 0       # history needs both history_size and history_ttl
    history_ttl: 0s
    history_meta_ttl: 0s  # 0: engine default (30 days)
    force_positioning: false
    allow_positioning: false
    force_recovery: false
    allow_recovery: false
    allow_subscribe_for_client: false
    allow_subscribe_for_anonymous: false
    allow_publish_for_subscriber: false
    allow_publish_for_client: false
    allow_publish_for_anonymous: false
    allow_history_for_subscriber: false
    allow_history_for_client: false
    allow_history_for_anonymous: false
    allow_presence_for_subscriber: false
    allow_presence_for_client: false
    allow_presence_for_anonymous: false
    allow_user_limited_channels: false
    channel_regex: ""
    queue_policy: close   # close: a subscriber too far behind gets 3008 | drop_oldest: its oldest queued publications are dropped
    join_leave_max_subscribers: 0   # no join/leave events in channels with more subscribers on a node (0: 1000, -1: no bound)
    publication_data_format: json   # json | json_object | binary (only Protobuf clients may subscribe; other data refused at publish)
    subscribe_proxy: ""   # a proxy (below) that decides subscriptions instead of the options above
    publish_proxy: ""     # ... publications (it may rewrite the data)
    sub_refresh_proxy: "" # ... subscription refreshes
    allowed_delta_types: []   # [fossil]: subscribers asking delta "fossil" get publications as deltas against the previous one
    subscribe_check: ""   # SQL that decides subscriptions, called with the user ($1) and the channel ($2): "select app.can_subscribe($1, $2)"
    publish_check: ""     # ... publications (docs/postgres.md, "Authorization in SQL")
  namespaces:             # channels "chat:..." use the namespace named chat
    - name: chat
      presence: true
      join_leave: true
      force_push_join_leave: true
      history_size: 100
      history_ttl: 300s
      force_recovery: true
      allow_subscribe_for_client: true
      allow_publish_for_subscriber: true
      allow_history_for_subscriber: true
      allow_presence_for_subscriber: true
    - name: prices
      allow_subscribe_for_client: true
      queue_policy: drop_oldest
      subscribe_check: ""
      publish_check: ""

proxies: []                # backend endpoints of the proxy (docs/proxy.md), for example:
#  - name: app
#    endpoint: http://localhost:3000/centrifugo/connect   # http:// or https://
#    timeout: 1s                   # at most 60s; past it the client gets error 100
#    http_headers: [Cookie, Authorization]   # forwarded from the client's HTTP request
#    static_http_headers: {}       # sent with every call
#    binary_encoding: false        # payloads as base64 (b64data) instead of JSON (data)
#    include_connection_meta: false
proxy_max_in_flight: 1000  # proxy calls in flight on this node; more get error 111 at once; -1: no bound

sql_auth:                  # where subscribe_check and publish_check run
  dsn: ""                  # default: engine.postgres.dsn
  listen_dsn: ""           # the connection that LISTENs for invalidations (not a transaction pooler); default: engine.postgres.listen_dsn, else dsn
  cache_ttl: 5s            # answers are reused this long; NOTIFY herald_auth, '*' | 'user:<id>' | 'channel:<name>' drops them; negative: no cache
  timeout: 2s              # a check that takes longer answers error 100
  channel: herald_auth     # the NOTIFY channel

rpc:
  proxy: ""                  # the proxy that answers rpc methods without namespace
  namespaces: []             # methods "ns:name", e.g. - {name: billing, proxy: app}

http_api:
  key: ""                    # API key for /api (X-API-Key header); the API is off without one
  insecure: false            # development only: the API without a key
  error_mode: ""             # "transport": HTTP statuses for errors instead of 200 + error object
  max_body_size: 1048576     # larger bodies answer 413
  body_read_timeout: 10s     # a body still arriving after this answers 408
  max_batch_commands: 1000   # larger batches answer error 107
  allow_key_in_query: false  # also accept ?api_key=KEY (keys in URLs end up in access logs)
  idempotency_window: 5m     # how long publish/broadcast remember an idempotency_key (a repeat is not delivered again)
  allowed_origins: []        # browser origins allowed to call the API (CORS); ["*"]: any

http:
  idle_timeout: 120s         # keep-alive connections idle this long are closed

shutdown:                    # on SIGTERM/SIGINT: readyz 503, new connections refused,
  drain_window: 5s           # clients closed with 3001 spread over this window,
  timeout: 30s               # in-flight API calls finished; exit 0 within the timeout

# HTTP fallbacks for browsers where WebSocket is blocked (centrifuge-js transports), with
# /emulation for their commands; writes use websocket.write_timeout, origins
# websocket.allowed_origins, and new streams the websocket admission limits.
http_stream:
  enabled: true              # /connection/http_stream
  max_request_body_size: 65536
sse:
  enabled: true              # /connection/sse
  max_request_body_size: 65536
emulation:
  max_request_body_size: 65536
  per_address_rate: 200      # requests per second from one client address (behind
  per_address_burst: 400     #   websocket.trusted_proxies: the forwarded address)
  per_session_rate: 20       # requests per second for one session, on each node
  per_session_burst: 50      # (negative rate: no limit); over them: 429
uni_http_stream:             # receive-only streams: one connect request, then pushes
  enabled: false             # /connection/uni_http_stream
  max_request_body_size: 65536
uni_sse:
  enabled: false             # /connection/uni_sse
  max_request_body_size: 65536

admin:
  address: ""                # pprof and metrics on a separate listener; off when empty (use loopback)
  mutex_profile_fraction: 0  # sample 1 in N lock contentions for /debug/pprof/mutex (0: off; costs CPU)
  block_profile_rate: 0      # record waits of N ns or more for /debug/pprof/block (0: off; costs CPU)
  ui:
    enabled: false           # the admin web UI, on the admin listener if set, else under path
    password: ""             # operators log in with it (or an admin token signed with token_secret)
    token_secret: ""         # HMAC key of admin JWTs carrying "admin": true
    insecure: false          # no login: local development only
    path: /admin

websocket:
  message_size_limit: 65536  # larger incoming messages close the connection with 1009
  write_timeout: 1s
  read_timeout: 10s          # a started message must arrive completely within this
  allowed_origins: []        # browser origins; empty: same origin only; ["*"]: any
  poller: auto               # auto (epoll on Linux, portable elsewhere), epoll or portable
  max_unauthenticated: 10000 # connections not yet authenticated; more get 503 before the upgrade; -1: no bound
  ip_rate_limit: 1000        # new connections a second per client address; more get 429; -1 (behind a proxy, load tests): off
  ip_rate_burst: 200         # connections an address may open at once
  trusted_proxies: []        # reverse proxies (IPs or CIDRs) whose X-Forwarded-For names the client address
  compression: false         # permessage-deflate for clients that offer it (no context takeover)
  compression_min_size: 0    # smaller outgoing messages go uncompressed; 0: compress all
  compression_level: 1       # 1 (fastest) to 9 (smallest)
  net_http_upgrade: false    # true: net/http reads upgrade requests, not the accept loop with pooled buffers

uni_websocket:
  enabled: false             # serve /connection/uni_websocket (connect request in, bare pushes out)
`
