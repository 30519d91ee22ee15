package serve

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/stackimage/stackimage/uuid"
)

// parseDebugID reads a module's identifier as symbolicator sends it: a
// debug_id ("67e9247c-814e-392b-a027-dbde6748fcbf", optionally with an
// appendix "-0"), a Breakpad id (33 hex digits ending in the age 0) or a
// code_id (32 hex digits). Only hex digits and dashes in those places are
// accepted: the UUID is the only part of a request that ever reaches a
// path or an object key.
func parseDebugID(s string) (uuid.UUID, error) {
	t := s
	if len(t) == 38 && strings.HasSuffix(t, "-0") {
		t = t[:36]
	}
	if len(t) == 33 && t[32] == '0' && !strings.Contains(t, "-") {
		t = t[:32]
	}
	u, err := uuid.Parse(t)
	if err != nil {
		return uuid.UUID{}, fmt.Errorf("debug id %q: want a Mach-O UUID (32 hex digits, with or without dashes)", s)
	}
	return u, nil
}

// simple is the UUID as 32 lower-case hex digits.
func simple(u uuid.UUID) string { return hex.EncodeToString(u[:]) }
