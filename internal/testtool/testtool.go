package testtool

import (
	"os"
	"os/exec"
	"testing"
)

// RequireEnv is the environment variable that turns a missing program
// from a skip into a failure.
const RequireEnv = "STACKIMAGE_REQUIRE_TOOLS"

// Path returns the path of the program name (a name looked up on PATH,
// or an absolute path). When it is missing, the test fails if RequireEnv
// is set and skips otherwise, naming the Debian package that provides it
// and what the test needs it for.
func Path(tb testing.TB, name, debianPackage, purpose string) string {
	tb.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv(RequireEnv) != "" {
		tb.Fatalf("%s is not installed (%s is set; apt-get install %s): %s", name, RequireEnv, debianPackage, purpose)
	}
	tb.Skipf("%s is not installed (apt-get install %s; `make test` does): %s", name, debianPackage, purpose)
	return ""
}
