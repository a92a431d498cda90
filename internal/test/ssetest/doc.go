// Package ssetest reads server-sent events as a browser's EventSource
// does, so tests see Herald's event streams (internal/sse) the way a page
// would.
//
// It is for tests only.
package ssetest
