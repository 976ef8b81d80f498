// The step-return bench's Go program: a leaf with two results and a recursion, called in a loop, stopped in.
package main

import "fmt"

func weigh(n int) (int, error) {
	total := n * 2 // leaf
	return total, nil
}

func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2) // recursion
}

func main() {
	sum := 0
	for i := 0; i < 1000; i++ {
		v, _ := weigh(i)
		sum += v + fib(12)
	}
	fmt.Println(sum)
}
