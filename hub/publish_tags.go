package hub

import (
	"fmt"

	"github.com/heraldhq/herald/protocol"
)

// checkTags returns the error a publish with tags gets when they are over
// the namespace's bound, nil otherwise.
func (o NamespaceOptions) checkTags(tags map[string]string) error {
	limit := o.TagsMaxSize
	switch {
	case limit < 0:
		return nil
	case limit == 0:
		limit = DefaultTagsMaxSize
	}
	size := 0
	for k, v := range tags {
		size += len(k) + len(v)
	}
	if size <= limit {
		return nil
	}
	return &Error{Code: protocol.ErrorBadRequest, Message: fmt.Sprintf("tags: %d bytes of keys and values, at most %d (tags_max_size)", size, limit)}
}
