// go_mutex: G goroutines contend one sync.Mutex, each holding it for
// HOLD_US microseconds (a busy hold, so that the holder keeps its thread)
// then pausing PAUSE_US, for SECONDS. With Go's own mutex and block
// profiles on (-profile DIR) it writes them there at the end, the
// runtime's view of the same waits. Prints, as JSON, what it timed: each
// Lock's wait (the time it took), and the run's goroutine time.
//
// -wait S sleeps S seconds first (a tracer finds the program meanwhile).
//
// usage: go_mutex [-g 8] [-hold 200] [-pause 50] [-s 5] [-wait 0] [-profile DIR]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"
)

var mu sync.Mutex

func spin(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}

func main() {
	goroutines := flag.Int("g", 8, "goroutines")
	hold := flag.Int("hold", 200, "hold, us")
	pause := flag.Int("pause", 50, "pause between holds, us")
	seconds := flag.Float64("s", 5, "seconds")
	profile := flag.String("profile", "", "write Go's mutex and block profiles into this directory")
	wait := flag.Float64("wait", 0, "seconds to sleep before starting")
	flag.Parse()
	time.Sleep(time.Duration(*wait * float64(time.Second)))
	if *profile != "" {
		runtime.SetMutexProfileFraction(1)
		runtime.SetBlockProfileRate(1)
	}
	var waited, locks int64
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(time.Duration(*seconds * float64(time.Second)))
	for i := 0; i < *goroutines; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				t0 := time.Now()
				mu.Lock()
				atomic.AddInt64(&waited, int64(time.Since(t0)))
				atomic.AddInt64(&locks, 1)
				spin(time.Duration(*hold) * time.Microsecond)
				mu.Unlock()
				spin(time.Duration(*pause) * time.Microsecond)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if *profile != "" {
		for _, name := range []string{"mutex", "block"} {
			f, err := os.Create(filepath.Join(*profile, name+".pb.gz"))
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			pprof.Lookup(name).WriteTo(f, 0)
			f.Close()
		}
	}
	fmt.Printf("{\"goroutines\":%d,\"locks\":%d,\"waited_ns\":%d,\"elapsed_ns\":%d}\n",
		*goroutines, locks, waited, elapsed.Nanoseconds())
}
