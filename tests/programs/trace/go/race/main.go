// A lost update, the same every run: two goroutines each add 1 to a shared counter N times (the first argument,
// default 500), reading it, then both waiting for the other, then writing what each read plus one, so every
// increment of one overwrites the other's: the counter ends at N, not 2N. The same program is in ../../race.py.
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
)

var counter int

// meet waits until the other goroutine has reached its meet too: each posts to the other's channel, then waits
// for the other's post.
func meet(mine, theirs chan struct{}) {
	theirs <- struct{}{}
	<-mine
}

func work(rounds int, mine, theirs chan struct{}, done *sync.WaitGroup) {
	defer done.Done()
	for i := 0; i < rounds; i++ {
		seen := counter
		meet(mine, theirs) // both have read the counter
		counter = seen + 1 // the write
		meet(mine, theirs) // both have written it
	}
}

func main() {
	rounds := 500
	if len(os.Args) > 1 {
		rounds, _ = strconv.Atoi(os.Args[1])
	}
	first, second := make(chan struct{}, 1), make(chan struct{}, 1)
	var done sync.WaitGroup // before the goroutines
	done.Add(2)
	go work(rounds, first, second, &done)
	go work(rounds, second, first, &done)
	done.Wait()
	fmt.Printf("counter %d of %d\n", counter, 2*rounds) // after the goroutines
}
