package aggregate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
)

// DefaultGroupFrames is how many in-app functions, from the innermost,
// make a group's fingerprint by default.
const DefaultGroupFrames = 3

// GroupOptions say how stacks are grouped.
type GroupOptions struct {
	// Frames is how many functions, innermost first, make the
	// fingerprint; zero means DefaultGroupFrames, -1 all of them.
	Frames int
	// InApp says which images are the app's own code beyond the main
	// executables and the images inside their .app bundles.
	InApp InApp
	// Label, when set, adds that label's value to the fingerprint: one
	// group per watched API, say.
	Label string
}

// InApp matches images that are the app's own code. The main executable
// and every image under its .app bundle always are.
type InApp struct {
	// Names are path.Match patterns of image names ("MyKit", "Lib*").
	Names []string
	// Paths are path.Match patterns of image paths; a pattern ending in
	// "/" matches every path under it.
	Paths []string
}

// Matches reports whether an image with this name and path matches a
// pattern.
func (in InApp) Matches(name, imagePath string) bool {
	for _, p := range in.Names {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	for _, p := range in.Paths {
		if strings.HasSuffix(p, "/") && strings.HasPrefix(imagePath, p) {
			return true
		}
		if ok, _ := path.Match(p, imagePath); ok && imagePath != "" {
			return true
		}
	}
	return false
}

// Group is the stacks that share a fingerprint.
type Group struct {
	// ID is a short hash of the fingerprint: stable across runs and
	// builds, as the fingerprint names functions, not addresses.
	ID string `json:"id"`
	// Fingerprint is the functions (and label) the group is told by,
	// innermost first.
	Fingerprint []string `json:"fingerprint"`
	// InApp says the fingerprint is made of in-app frames; false when no
	// frame of the stacks was in-app and all frames were used.
	InApp  bool  `json:"in_app"`
	Count  int64 `json:"count"`
	Weight int64 `json:"weight"`
	// Stacks is how many unique stacks the group holds.
	Stacks int `json:"unique_stacks"`
	// FirstSeen and LastSeen bound the records' timestamps; absent when
	// none had one.
	FirstSeen time.Time `json:"first_seen,omitzero"`
	LastSeen  time.Time `json:"last_seen,omitzero"`
	// AppVersions, OSVersions and Devices are where the group was seen,
	// most frequent first, at most MaxListed each; the *Count fields say
	// how many distinct values there were.
	AppVersions      []Seen `json:"app_versions,omitempty"`
	AppVersionsCount int    `json:"app_versions_count"`
	OSVersions       []Seen `json:"os_versions,omitempty"`
	OSVersionsCount  int    `json:"os_versions_count"`
	Devices          []Seen `json:"devices,omitempty"`
	DevicesCount     int    `json:"devices_count"`
	// Representative is the group's most frequent unique stack.
	Representative []Frame `json:"representative"`
	// Stack is Representative's index in Result.Stacks.
	Stack int32 `json:"-"`
}

// Seen is one value a group was seen with, and how often.
type Seen struct {
	Value string `json:"value"`
	Count int64  `json:"count"`
}

// MaxListed bounds a group's lists of versions and devices.
const MaxListed = 10

// Frame is one function of a representative stack.
type Frame struct {
	Function string `json:"function,omitempty"`
	Image    string `json:"image,omitempty"`
	// Offset is the lookup address's offset in the image.
	Offset  Address `json:"offset"`
	File    string  `json:"file,omitempty"`
	Line    int     `json:"line,omitempty"`
	Inlined bool    `json:"inlined,omitempty"`
	InApp   bool    `json:"in_app,omitempty"`
}

// MarkInApp sets each image's InApp: a main executable, an image under a
// main executable's .app bundle, or one in matches.
func (r *Result) MarkInApp(in InApp) {
	var bundles []string
	for _, im := range r.Images {
		if b := bundleOf(im.Path); im.Main && b != "" && !slices.Contains(bundles, b) {
			bundles = append(bundles, b)
		}
	}
	for i := range r.Images {
		im := &r.Images[i]
		im.InApp = im.Main || in.Matches(im.Name, im.Path)
		for _, b := range bundles {
			if strings.HasPrefix(im.Path, b) {
				im.InApp = true
			}
		}
	}
}

// bundleOf returns the .app bundle directory holding an executable, with
// its trailing slash ("/…/App.app/"); "" when it is in none.
func bundleOf(p string) string {
	if i := strings.LastIndex(p, ".app/"); i >= 0 {
		return p[:i+len(".app/")]
	}
	return ""
}

// FunctionName is how a line is named in the outputs: its function, or
// for an address no symbol names, its image and the offset the input
// gave ("UIKitCore+0x4d2a0", a return address's for a caller), so that
// each unnamed frame stays a frame of its own in flame graphs and
// profiles; "???" for an address in no image.
func (r *Result) FunctionName(loc *Location, line Line) string {
	if line.Function != "" {
		return line.Function
	}
	if loc.Image >= 0 {
		return unknownName(r.Images[loc.Image].Name, loc.writtenOffset())
	}
	return "???"
}

// groupName is how a line counts in a group's fingerprint: its function,
// or for an address no symbol names, its image and "???" (never the
// address, which changes with every build and OS version).
func (r *Result) groupName(loc *Location, line Line) string {
	if line.Function != "" {
		return line.Function
	}
	if loc.Image >= 0 {
		return r.Images[loc.Image].Name + "!???"
	}
	return "???"
}

// Groups groups the unique stacks by fingerprint, most weighty first (by
// count when weights tie). See docs/aggregate.md for the rules, which
// follow Sentry's grouping of native stacks.
func (r *Result) Groups(opts GroupOptions) []*Group {
	r.MarkInApp(opts.InApp)
	n := opts.Frames
	if n == 0 {
		n = DefaultGroupFrames
	}
	byFingerprint := map[string]*Group{}
	var groups []*Group
	stackGroup := make([]*Group, len(r.Stacks))
	stackWeight := make([]int64, len(r.Stacks))
	type seenSets struct{ apps, oses, devices map[string]int64 }
	seen := map[*Group]*seenSets{}
	for _, s := range r.Samples {
		stackWeight[s.Stack] += s.Weight
	}
	for _, s := range r.Samples {
		var label string
		if opts.Label != "" {
			for _, l := range r.attrs[s.Attrs].Labels {
				if l.Key == opts.Label {
					label = l.Value
				}
			}
		}
		g := stackGroup[s.Stack]
		if g == nil || opts.Label != "" {
			fp, inApp := r.fingerprint(r.Stacks[s.Stack], n)
			if opts.Label != "" {
				fp = append(fp, opts.Label+"="+label)
			}
			key := strings.Join(fp, "\n")
			g = byFingerprint[key]
			if g == nil {
				sum := sha256.Sum256([]byte(key))
				g = &Group{ID: hex.EncodeToString(sum[:8]), Fingerprint: fp, InApp: inApp, Stack: -1}
				byFingerprint[key] = g
				groups = append(groups, g)
				seen[g] = &seenSets{map[string]int64{}, map[string]int64{}, map[string]int64{}}
			}
			stackGroup[s.Stack] = g
		}
		g.Count += s.Count
		g.Weight += s.Weight
		if g.Stack < 0 || stackWeight[s.Stack] > stackWeight[g.Stack] ||
			stackWeight[s.Stack] == stackWeight[g.Stack] && s.Stack < g.Stack {
			g.Stack = s.Stack
		}
		if !s.First.IsZero() {
			if g.FirstSeen.IsZero() || s.First.Before(g.FirstSeen) {
				g.FirstSeen = s.First
			}
			if s.Last.After(g.LastSeen) {
				g.LastSeen = s.Last
			}
		}
		a := r.attrs[s.Attrs]
		ss := seen[g]
		countSeen(ss.apps, a.AppVersion, s.Count)
		countSeen(ss.oses, a.OSVersion, s.Count)
		countSeen(ss.devices, a.Device, s.Count)
	}
	stacksPerGroup := map[*Group]map[int32]bool{}
	for _, s := range r.Samples {
		g := stackGroup[s.Stack]
		if opts.Label != "" {
			continue // a stack may be in several groups; counted below
		}
		if stacksPerGroup[g] == nil {
			stacksPerGroup[g] = map[int32]bool{}
		}
		stacksPerGroup[g][s.Stack] = true
	}
	for _, g := range groups {
		ss := seen[g]
		g.AppVersions, g.AppVersionsCount = topSeen(ss.apps)
		g.OSVersions, g.OSVersionsCount = topSeen(ss.oses)
		g.Devices, g.DevicesCount = topSeen(ss.devices)
		g.Stacks = len(stacksPerGroup[g])
		g.Representative = r.frames(r.Stacks[g.Stack])
	}
	if opts.Label != "" {
		r.countStacksByLabel(groups, opts, n)
	}
	slices.SortStableFunc(groups, func(x, y *Group) int {
		if x.Weight != y.Weight {
			return cmpDesc(x.Weight, y.Weight)
		}
		if x.Count != y.Count {
			return cmpDesc(x.Count, y.Count)
		}
		return strings.Compare(x.ID, y.ID)
	})
	return groups
}

// countStacksByLabel counts each group's unique stacks when a label is
// part of the fingerprint, so that one stack may be in several groups.
func (r *Result) countStacksByLabel(groups []*Group, opts GroupOptions, n int) {
	byKey := map[string]*Group{}
	for _, g := range groups {
		byKey[strings.Join(g.Fingerprint, "\n")] = g
	}
	sets := map[*Group]map[int32]bool{}
	for _, s := range r.Samples {
		var label string
		for _, l := range r.attrs[s.Attrs].Labels {
			if l.Key == opts.Label {
				label = l.Value
			}
		}
		fp, _ := r.fingerprint(r.Stacks[s.Stack], n)
		g := byKey[strings.Join(append(fp, opts.Label+"="+label), "\n")]
		if sets[g] == nil {
			sets[g] = map[int32]bool{}
		}
		sets[g][s.Stack] = true
	}
	for g, set := range sets {
		g.Stacks = len(set)
	}
}

func cmpDesc(a, b int64) int {
	if a > b {
		return -1
	}
	return 1
}

func countSeen(m map[string]int64, v string, n int64) {
	if v != "" {
		m[v] += n
	}
}

// topSeen lists the most frequent values, at most MaxListed, and how many
// distinct values there were.
func topSeen(m map[string]int64) ([]Seen, int) {
	list := make([]Seen, 0, len(m))
	for v, n := range m {
		list = append(list, Seen{v, n})
	}
	slices.SortFunc(list, func(x, y Seen) int {
		if x.Count != y.Count {
			return cmpDesc(x.Count, y.Count)
		}
		return strings.Compare(x.Value, y.Value)
	})
	return list[:min(len(list), MaxListed)], len(m)
}

// fingerprint names a stack by its innermost n in-app functions (all when
// n < 0), inlined functions counting as frames and direct recursion
// collapsed to one frame; with no in-app frame, by all its functions.
func (r *Result) fingerprint(stack []int32, n int) (names []string, inApp bool) {
	all := r.names(stack, false)
	names = r.names(stack, true)
	inApp = len(names) > 0
	if !inApp {
		names = all
	}
	if n >= 0 && len(names) > n {
		names = names[:n]
	}
	return names, inApp
}

// names lists a stack's functions innermost first, recursion collapsed,
// in-app ones only when inAppOnly.
func (r *Result) names(stack []int32, inAppOnly bool) []string {
	var names []string
	for _, id := range stack {
		loc := &r.Locations[id]
		if inAppOnly && (loc.Image < 0 || !r.Images[loc.Image].InApp) {
			continue
		}
		for _, line := range loc.Lines {
			name := r.groupName(loc, line)
			if len(names) > 0 && names[len(names)-1] == name {
				continue // recursion: f calling f counts once
			}
			names = append(names, name)
		}
	}
	return names
}

// frames lists a stack as frames, inlined functions first at each address.
func (r *Result) frames(stack []int32) []Frame {
	var out []Frame
	for _, id := range stack {
		loc := &r.Locations[id]
		var image string
		inApp := false
		if loc.Image >= 0 {
			image = r.Images[loc.Image].Name
			inApp = r.Images[loc.Image].InApp
		}
		for _, line := range loc.Lines {
			out = append(out, Frame{Function: r.FunctionName(loc, line), Image: image, Offset: Address(loc.Offset),
				File: line.File, Line: line.Line, Inlined: line.Inlined, InApp: inApp})
		}
	}
	return out
}

// String formats a frame as one line: "function (file:line) image+0x…".
func (f Frame) String() string {
	s := f.Function
	if f.File != "" {
		s += fmt.Sprintf(" (%s:%d)", path.Base(f.File), f.Line)
	}
	if f.Image != "" {
		s += fmt.Sprintf(" %s+%#x", f.Image, uint64(f.Offset))
	}
	return s
}
