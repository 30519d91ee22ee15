// Package addrspan answers "what holds this address" over address ranges
// that may overlap: the images of a process, an image's segments and
// sections. Ranges are flattened once (Flatten) into disjoint spans sorted
// by start, each carrying the caller's reference of the range that wins
// there, and searched in O(log n) (Find). Images builds the spans of a
// process's images from their load addresses and sizes by the one rule
// every report format shares (an image of unknown size reaches up to the
// next one, at most MaxOpenRange); image.List uses the same rule with its
// images' segments.
package addrspan
