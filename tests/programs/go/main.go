// A Go program for polydbg's delve tests; os.Args[1] picks the scenario (default: basic).
package main

import (
	"fmt"
	"os"
	"sync"
)

type Point struct {
	X, Y  int
	Label string
}

func scale(p Point, k int) Point {
	q := Point{X: p.X * k, Y: p.Y * k, Label: p.Label} // inside scale
	return q
}

func sum(values []int) int {
	total := 0
	for i, v := range values {
		total += v + i*0 // loop body
	}
	return total
}

func basic() {
	numbers := []int{10, 20, 30, 40, 50}
	ages := map[string]int{"ann": 31, "bob": 42}
	origin := Point{X: 1, Y: 2, Label: "origin"}
	count := 7
	squares := make([]int, 100)
	for i := range squares {
		squares[i] = i * i
	}
	fmt.Println("hello from go")
	moved := scale(origin, 3) // call scale
	total := sum(numbers)
	fmt.Println("count", count, "moved", moved.X, "total", total, "ages", len(ages), "squares", len(squares)) // report
}

func worker(id int, wg *sync.WaitGroup, ready chan<- int, release <-chan struct{}) {
	defer wg.Done()
	ready <- id
	<-release // worker parked
}

func goroutines(workers int) {
	var wg sync.WaitGroup
	ready := make(chan int)
	release := make(chan struct{})
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go worker(i, &wg, ready, release)
	}
	for i := 0; i < workers; i++ {
		<-ready
	}
	close(release) // all workers parked
	wg.Wait()
}

func divide(a, b int) int {
	if b == 0 {
		panic(fmt.Sprintf("cannot divide %d by zero", a)) // panics here
	}
	return a / b
}

func spin() {
	fmt.Println("spinning", os.Getpid())
	n := 0
	for n >= 0 {
		n++ // spin loop
	}
	fmt.Println("overflowed", n)
}

func main() {
	mode := "basic"
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	switch mode {
	case "basic":
		basic()
	case "goroutines": // [workers, 3 by default]
		workers := 3
		if len(os.Args) > 2 {
			fmt.Sscan(os.Args[2], &workers)
		}
		goroutines(workers)
	case "panic":
		fmt.Println(divide(10, 0))
	case "spin":
		spin()
	case "deadlock":
		stuck := make(chan int)
		stuck <- 1 // deadlocks here
	case "env":
		wd, _ := os.Getwd()
		fmt.Println("greeting", os.Getenv("POLYDBG_GREETING"), "cwd", wd, "args", os.Args[2:])
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", mode)
		os.Exit(2)
	}
}
