//go:build !benchsdk

package loadgen

import (
	"context"
	"errors"
)

// dialSDK: this binary was built without the SDK client (see sdk.go).
func (p *Pool) dialSDK(context.Context, int, int) (ownedConn, func(), error) {
	return nil, nil, errors.New("--client sdk: herald-bench was built without it; build with -tags benchsdk (see bench/loadgen/sdk.go)")
}
