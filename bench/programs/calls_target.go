// The call-trace bench's Go program: work called N times in a loop, after a line to stop at first.
package main

import (
	"fmt"
	"os"
	"strconv"
)

func work(i int) int {
	return i * 2 // body
}

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	total := 0 // start
	for i := 0; i < n; i++ {
		total += work(i)
	}
	fmt.Println(total)
}
