package hub

// SharedPollChannels is the number of shared poll channels with state on
// h (a poller each), for the tests that check they are released.
func SharedPollChannels(h *Hub) int {
	h.polls.mu.Lock()
	defer h.polls.mu.Unlock()
	return len(h.polls.channels)
}
