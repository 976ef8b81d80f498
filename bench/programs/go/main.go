// The Go debuggee of bench/native_flow.py: one breakpoint line, a step, then it runs to the end.
// Built with go build -gcflags='all=-N -l' by the benchmark.
package main

import "fmt"

type point struct {
	X, Y int
}

func totalOf(values []int) int {
	total := 0
	for _, v := range values {
		total += v
	}
	return total
}

func main() {
	values := make([]int, 50)
	for i := range values {
		values[i] = i
	}
	origin := point{X: 3, Y: 4}
	total := totalOf(values)
	mean := total / len(values) // marker: breakpoint
	scaled := mean * origin.X
	fmt.Println("summary:", total, mean, scaled)
}
