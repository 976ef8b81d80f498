// A function whose first result is a struct wider than a stop report's value: its second result (the error) must
// still show after a step out.
package main

import "fmt"

type Version struct {
	Major, Minor, Patch int
	PreRelease          string
	Metadata            string
}

func parse(text string) (Version, error) {
	v := Version{Major: 1, Minor: 2, Patch: 3, PreRelease: "beta", Metadata: text} // parsed
	return v, nil
}

func main() {
	v, err := parse("build.2024.11.29")
	fmt.Println(v, err)
}
