// Counts to N (the first argument, default 20000) for trace tests: each turn passes the loop body once.
package main

import (
	"fmt"
	"os"
	"strconv"
)

func main() {
	n := 20000
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	total := 0 // before the loop
	for i := 0; i < n; i++ {
		total += i // loop body
		// a comment in the loop
	}
	fmt.Printf("total %d\n", total) // after the loop
}
