package loadgen

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

func TestParseCPUStat(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     CPUThrottle
	}{
		{"cgroup v1", "nr_periods 615\nnr_throttled 47\nthrottled_time 515000000\n", CPUThrottle{Periods: 615, Throttled: 47, Waited: 515 * time.Millisecond}},
		{"cgroup v2", "usage_usec 9000\nuser_usec 6000\nsystem_usec 3000\nnr_periods 20\nnr_throttled 3\nthrottled_usec 12500\nnr_bursts 0\nburst_usec 0\n", CPUThrottle{Periods: 20, Throttled: 3, Waited: 12500 * time.Microsecond}},
		{"no quota", "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n", CPUThrottle{}},
	} {
		got, err := parseCPUStat([]byte(c.in))
		if err != nil || got != c.want {
			t.Errorf("%s: got %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
	if _, err := parseCPUStat([]byte("nr_throttled x\n")); err == nil {
		t.Error("a count that is not a number was read")
	}
}

func TestSubAndAdd(t *testing.T) {
	a := CPUThrottle{Periods: 10, Throttled: 2, Waited: time.Second}
	b := CPUThrottle{Periods: 25, Throttled: 5, Waited: 3 * time.Second}
	if got := b.Sub(a); got != (CPUThrottle{15, 3, 2 * time.Second}) {
		t.Errorf("Sub: %+v", got)
	}
	if got := a.add(b); got != (CPUThrottle{35, 7, 4 * time.Second}) {
		t.Errorf("add: %+v", got)
	}
}

// TestSamplerReadsAQuotaGroup puts a busy process in a cgroup v1 cpu group
// with a quota of a tenth of a CPU, as bench/sidebyside.sh's quota
// condition does, and awaits the sampler's reading of its throttling. It
// needs a writable v1 cpu controller (root on a v1 or hybrid machine).
func TestSamplerReadsAQuotaGroup(t *testing.T) {
	root := "/sys/fs/cgroup/cpu"
	if f, err := os.OpenFile(filepath.Join(root, "cgroup.procs"), os.O_WRONLY, 0); err != nil {
		t.Skipf("no writable cgroup v1 cpu controller: %v", err)
	} else {
		f.Close()
	}
	dir := filepath.Join(root, "herald-loadgen-test-"+strconv.Itoa(os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot make a cpu group: %v", err)
	}
	t.Cleanup(func() { _ = os.Remove(dir) })
	if err := os.WriteFile(filepath.Join(dir, "cpu.cfs_quota_us"), []byte("10000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	busy := exec.Command("sh", "-c", "while :; do :; done")
	if err := busy.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = busy.Process.Kill(); _ = busy.Wait() })
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(busy.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	s := NewSampler([]int{busy.Process.Pid, os.Getpid()})
	first, err := s.Sample(time.Now().UnixNano())
	if err != nil {
		t.Fatal(err)
	}
	if len(s.stats) != 2 {
		t.Fatalf("cpu.stat files %v: want the test group's and this process's", s.stats)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		now, err := s.Sample(time.Now().UnixNano())
		if err != nil {
			t.Fatal(err)
		}
		if d := now.Throttle.Sub(first.Throttle); d.Throttled >= 3 && d.Waited > 0 && d.Periods >= d.Throttled {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no throttling read in 10 s: first %+v, last %+v", first.Throttle, now.Throttle)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
