package lookup

import "errors"

// ErrNotFound is returned (or wrapped) when a lookup finds nothing: no
// symbol covers an address, no DWARF describes it, no symbol file has a
// UUID. It is a value, so that a miss costs no allocation.
var ErrNotFound = errors.New("not found")

// NotFound returns an error that says msg and that errors.Is counts as
// ErrNotFound, for a package whose sentinel says more than "not found"
// (compactunwind's "no entry covers the address", the service's "no
// source has symbols for UUID"). A package's fixed message is best made
// once, as a package variable, so that a miss costs no allocation.
func NotFound(msg string) error { return &notFound{msg} }

type notFound struct{ msg string }

func (e *notFound) Error() string        { return e.msg }
func (e *notFound) Is(target error) bool { return target == ErrNotFound }
