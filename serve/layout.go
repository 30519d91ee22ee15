package serve

import (
	"encoding/hex"

	"github.com/stackimage/stackimage/symbolicator"
	"github.com/stackimage/stackimage/uuid"
)

// parseDebugID reads a module's identifier as symbolicator sends it: a
// debug_id ("67e9247c-814e-392b-a027-dbde6748fcbf", optionally with an
// appendix "-0"), a Breakpad id (33 hex digits ending in the age 0) or a
// code_id (32 hex digits). Only hex digits and dashes in those places are
// accepted: the UUID is the only part of a request that ever reaches a
// path or an object key.
func parseDebugID(s string) (uuid.UUID, error) { return symbolicator.ParseDebugID(s) }

// simple is the UUID as 32 lower-case hex digits.
func simple(u uuid.UUID) string { return hex.EncodeToString(u[:]) }
