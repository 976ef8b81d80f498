// The conformance program (the same computation as conformance.py, .c, .cpp and rust/): prints and exits with 13.
package main

import (
	"fmt"
	"os"
	"time"
)

func add(a, b int) int { // add starts
	total := a + b // in add
	return total
}

func main() {
	x := 3
	y := 4
	s := add(x, y)           // call add
	for i := 0; i < 4; i++ { // loop
		s += i // loop body
	}
	fmt.Printf("result %d\n", s) // print result
	for len(os.Args) > 1 {       // with an argument, stay until killed
		time.Sleep(time.Minute)
	}
	os.Exit(s)
}
