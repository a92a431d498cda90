package api

import "sync"

// maxConcurrency bounds the goroutines of one broadcast or parallel batch,
// so that one request cannot start an unbounded number of engine calls.
const maxConcurrency = 64

// forEach runs fn(0) … fn(n-1), up to limit at a time, and returns when
// all have returned. One item runs on the calling goroutine.
func forEach(n, limit int, fn func(i int)) {
	if n <= 1 || limit <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	sem := make(chan struct{}, min(n, limit))
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			fn(i)
		})
	}
	wg.Wait()
}
