//go:build !unix

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
)

// execExternal runs path with args as a child sharing this process's
// standard streams, and returns its exit status: Windows has no exec that
// keeps the process.
func execExternal(path string, args []string) (int, error) {
	cmd := exec.Command(path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// Ctrl-C and Ctrl-Break reach every process of the console: the child
	// shuts down on them, and this process waits for it rather than
	// exiting first. (signal.Ignore would not do: on Windows an ignored
	// console event falls through to the default handler, which exits.)
	signal.Notify(make(chan os.Signal, 1), os.Interrupt)
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		if code := exit.ExitCode(); code >= 0 {
			return code, nil
		}
		return 1, fmt.Errorf("%s: %v", path, err)
	case err != nil:
		return 1, fmt.Errorf("running %s: %w", path, err)
	}
	return 0, nil
}
