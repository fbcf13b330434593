// A program with no dependencies: its build info has the main module and the build settings.
package main

import "fmt"

func main() {
	fmt.Println("plain")
}
