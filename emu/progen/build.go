package progen

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Build says how to compile and link one program.
type Build struct {
	Arch string // "arm64", "x86_64", "armv7" or "i386" (an object file: no linker has i386 here)
	Opt  string // "O0", "O1", "O2"
	// Tables builds unwind tables as fixtures/build.sh does
	// (-fasynchronous-unwind-tables on x86_64, -funwind-tables on arm64,
	// whose compact encoder cannot express asynchronous epilogues);
	// without it -ffreestanding leaves the program with none.
	Tables bool
	// DSYM, when set, is dsymutil-16's path: the program is compiled
	// with -g and its dSYM linked beside the executable (NAME.dSYM), as
	// a crash pipeline keeps it.
	DSYM string
}

// Name is the executable's file name: "<prefix>-<arch>-<opt>", with
// "-notables" when it has no unwind tables and "-g" when it has a dSYM.
func (b Build) Name(prefix string) string {
	n := fmt.Sprintf("%s-%s-%s", prefix, b.Arch, b.Opt)
	if !b.Tables {
		n += "-notables"
	}
	if b.DSYM != "" {
		n += "-g"
	}
	return n
}

// target is how one architecture is built.
type target struct {
	compile, link []string // clang's target flags, ld64.lld's; no link: the object runs (i386)
	unwind        string   // the flag that asks for unwind tables
	// portable builds Program.PortableSource, without jump tables.
	portable bool
}

var targets = map[string]target{
	"arm64": {[]string{"-target", "arm64-apple-macos11"}, []string{"-arch", "arm64", "-platform_version", "macos", "11.0", "11.0"},
		"-funwind-tables", false},
	"x86_64": {[]string{"-target", "x86_64-apple-macos10.15"}, []string{"-arch", "x86_64", "-platform_version", "macos", "10.15", "10.15"},
		"-fasynchronous-unwind-tables", false},
	// armv7 keeps r7 frame records whatever -fomit-frame-pointer says,
	// and clang-16 writes no unwind tables for it.
	"armv7": {[]string{"-target", "armv7-apple-ios9", "-marm"}, []string{"-arch", "armv7", "-platform_version", "ios", "9.0", "9.0"},
		"-fasynchronous-unwind-tables", true},
	// ld64.lld-16 has no i386: the object file is the program.
	"i386": {[]string{"-target", "i386-apple-macos10.12"}, nil, "-fasynchronous-unwind-tables", true},
}

// Portable reports whether the build compiles Program.PortableSource.
func (b Build) Portable() bool { return targets[b.Arch].portable }

// Commands returns the compile and link commands of a build (and
// dsymutil's, with DSYM), as argument lists: the source at src, the
// object and executable written beside it.
// Every build omits frame pointers (-fomit-frame-pointer): only unwind
// tables, or the code itself, describe its frames.
func (b Build) Commands(cc, ld, src, out string) ([][]string, error) {
	t, ok := targets[b.Arch]
	if !ok {
		return nil, fmt.Errorf("progen: no build for architecture %q", b.Arch)
	}
	compile := append([]string{cc}, t.compile...)
	compile = append(compile, "-"+b.Opt, "-fomit-frame-pointer")
	if b.Tables {
		compile = append(compile, t.unwind)
	}
	if b.DSYM != "" {
		compile = append(compile, "-g")
	}
	if t.portable {
		compile = append(compile, "-fno-jump-tables")
	}
	obj := out + ".o"
	if t.link == nil {
		obj = out
	}
	compile = append(compile, "-ffreestanding", "-nostdlib", "-fno-stack-protector", "-fno-builtin", "-c", "-o", obj, src)
	if t.link == nil {
		return [][]string{compile}, nil
	}
	link := append([]string{ld}, t.link...)
	link = append(link, "-e", "_start", "-o", out, obj)
	if b.DSYM != "" {
		return [][]string{compile, link, {b.DSYM, out, "-o", out + ".dSYM"}}, nil
	}
	return [][]string{compile, link}, nil
}

// Compile writes p's source into dir (once per seed) and builds it with
// the compiler cc (clang-16) and linker ld (ld64.lld-16); it returns the
// executable's path.
func (p *Program) Compile(dir, cc, ld string, b Build) (string, error) {
	prefix := fmt.Sprintf("gen%d", p.Seed)
	src, text := filepath.Join(dir, prefix+".c"), p.Source
	if b.Portable() {
		src, text = filepath.Join(dir, prefix+"-portable.c"), p.PortableSource
	}
	if _, err := os.Stat(src); err != nil {
		if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	out := filepath.Join(dir, b.Name(prefix))
	cmds, err := b.Commands(cc, ld, src, out)
	if err != nil {
		return "", err
	}
	for _, c := range cmds {
		if msg, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			return "", fmt.Errorf("progen: seed %d: %s: %v\n%s", p.Seed, strings.Join(c, " "), err, msg)
		}
	}
	return out, nil
}
