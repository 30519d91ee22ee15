package main

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/stackimage/stackimage/internal/buildversion"
)

// runVersion prints what the Go toolchain recorded in the binary
// (buildversion.Write): the module version, the commit and the Go version.
func runVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", "version", stdout)
	rest, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, rest[0])
	}
	info, ok := debug.ReadBuildInfo()
	buildversion.Write(stdout, "stackimage", info, ok)
	return nil
}
