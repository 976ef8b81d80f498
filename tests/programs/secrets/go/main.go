// Secrets in a Go struct (tests/integration/test_secrets.py).
package main

import "fmt"

type Config struct {
	User     string
	Password string
	Tokens   int
}

func main() {
	config := Config{User: "bob", Password: "hunter2-go-field", Tokens: 3}
	awsKey := "AKIAIOSFODNN7EXAMPLE"
	fmt.Println(config.User, len(awsKey), config.Tokens) // stop here
}
