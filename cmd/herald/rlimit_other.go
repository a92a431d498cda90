//go:build !unix

package main

import "log/slog"

func logFileLimit(*slog.Logger) {}
