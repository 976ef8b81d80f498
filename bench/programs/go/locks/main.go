// The Go debuggee of bench/go_locks.py: N goroutines (os.Args[1]) stuck in the ways a server's get stuck —
// two transfers deadlocked on each other's sync.Mutex, a third of the rest waiting for a mutex main holds, a
// third receiving from a channel nobody sends on, the rest sleeping — while main stops at its tick line.
package main

import (
	"os"
	"strconv"
	"sync"
	"time"
)

type account struct {
	mu      sync.Mutex
	balance int
}

func transfer(from, to *account, ready *sync.WaitGroup) {
	from.mu.Lock()
	ready.Done()
	ready.Wait()
	to.mu.Lock() // deadlocked
	from.balance--
	to.balance++
	to.mu.Unlock()
	from.mu.Unlock()
}

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	var left, right account
	var ready sync.WaitGroup
	ready.Add(2)
	go transfer(&left, &right, &ready)
	go transfer(&right, &left, &ready)
	var busy sync.Mutex
	busy.Lock() // main holds it for ever
	never := make(chan int)
	for i := 2; i < n; i++ {
		switch i % 3 {
		case 0:
			go func() { busy.Lock(); busy.Unlock() }()
		case 1:
			go func() { <-never }()
		default:
			go func() { time.Sleep(time.Hour) }()
		}
	}
	for tick := 0; ; tick++ {
		time.Sleep(time.Millisecond) // tick
	}
}
