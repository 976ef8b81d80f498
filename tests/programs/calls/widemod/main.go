package main

import (
	"fmt"

	"polydbg.test/widemod/version"
)

func main() {
	v, err := version.Parse(1, 2, 3)
	fmt.Println(*v, err)
}
