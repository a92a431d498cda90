package hub

// TagsFilters is the number of distinct tags filters the node holds, and
// the number of subscriptions that use them.
func (h *Hub) TagsFilters() (filters, users int) { return h.filters.Counts() }
