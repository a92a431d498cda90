package main

import (
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/heraldhq/herald/config"
)

// The files of the process that Centrifugo's log.file and pid_file name
// (Centrifugo v6.9.1 logging.Setup and tools.WritePidFile).

// logOutput is where the log goes: log.file, opened for appending, or w.
// done closes the file.
func logOutput(w io.Writer, cfg config.LogConfig) (_ io.Writer, done func(), _ error) {
	if cfg.File == "" {
		return w, func() {}, nil
	}
	f, err := os.OpenFile(cfg.File, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("log.file: %w", err)
	}
	return f, func() { _ = f.Close() }, nil
}

// writePIDFile writes the process ID to path (pid_file); remove deletes it
// again. Nothing without a path.
func writePIDFile(path string) (remove func(), _ error) {
	if path == "" {
		return func() {}, nil
	}
	if err := os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("pid_file: %w", err)
	}
	return func() { _ = os.Remove(path) }, nil
}
