package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/engine/postgres"
)

// migrateCommand creates or migrates the PostgreSQL engine's schema, or
// prints its SQL for teams that run migrations themselves.
func migrateCommand() *cobra.Command {
	var (
		configPath, dsn, schema string
		printSQL                bool
	)
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Create or migrate the PostgreSQL engine's schema (or print its SQL with --sql)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dsns := []string{dsn}
			if configPath != "" {
				cfg, err := loadConfig(configPath)
				if err != nil {
					return err
				}
				if dsn == "" {
					dsns = cfg.Engine.Postgres.DSNs() // every shard's database
				}
				if schema == "" {
					schema = cfg.Engine.Postgres.Schema
				}
			}
			if schema == "" {
				schema = "herald"
			}
			if printSQL {
				sql, err := postgres.SQL(schema)
				if err != nil {
					return err
				}
				fmt.Fprint(cmd.OutOrStdout(), sql)
				return nil
			}
			if dsns[0] == "" {
				return errors.New("no database: pass --dsn, or --config with engine.postgres.dsn (or shards)")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			for i, d := range dsns {
				if err := postgres.Migrate(ctx, d, schema); err != nil {
					if len(dsns) > 1 {
						return fmt.Errorf("shard %d: %w", i, err)
					}
					return err
				}
				if len(dsns) > 1 {
					fmt.Fprintf(cmd.OutOrStdout(), "shard %d: ", i)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "schema %s is up to date\n", schema)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&configPath, "config", "c", "", "configuration file (engine.postgres.dsn or shards, and schema)")
	f.StringVar(&dsn, "dsn", "", "PostgreSQL connection string")
	f.StringVar(&schema, "schema", "", "schema name (default herald)")
	f.BoolVar(&printSQL, "sql", false, "print the migrations' SQL instead of running them")
	return cmd
}
