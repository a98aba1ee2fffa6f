// go_mutex: G goroutines contend one sync.Mutex, each holding it for
// HOLD_US microseconds (a busy hold, so that the holder keeps its thread)
// then pausing PAUSE_US, for SECONDS. With Go's own mutex and block
// profiles on (-profile DIR) it writes them there at the end, the
// runtime's view of the same waits. Prints, as JSON, what it timed: each
// Lock's wait (the time it took), and the run's goroutine time.
//
// -wait S sleeps S seconds first (a tracer finds the program meanwhile).
// -mode chan: the G goroutines send work items, HOLD_US of work each, on
// an unbuffered channel to one consumer in place of taking the mutex (so
// they wait in chan send); "locks" then counts the sends, "waited_ns"
// their time.
//
// usage: go_mutex [-g 8] [-hold 200] [-pause 50] [-s 5] [-wait 0] [-mode mutex|chan] [-profile DIR]
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

var (
	mu            sync.Mutex
	work          = make(chan time.Duration)
	waited, locks int64
	hold, pause   time.Duration
	end           time.Time
	sendOnChannel bool
)

func spin(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}

// worker takes mu (or sends on work) until the end, timing each wait.
// Named, so that its frames read main.worker whatever else the file holds.
func worker(wg *sync.WaitGroup) {
	defer wg.Done()
	for time.Now().Before(end) {
		t0 := time.Now()
		if sendOnChannel {
			work <- hold
			atomic.AddInt64(&waited, int64(time.Since(t0)))
			atomic.AddInt64(&locks, 1)
		} else {
			mu.Lock()
			atomic.AddInt64(&waited, int64(time.Since(t0)))
			atomic.AddInt64(&locks, 1)
			spin(hold)
			mu.Unlock()
		}
		spin(pause)
	}
}

// consumer does each work item sent, until work is closed.
func consumer(done chan<- bool) {
	for d := range work {
		spin(d)
	}
	done <- true
}

func main() {
	goroutines := flag.Int("g", 8, "goroutines")
	holdUs := flag.Int("hold", 200, "hold, us")
	pauseUs := flag.Int("pause", 50, "pause between holds, us")
	seconds := flag.Float64("s", 5, "seconds")
	profile := flag.String("profile", "", "write Go's mutex and block profiles into this directory")
	wait := flag.Float64("wait", 0, "seconds to sleep before starting")
	mode := flag.String("mode", "mutex", "mutex: take mu; chan: send work on an unbuffered channel")
	flag.Parse()
	time.Sleep(time.Duration(*wait * float64(time.Second)))
	if *profile != "" {
		runtime.SetMutexProfileFraction(1)
		runtime.SetBlockProfileRate(1)
	}
	hold = time.Duration(*holdUs) * time.Microsecond
	pause = time.Duration(*pauseUs) * time.Microsecond
	sendOnChannel = *mode == "chan"
	var wg sync.WaitGroup
	start := time.Now()
	end = start.Add(time.Duration(*seconds * float64(time.Second)))
	done := make(chan bool)
	if sendOnChannel {
		go consumer(done)
	}
	for i := 0; i < *goroutines; i++ {
		wg.Add(1)
		go worker(&wg)
	}
	wg.Wait()
	if sendOnChannel {
		close(work)
		<-done
	}
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
