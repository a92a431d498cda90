package main

import (
	"fmt"
	"net"
	"sync"
	"testing"
	"time"
)

// BenchmarkLoopbackWrite is the raw cost of the floor's unit of work: one
// small write (a 150-byte frame, the size of herald-bench's 128-byte
// publication pushed to a subscriber) to a loopback TCP socket, from 1 or
// 2 writer goroutines, each writing in turn to its own 64 connections whose
// receiving ends are drained by reader goroutines. bytes=1500 is ten such
// frames coalesced into one write.
//
//	go test -C bench -run '^$' -bench LoopbackWrite ./floor
//
// ns/op is wall time per write over all writers (so 2 writers on 2 free
// cores show about half of 1 writer's); ns/write/writer is the wall time a
// writer spends per write; cpu-ns/write is the process's CPU time (user +
// system, readers included) per write.
//
// Loopback inflates the sender's cost: on lo there is no device to hand
// the packet to, so the sender's write() runs the receiving side's TCP
// too — the packet is queued to the backlog and processed by the softirq
// raised in the sender's own syscall (tcp_v4_rcv, queueing on the
// receiving socket, waking its reader), and the ACKs coming back are
// processed the same way. On a real network the receiver's machine does
// that work, and the sender's NIC takes the segment by DMA (with TSO), so
// a write costs the sender less than here. The readers here also take CPU
// from the same cores, as herald-bench's readers do in the measurements.
func BenchmarkLoopbackWrite(b *testing.B) {
	for _, size := range []int{150, 1500} {
		for _, writers := range []int{1, 2} {
			b.Run(fmt.Sprintf("writers=%d/bytes=%d", writers, size), func(b *testing.B) {
				benchLoopbackWrite(b, writers, 64, size)
			})
		}
	}
}

func benchLoopbackWrite(b *testing.B, writers, connsPerWriter, size int) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	var readers sync.WaitGroup
	sets := make([][]net.Conn, writers)
	var all []net.Conn
	defer func() {
		for _, c := range all {
			c.Close()
		}
		readers.Wait()
	}()
	for w := range sets {
		for range connsPerWriter {
			out, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			in, err := ln.Accept()
			if err != nil {
				out.Close()
				b.Fatal(err)
			}
			all = append(all, out, in)
			sets[w] = append(sets[w], out)
			readers.Add(1)
			go func() {
				defer readers.Done()
				buf := make([]byte, 64<<10)
				for {
					if _, err := in.Read(buf); err != nil {
						return
					}
				}
			}()
		}
	}
	msg := make([]byte, size)
	per := b.N / writers
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	cpu0 := cpuTime(b)
	b.SetBytes(int64(size))
	b.ResetTimer()
	start := time.Now()
	for _, set := range sets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				if _, err := set[i%len(set)].Write(msg); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	cpu := cpuTime(b) - cpu0
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
	if n := per * writers; n > 0 {
		b.ReportMetric(float64(elapsed.Nanoseconds())*float64(writers)/float64(n), "ns/write/writer")
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/write")
	}
}
