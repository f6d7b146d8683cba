//go:build !unix

package main

import "os"

// writableByMe opens path for appending without writing to it.
func writableByMe(path string) bool {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return false
	}
	f.Close()
	return true
}
