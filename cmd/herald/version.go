package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/server"
)

func versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print Herald's version and the commit it was built from",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), "herald", versionString())
		},
	}
}

// buildCommit is the commit when the build sets it
// (go build -ldflags "-X main.buildCommit=$(git rev-parse HEAD)"), for
// builds without the VCS stamp (-buildvcs=false, or a checkout the go
// command cannot read). The linker writes it; nothing changes it at run
// time.
var buildCommit string

// versionString is the version, the commit and the Go version the binary
// was built with. The commit comes from the VCS stamp go build adds in a
// git checkout (vcs.revision, and vcs.modified for uncommitted changes);
// buildCommit stands in when it is missing; without either (go run, go
// test) the answer says "commit unknown".
func versionString() string {
	commit, dirty, at := "unknown", false, ""
	if buildCommit != "" {
		commit = buildCommit
		if len(commit) > 12 {
			commit = commit[:12]
		}
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
				if len(commit) > 12 {
					commit = commit[:12]
				}
			case "vcs.modified":
				dirty = s.Value == "true"
			case "vcs.time":
				at = s.Value
			}
		}
	}
	if dirty {
		commit += "-dirty"
	}
	if at != "" {
		commit += ", " + at
	}
	return fmt.Sprintf("%s (commit %s, %s)", server.Version, commit, runtime.Version())
}
