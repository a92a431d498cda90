//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
)

// sample is the process's memory at one moment, taken after a full GC.
type sample struct {
	Conns      int64  `json:"conns"`
	RSSKiB     int64  `json:"rss_kib"`      // VmRSS after runtime.GC()
	RSSFreeKiB int64  `json:"rss_free_kib"` // VmRSS after debug.FreeOSMemory()
	HeapInuse  uint64 `json:"heap_inuse"`
	StackInuse uint64 `json:"stack_inuse"`
	Goroutines int    `json:"goroutines"`
}

func takeSample(conns int64) sample {
	runtime.GC()
	runtime.GC()
	var s sample
	s.Conns = conns
	s.RSSKiB = vmRSSKiB()
	debug.FreeOSMemory()
	s.RSSFreeKiB = vmRSSKiB()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s.HeapInuse = ms.HeapInuse
	s.StackInuse = ms.StackInuse
	s.Goroutines = runtime.NumGoroutine()
	return s
}

// vmRSSKiB reads VmRSS from /proc/self/status; -1 when unavailable.
func vmRSSKiB() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return -1
			}
			return kb
		}
	}
	return -1
}

type report struct {
	Lib               string  `json:"lib"`
	Base              sample  `json:"base"`
	Now               sample  `json:"now"`
	RSSKiBPerConn     float64 `json:"rss_kib_per_conn"`
	RSSFreeKiBPerConn float64 `json:"rss_free_kib_per_conn"`
	HeapBPerConn      float64 `json:"heap_b_per_conn"`
	StackBPerConn     float64 `json:"stack_b_per_conn"`
}

func writeStats(w http.ResponseWriter, lib string, base, now sample) {
	r := report{Lib: lib, Base: base, Now: now}
	if n := float64(now.Conns); n > 0 {
		r.RSSKiBPerConn = float64(now.RSSKiB-base.RSSKiB) / n
		r.RSSFreeKiBPerConn = float64(now.RSSFreeKiB-base.RSSFreeKiB) / n
		r.HeapBPerConn = (float64(now.HeapInuse) - float64(base.HeapInuse)) / n
		r.StackBPerConn = (float64(now.StackInuse) - float64(base.StackInuse)) / n
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(r); err != nil {
		http.Error(w, fmt.Sprintf("encode stats: %v", err), http.StatusInternalServerError)
	}
}
