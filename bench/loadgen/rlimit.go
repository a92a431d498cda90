package loadgen

import "fmt"

// fdMargin is the open files a worker keeps for itself beyond its
// connections: the binary, pipes, epoll instances, the runtime.
const fdMargin = 256

// DefaultPerWorker is the most connections one worker process holds by
// default: a little under this machine class's 20,000 open-files limit.
const DefaultPerWorker = 19000

// PerWorkerLimit is how many connections one worker can hold under the
// hard open-files limit, capped at want (or DefaultPerWorker).
func PerWorkerLimit(want int) (int, error) {
	if want <= 0 {
		want = DefaultPerWorker
	}
	_, hard, err := FileLimit()
	if err != nil {
		return 0, err
	}
	if hard <= fdMargin {
		return 0, fmt.Errorf("the open-files hard limit is %d: too low to hold any connection", hard)
	}
	return int(min(uint64(want), hard-fdMargin)), nil
}
