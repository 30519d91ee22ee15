//go:build unix

package main

import (
	"fmt"
	"os"
	"syscall"
)

// execExternal replaces this process with path, run with args: the
// program then receives the signals sent to stackimage (a service
// manager's SIGTERM) and its exit status is stackimage's. It returns only
// when the exec failed.
func execExternal(path string, args []string) (int, error) {
	err := syscall.Exec(path, append([]string{path}, args...), os.Environ())
	return 1, fmt.Errorf("running %s: %w", path, err)
}
