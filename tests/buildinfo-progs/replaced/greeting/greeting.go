// Package greeting stands in for a forked dependency.
package greeting

func Hello() string {
	return "hello"
}
