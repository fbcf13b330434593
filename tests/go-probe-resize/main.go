// The probe of the GOMAXPROCS-after-resize test in tests/go_oracle.rs: a long-running program
// whose CPU limit the test changes while it runs.
//
// With no argument it prints "<unix-nanoseconds> <GOMAXPROCS>" every 20 ms, a program with a
// timer always pending. With the argument "idle" it has no timer at all: it blocks reading
// stdin and answers each line with the same "<unix-nanoseconds> <GOMAXPROCS>".
// Either way it exits when stdin closes, and the ticking one after 30 s regardless.
package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"time"
)

func report() {
	// One write per line: os.Stdout is not buffered.
	fmt.Printf("%d %d\n", time.Now().UnixNano(), runtime.GOMAXPROCS(0))
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "idle" {
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			report()
		}
		return
	}
	go func() {
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
		}
		os.Exit(0)
	}()
	stop := time.After(30 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	for {
		report()
		select {
		case <-tick.C:
		case <-stop:
			return
		}
	}
}
