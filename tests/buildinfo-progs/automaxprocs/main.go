// A program that sets GOMAXPROCS from its CPU quota at start, as many services do.
package main

import (
	"fmt"

	_ "go.uber.org/automaxprocs"
)

func main() {
	fmt.Println("automaxprocs")
}
