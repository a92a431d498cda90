package enginetest

import "github.com/heraldhq/herald/engine"

// PublicationDiff describes how got differs from want in the fields a
// publisher sets (Data, Info, Tags, ExceptClient, Key, Removed and Delta;
// not Offset or Time),
// or returns "" when it does not. Nil and empty byte slices and maps count
// as equal, since networked engines decode what they carry.
func PublicationDiff(want, got *engine.Publication) string { return pubDiff(want, got) }
