// Steps out of Go functions and the callees of a traced one, for polydbg's tests: a 3-level call chain (total →
// weigh → clamp), a recursion (depth), several results (split), named ones (measure), a panic a deferred recover
// turns into a named result (safe, mustPositive), and calls of the same functions outside the traced one.
package main

import (
	"errors"
	"fmt"
	"strings"
)

func clamp(n int) int {
	if n > 9 {
		return 9 // clamp
	}
	return n
}

func weigh(word string) int {
	return clamp(len(word)) * 2 // weigh
}

func depth(n int) int {
	if n == 0 {
		return 0 // bottom
	}
	return 1 + depth(n-1)
}

func split(text string) (string, string, error) {
	head, tail, found := strings.Cut(text, "=")
	if !found {
		return "", "", errors.New("no =")
	}
	return head, tail, nil // split
}

func measure(text string) (runes int, lines int) {
	runes = len([]rune(text))
	lines = strings.Count(text, "\n") + 1 // measure
	return
}

func mustPositive(n int) int {
	if n < 0 {
		panic(fmt.Sprintf("negative: %d", n)) // panics
	}
	return n
}

func safe(n int) (result int) {
	defer func() {
		if recover() != nil {
			result = -1
		}
	}()
	return mustPositive(n) // safe
}

func total(words []string) int {
	sum := 0
	for _, word := range words {
		sum += weigh(word)
	}
	return sum + depth(2) + safe(-3)
}

func main() {
	fmt.Println(total([]string{"ab", "abcdefghijkl"}))
	fmt.Println(weigh("xyz"), depth(1)) // not callees of total
	head, tail, err := split("a=b")
	fmt.Println(head, tail, err)
	fmt.Println(measure("a\nbc"))
}
