//go:build !race

package enginetest

// MapExpiryScale is how many keys the map expiry tests expire together
// (issue 35 #11: 30,000 keys with key_ttl 3s); see race.go.
const MapExpiryScale = 30000
