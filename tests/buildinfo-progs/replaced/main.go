// A program whose dependency is replaced by a directory beside it, as a fork often is.
package main

import (
	"fmt"

	"example.com/greeting"
)

func main() {
	fmt.Println(greeting.Hello())
}
