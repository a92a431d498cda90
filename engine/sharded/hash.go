package sharded

import (
	"crypto/md5" //nolint:gosec // a placement hash, not a security boundary; chosen because SQL has md5() built in
	"encoding/binary"
)

// ShardOf returns the shard, in [0, n), that owns channel among n shards.
// It is jump consistent hashing (Lamping and Veach, 2014) over a 64-bit key:
// the first 8 bytes, big-endian, of the MD5 digest of the channel name.
// MD5 because every PostgreSQL has md5() built in, so the SQL function
// herald.shard_of(channel, n) (installed by the PostgreSQL engine's
// migrations) computes the same answer from a trigger or a job without an
// extension; jump hashing because growing from n to n+1 shards moves only
// about 1/(n+1) of the channels, all of them to the new shard.
//
// n below 1 is treated as 1.
func ShardOf(channel string, n int) int {
	if n <= 1 {
		return 0
	}
	sum := md5.Sum([]byte(channel)) //nolint:gosec // see above
	return jump(binary.BigEndian.Uint64(sum[:8]), n)
}

// jump is the jump consistent hash of key over n buckets. The float64
// arithmetic is part of the definition: the SQL version does the same
// IEEE-754 double operations, so both agree bit for bit.
func jump(key uint64, n int) int {
	b, j := int64(-1), int64(0)
	for j < int64(n) {
		b = j
		key = key*2862933555777941757 + 1
		j = int64(float64(b+1) * (float64(int64(1)<<31) / float64((key>>33)+1)))
	}
	return int(b)
}
