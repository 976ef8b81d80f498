// Secrets in a Go struct (tests/integration/test_secrets.py); the literals stay out of the stop's excerpt.
package main

import "fmt"

type Config struct {
	User     string
	Password string
	Tokens   int
}

func load() (Config, string) {
	return Config{User: "bob", Password: "hunter2-go-field", Tokens: 3}, "AKIAIOSFODNN7EXAMPLE"
}

func main() {
	config, awsKey := load()
	//
	//
	fmt.Println(config.User, len(awsKey), config.Tokens) // stop here
}
