// Package cluster runs docs/cluster.md as written: its tests read the
// configuration blocks and command lines of the walkthrough from the page
// itself (so the page and the test cannot drift apart), start two herald
// processes on one PostgreSQL behind a real nginx on loopback ports, and do
// what the page says: a message crossing nodes, a node drained while its
// clients move to the other, and the node started again. It also checks
// that deploy/compose/compose.yaml names the same settings.
package cluster
