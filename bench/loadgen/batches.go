package loadgen

import (
	"context"
	"sync"
)

// inBatches calls fn for the ranges [first, end) that cover 0..n-1, batch
// wide, conc of them at once (the map fills set tens of thousands of keys
// through the API, a round trip per batch). The first error fn returns
// stops the others and is the result; otherwise the result is ctx's error
// (a deadline or cancellation that cut the feeding short), or nil.
func inBatches(ctx context.Context, n, batch, conc int, fn func(ctx context.Context, first, end int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan int)
	errs := make(chan error, conc)
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for first := range batches {
				if err := fn(ctx, first, min(n, first+batch)); err != nil {
					errs <- err
					cancel()
					return
				}
			}
		})
	}
feed:
	for first := 0; first < n; first += batch {
		select {
		case batches <- first:
		case <-ctx.Done():
			break feed
		}
	}
	close(batches)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	return ctx.Err()
}
