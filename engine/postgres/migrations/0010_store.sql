-- Herald PostgreSQL engine, schema version 10: the engine's key-value
-- store (engine.Store) for token revocations, blocked users and user
-- status. Every node loads a bucket whole into memory and keeps it
-- current from control messages, so reads here are rare; rows past
-- expire_at are never returned and are deleted by the janitor.
CREATE TABLE {{schema}}.store (
    bucket    text        COLLATE "C" NOT NULL,
    key       text        COLLATE "C" NOT NULL,
    value     bytea       NOT NULL,
    expire_at timestamptz,
    PRIMARY KEY (bucket, key)
);
CREATE INDEX store_expire_at ON {{schema}}.store (expire_at) WHERE expire_at IS NOT NULL;
