// go_mutex: G goroutines contend one sync.Mutex, each holding it for
// HOLD_US microseconds (a busy hold, so that the holder keeps its thread)
// then pausing PAUSE_US, for SECONDS. With Go's own mutex and block
// profiles on (-profile DIR) it writes them there at the end, the
// runtime's view of the same waits. Prints, as JSON, what it timed: each
// Lock's wait (the time it took), and the run's goroutine time.
//
// -wait S sleeps S seconds first (a tracer finds the program meanwhile);
// -tail S sleeps S seconds after the work (what a tracer serves holds).
// -mode chan: the G goroutines send work items, HOLD_US of work each, on
// an unbuffered channel to one consumer in place of taking the mutex (so
// they wait in chan send); "locks" then counts the sends, "waited_ns"
// their time. -mode select: the same sends, each in a select of two cases
// (the other never ready), so they wait in select. -mode rwmutex: READERS
// of the goroutines (half by default) take rw (a sync.RWMutex) to read,
// the others to write, each holding it HOLD_US. -mode cond: one signaller hands out a ticket every
// HOLD_US through a sync.Cond; the G goroutines wait in Cond.Wait for one.
// -mode wg: each goroutine starts a helper that works HOLD_US and waits for
// it in WaitGroup.Wait, a new WaitGroup each time. -mode recv: one producer
// sends an item every HOLD_US on an unbuffered channel; the G goroutines
// wait in chan receive for one.
//
// usage: go_mutex [-g 8] [-hold 200] [-pause 50] [-s 5] [-wait 0] [-tail 0]
//                 [-mode mutex|chan|select|rwmutex|cond|wg|recv] [-readers G/2] [-profile DIR]
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
	rw            sync.RWMutex
	cmu           sync.Mutex
	cond          = sync.NewCond(&cmu)
	tickets       int
	over          bool
	work          = make(chan time.Duration)
	never         = make(chan time.Duration)
	feed          = make(chan time.Duration)
	waited, locks int64
	hold, pause   time.Duration
	readers       int
	end           time.Time
	mode          string
)

func spin(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}

// worker takes mu (or waits as -mode says) until the end, timing each
// wait. Named, so that its frames read main.worker whatever else the
// file holds.
func worker(wg *sync.WaitGroup, i int) {
	defer wg.Done()
	for time.Now().Before(end) {
		t0 := time.Now()
		switch {
		case mode == "chan":
			work <- hold
			took(t0)
		case mode == "select":
			select {
			case work <- hold:
			case <-never:
			}
			took(t0)
		case mode == "rwmutex" && i >= readers:
			rw.Lock()
			took(t0)
			spin(hold)
			rw.Unlock()
		case mode == "rwmutex":
			rw.RLock()
			took(t0)
			spin(hold)
			rw.RUnlock()
		case mode == "recv":
			<-feed
			took(t0)
		case mode == "wg":
			var done sync.WaitGroup
			done.Add(1)
			go helper(&done)
			done.Wait()
			took(t0)
		case mode == "cond":
			cmu.Lock()
			for tickets == 0 && !over {
				cond.Wait()
			}
			if tickets > 0 {
				tickets--
			}
			cmu.Unlock()
			took(t0)
		default:
			mu.Lock()
			took(t0)
			spin(hold)
			mu.Unlock()
		}
		spin(pause)
	}
}

// helper works a hold for its worker, then says it is done.
func helper(done *sync.WaitGroup) {
	spin(hold)
	done.Done()
}

// took counts one wait that began at T0.
func took(t0 time.Time) {
	atomic.AddInt64(&waited, int64(time.Since(t0)))
	atomic.AddInt64(&locks, 1)
}

// signaller hands out a ticket every hold through cond until the end,
// then wakes every waiter for good.
func signaller() {
	for time.Now().Before(end) {
		spin(hold)
		cmu.Lock()
		tickets++
		cond.Signal()
		cmu.Unlock()
	}
	cmu.Lock()
	over = true
	cond.Broadcast()
	cmu.Unlock()
}

// producer sends an item every hold until the end, then closes feed,
// which lets every receiver go.
func producer() {
	for time.Now().Before(end) {
		spin(hold)
		feed <- hold
	}
	close(feed)
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
	tail := flag.Float64("tail", 0, "seconds to sleep after the work")
	readersFlag := flag.Int("readers", -1, "-mode rwmutex: goroutines that read (half when negative)")
	modeFlag := flag.String("mode", "mutex", "mutex, chan, select, rwmutex, cond, wg or recv (above)")
	flag.Parse()
	time.Sleep(time.Duration(*wait * float64(time.Second)))
	if *profile != "" {
		runtime.SetMutexProfileFraction(1)
		runtime.SetBlockProfileRate(1)
	}
	hold = time.Duration(*holdUs) * time.Microsecond
	pause = time.Duration(*pauseUs) * time.Microsecond
	mode = *modeFlag
	readers = *readersFlag
	if readers < 0 {
		readers = *goroutines / 2
	}
	sending := mode == "chan" || mode == "select"
	var wg sync.WaitGroup
	start := time.Now()
	end = start.Add(time.Duration(*seconds * float64(time.Second)))
	done := make(chan bool)
	if sending {
		go consumer(done)
	}
	if mode == "cond" {
		go signaller()
	}
	if mode == "recv" {
		go producer()
	}
	for i := 0; i < *goroutines; i++ {
		wg.Add(1)
		go worker(&wg, i)
	}
	wg.Wait()
	if sending {
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
	time.Sleep(time.Duration(*tail * float64(time.Second)))
	fmt.Printf("{\"goroutines\":%d,\"locks\":%d,\"waited_ns\":%d,\"elapsed_ns\":%d}\n",
		*goroutines, locks, waited, elapsed.Nanoseconds())
}
