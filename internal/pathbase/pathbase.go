// Package pathbase gives the last element of a path written on any
// platform: crash reports, symbol files and requests carry Windows paths
// (backslashes) as well as Unix ones, and every package that prints a
// file or image name reads both the same way.
package pathbase

import (
	"path"
	"strings"
)

// Base is path.Base of p with backslashes taken as slashes. A path without
// a backslash costs no allocation: naming a frame calls it.
func Base(p string) string {
	if strings.IndexByte(p, '\\') >= 0 {
		p = strings.ReplaceAll(p, `\`, "/")
	}
	return path.Base(p)
}
