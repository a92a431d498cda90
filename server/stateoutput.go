package server

import (
	"context"
	"time"

	"github.com/heraldhq/herald/stateoutput"
)

// stateOutputOpenTimeout bounds opening the outputs of channel state
// events at start: connecting and creating or checking the table.
const stateOutputOpenTimeout = 30 * time.Second

// stateOutputs opens channel.state.outputs, which the hub step chains
// after the proxy as one more receiver of channel state events.
func (b *builder) stateOutputs() error {
	cfgs := b.s.cfg.StateOutputs()
	if len(cfgs) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), stateOutputOpenTimeout)
	defer cancel()
	set, err := stateoutput.OpenSet(ctx, cfgs)
	if err != nil {
		return err
	}
	b.s.stateOutputs = set
	b.onFailure(set.Close)
	return nil
}
