package hub

// TagsFilters is the number of distinct tags filters the node holds, and
// the number of subscriptions that use them.
func (h *Hub) TagsFilters() (filters, users int) {
	h.filters.mu.Lock()
	defer h.filters.mu.Unlock()
	for _, f := range h.filters.m {
		filters++
		users += int(f.refs.Load())
	}
	return filters, users
}
