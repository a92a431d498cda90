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
			if configPath != "" {
				cfg, err := loadConfig(configPath)
				if err != nil {
					return err
				}
				if dsn == "" {
					dsn = cfg.Engine.Postgres.DSN
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
			if dsn == "" {
				return errors.New("no database: pass --dsn, or --config with engine.postgres.dsn")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if err := postgres.Migrate(ctx, dsn, schema); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "schema %s is up to date\n", schema)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&configPath, "config", "c", "", "configuration file (engine.postgres.dsn and schema)")
	f.StringVar(&dsn, "dsn", "", "PostgreSQL connection string")
	f.StringVar(&schema, "schema", "", "schema name (default herald)")
	f.BoolVar(&printSQL, "sql", false, "print the migrations' SQL instead of running them")
	return cmd
}
