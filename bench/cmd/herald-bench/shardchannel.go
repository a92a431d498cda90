package main

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/engine/sharded"
)

// benchShardChannelCommand names a channel that a given shard owns, so
// that a benchmark of a sharded engine can load every shard: it runs one
// load per shard, each on a channel of that shard.
func benchShardChannelCommand() *cobra.Command {
	var shards, shard int
	var prefix string
	cmd := &cobra.Command{
		Use:   "shard-channel",
		Short: "Print the first channel PREFIX0, PREFIX1, ... that shard --shard of --shards owns",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if shards < 1 || shard < 0 || shard >= shards {
				return fmt.Errorf("--shard %d of --shards %d: want 0 <= shard < shards", shard, shards)
			}
			for i := range 100000 {
				if ch := prefix + strconv.Itoa(i); sharded.ShardOf(ch, shards) == shard {
					fmt.Fprintln(cmd.OutOrStdout(), ch)
					return nil
				}
			}
			return errors.New("no channel found in 100000 names")
		},
	}
	cmd.Flags().IntVar(&shards, "shards", 1, "the number of shards")
	cmd.Flags().IntVar(&shard, "shard", 0, "the shard, 0-based")
	cmd.Flags().StringVar(&prefix, "prefix", "bench", "the channel names' prefix")
	return cmd
}
