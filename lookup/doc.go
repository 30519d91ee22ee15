// Package lookup holds what the project's lookups share: the one error for
// "not found". symtab, debuginfo, breakpadsym, symindex, image (for
// List.Lookup) and symbolize re-export ErrNotFound as their own, so errors.Is(err, ErrNotFound) holds
// for a miss of any Lookup or Resolve, whichever package answered it, and
// a caller never compares a bool from one and an error from another.
//
// It is a leaf: it imports nothing of the project, so that every package
// that looks something up can use it.
package lookup
