// Calls for polydbg's Go call-trace tests: a recursion, a method on a pointer and on a value, a panic a caller
// recovers, and goroutines.
package main

import (
	"errors"
	"fmt"
)

func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

type Parser struct{ base int }

func (p *Parser) Parse(text string) int {
	if text == "" {
		panic(errors.New("empty text"))
	}
	return p.base + len(text)
}

func (p Parser) Base() int { return p.base }

func parseAll(p *Parser, texts []string) (parsed int) {
	defer func() {
		if recover() != nil {
			parsed = -1
		}
	}()
	for _, text := range texts {
		parsed += p.Parse(text)
	}
	return parsed
}

func square(x int) int { return x * x }

func main() {
	fmt.Println(fib(6))
	parser := &Parser{base: 10}
	fmt.Println(parseAll(parser, []string{"ab", "", "xyz"}), parser.Base())
	results := make(chan int)
	for i := 1; i <= 4; i++ { // one goroutine at a time: delve reports one of two breakpoints hit at once
		go func(i int) { results <- square(i) }(i)
		fmt.Println(<-results)
	}
}
