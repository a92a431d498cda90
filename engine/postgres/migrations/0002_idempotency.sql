-- Herald PostgreSQL engine, schema version 2: idempotent publishing.
--
-- One row per idempotency key of a channel, written in the publishing
-- transaction of the key's first publication: a retry (from any node)
-- either waits on the row's unique key until the first commits and then
-- reads its result, or, if the first rolled back, publishes itself. Rows
-- past expire_at are reclaimed by the next publication with the key, and
-- deleted by the janitor.
CREATE TABLE {{schema}}.idempotency (
    channel    text        COLLATE "C" NOT NULL,
    key        text        COLLATE "C" NOT NULL,
    pub_offset bigint,
    epoch      text,
    expire_at  timestamptz NOT NULL,
    PRIMARY KEY (channel, key)
);
CREATE INDEX idempotency_expire_at ON {{schema}}.idempotency (expire_at);
