// Concurrency scenarios for polydbg's delve tests, picked by os.Args[1]: goroutines stuck on each other's
// sync.Mutex, on channels nobody serves, and a counter two goroutines update without a lock.
package main

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Account is guarded by its own mutex; transfer locks both accounts, in argument order.
type Account struct {
	mu      sync.Mutex
	name    string
	balance int
}

var savings = &Account{name: "savings", balance: 100}
var checking = &Account{name: "checking", balance: 50}

// transfer locks from, then (once both transfers hold their first lock) to: opposite orders deadlock.
func transfer(from, to *Account, amount int, first *sync.WaitGroup, done *sync.WaitGroup) {
	defer done.Done()
	from.mu.Lock()
	defer from.mu.Unlock()
	first.Done()
	first.Wait()
	to.mu.Lock() // waits for the other transfer
	from.balance -= amount
	to.balance += amount
	to.mu.Unlock()
}

// mutexDeadlock: two transfers in opposite directions. With "live", main sleeps (a timer keeps the runtime
// from calling it a deadlock, as a server's would); without, main waits for them and the runtime gives up.
func mutexDeadlock(live bool) {
	var first, done sync.WaitGroup
	first.Add(2)
	done.Add(2)
	go transfer(savings, checking, 10, &first, &done)
	go transfer(checking, savings, 20, &first, &done)
	if live {
		for waiters(&savings.mu) == 0 || waiters(&checking.mu) == 0 {
			time.Sleep(time.Millisecond)
		}
		fmt.Println("transfers stuck")
		time.Sleep(time.Hour) // main sleeps
	}
	done.Wait() // main waits for the transfers
}

// waiters reads how many goroutines wait in mu.Lock() (sync.Mutex's state word: waiters above bit 3).
func waiters(mu *sync.Mutex) int32 {
	return atomic.LoadInt32((*int32)(unsafe.Pointer(mu))) >> 3
}

// channelDeadlock: a producer sends results nobody receives while main waits for a done signal nobody sends.
func channelDeadlock() {
	results := make(chan int)
	done := make(chan bool)
	go func() {
		for i := 1; i <= 3; i++ {
			results <- i * i // producer sends
		}
		close(results)
	}()
	fmt.Println("first", <-results)
	<-done // main waits for done
}

var counter int

// lostUpdate: two goroutines increment counter without a lock (a data race: go build -race reports it).
func lostUpdate() {
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() { // a worker
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				counter++ // racy increment
			}
		}()
	}
	wg.Wait()
	fmt.Println("counter", counter)
}

func main() {
	switch os.Args[1] {
	case "mutexes": // [live: main sleeps instead of waiting]
		mutexDeadlock(len(os.Args) > 2 && os.Args[2] == "live")
	case "channels":
		channelDeadlock()
	case "race":
		lostUpdate() // the race scenario
	default:
		fmt.Fprintln(os.Stderr, "unknown scenario", os.Args[1])
		os.Exit(2)
	}
}
