package loadgen

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"
)

// CPUThrottle is a CPU cgroup's bandwidth accounting (its cpu.stat): how
// many enforcement periods elapsed while its tasks ran, in how many the
// quota ran out, and how long its tasks then waited for the next period.
// A server under a container's CPU limit whose p99 grows at a rate it
// could serve on a free core is usually waiting here: sampled per step,
// it tells a throttled step from a slow one. Zero without a quota.
type CPUThrottle struct {
	Periods   int64         `json:"periods"`
	Throttled int64         `json:"throttled"`
	Waited    time.Duration `json:"waited_ns"`
}

// Sub is the accounting between two readings.
func (t CPUThrottle) Sub(from CPUThrottle) CPUThrottle {
	return CPUThrottle{Periods: t.Periods - from.Periods, Throttled: t.Throttled - from.Throttled, Waited: t.Waited - from.Waited}
}

func (t CPUThrottle) add(o CPUThrottle) CPUThrottle {
	return CPUThrottle{Periods: t.Periods + o.Periods, Throttled: t.Throttled + o.Throttled, Waited: t.Waited + o.Waited}
}

// cpuStatPaths finds the cpu.stat files of the CPU cgroups of pids, each
// once (two nodes in one group are one quota): cgroup v1's cpu controller
// where it is mounted, else the v2 unified hierarchy. A pid whose group
// has no cpu.stat (no v1 cpu controller and no v2 cpu controller enabled
// for its group) contributes nothing.
func cpuStatPaths(pids []int) ([]string, error) {
	mounts, err := procfs.GetMounts()
	if err != nil {
		return nil, fmt.Errorf("cgroup mounts: %w", err)
	}
	var v1, v2 string
	for _, m := range mounts {
		switch m.FSType {
		case "cgroup":
			if _, ok := m.SuperOptions["cpu"]; ok && v1 == "" {
				v1 = m.MountPoint
			}
		case "cgroup2":
			if v2 == "" {
				v2 = m.MountPoint
			}
		}
	}
	var paths []string
	for _, pid := range pids {
		p, err := procfs.NewProc(pid)
		if err != nil {
			return nil, fmt.Errorf("process %d: %w", pid, err)
		}
		groups, err := p.Cgroups()
		if err != nil {
			return nil, fmt.Errorf("process %d: /proc cgroup: %w", pid, err)
		}
		if path := cpuStatPath(groups, v1, v2); path != "" && !slices.Contains(paths, path) {
			paths = append(paths, path)
		}
	}
	return paths, nil
}

// cpuStatPath is the cpu.stat of one process's CPU group, "" if none.
func cpuStatPath(groups []procfs.Cgroup, v1, v2 string) string {
	for _, g := range groups {
		var path string
		switch {
		case v1 != "" && slices.Contains(g.Controllers, "cpu"):
			path = filepath.Join(v1, g.Path, "cpu.stat")
		case v2 != "" && g.HierarchyID == 0:
			path = filepath.Join(v2, g.Path, "cpu.stat")
		default:
			continue
		}
		if _, err := os.Stat(path); err == nil {
			return path
		}
	}
	return ""
}

// readCPUThrottle reads a cpu.stat: v1 counts the wait in throttled_time
// (ns), v2 in throttled_usec.
func readCPUThrottle(path string) (CPUThrottle, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return CPUThrottle{}, err
	}
	return parseCPUStat(b)
}

func parseCPUStat(b []byte) (CPUThrottle, error) {
	var t CPUThrottle
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil {
			return t, fmt.Errorf("cpu.stat %s: %w", key, err)
		}
		switch key {
		case "nr_periods":
			t.Periods = n
		case "nr_throttled":
			t.Throttled = n
		case "throttled_time":
			t.Waited = time.Duration(n)
		case "throttled_usec":
			t.Waited = time.Duration(n) * time.Microsecond
		}
	}
	return t, sc.Err()
}
