// The probe of tests/go_oracle.rs: prints what the runtime settled on at start-up, as
// "GOMAXPROCS GC-percent memory-limit", and exits.
package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

func main() {
	procs := runtime.GOMAXPROCS(0)
	gc := debug.SetGCPercent(100)
	debug.SetGCPercent(gc)
	fmt.Println(procs, gc, debug.SetMemoryLimit(-1))
}
