// A program that sets GOMEMLIMIT from its memory limit at start.
package main

import (
	"fmt"

	_ "github.com/KimMachineGun/automemlimit"
)

func main() {
	fmt.Println("automemlimit")
}
