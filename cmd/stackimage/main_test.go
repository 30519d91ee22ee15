package main

import (
	"bytes"
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/atos"
	"github.com/stackimage/stackimage/open"
	"github.com/stackimage/stackimage/symstore"
)

func TestParseInterspersed(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    []string
		symbols []string
		json    bool
	}{
		{name: "flags after", args: []string{"dump.json", "--symbols", "a", "--symbols=b", "--json"},
			want: []string{"dump.json"}, symbols: []string{"a", "b"}, json: true},
		{name: "flags before", args: []string{"--json", "dump.json"}, want: []string{"dump.json"}, json: true},
		{name: "double dash", args: []string{"--json", "--", "--symbols"}, want: []string{"--symbols"}, json: true},
		{name: "several positional", args: []string{"a", "--json", "b"}, want: []string{"a", "b"}, json: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			var syms stringList
			fs.Var(&syms, "symbols", "")
			j := fs.Bool("json", false, "")
			got, err := parseInterspersed(fs, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("positional (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.symbols, []string(syms)); diff != "" {
				t.Errorf("--symbols (-want +got):\n%s", diff)
			}
			if *j != tt.json {
				t.Errorf("--json = %v, want %v", *j, tt.json)
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		status   int
		inStderr string
	}{
		{"no command", nil, 2, "Usage:"},
		{"unknown command", []string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{"atos without -o", []string{"atos", "0x1000"}, 2, "-o BINARY is required"},
		{"atos missing binary", []string{"atos", "-o", "/nonexistent/App", "0x1000"}, 1, "/nonexistent/App"},
		{"symbolicate without file", []string{"symbolicate"}, 2, "want one dump file"},
		{"symbolicate missing file", []string{"symbolicate", "/nonexistent.json"}, 1, "/nonexistent.json"},
		{"images without file", []string{"images"}, 2, "want at least one file"},
		{"bad flag", []string{"atos", "--bogus"}, 2, "bogus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			status := run(tt.args, strings.NewReader(""), &stdout, &stderr)
			if status != tt.status {
				t.Errorf("run(%q) = %d, want %d; stderr:\n%s", tt.args, status, tt.status, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.inStderr) {
				t.Errorf("run(%q) stderr = %q, want it to mention %q", tt.args, stderr.String(), tt.inStderr)
			}
		})
	}
}

// TestHelp checks that every command's -h prints its usage, options and
// example to stdout and exits 0, and that the inputs it lists are the
// library's own lists, each with its example: open.Formats for the dumps,
// symstore.SymbolFileKinds for --symbols, atos.Kinds for atos -o.
func TestHelp(t *testing.T) {
	var formats, symbolKinds, atosKinds []string
	for _, f := range open.Formats() {
		formats = append(formats, f.Name, f.Example)
	}
	for _, k := range symstore.SymbolFileKinds {
		symbolKinds = append(symbolKinds, k.Name, k.Example)
	}
	for _, k := range atos.Kinds {
		atosKinds = append(atosKinds, k.Name, k.Example)
	}
	tests := []struct {
		cmd  string
		want [][]string
	}{
		{"symbolicate", [][]string{formats, symbolKinds, {"-symbols", "Example:\n  stackimage symbolicate "}}},
		{"atos", [][]string{atosKinds, {"-arch", "Example:\n  stackimage atos "}}},
		{"index", [][]string{symbolKinds, {"-out", "Example:\n  stackimage index "}}},
		{"images", [][]string{{"Example:\n  stackimage images "}}},
		{"version", nil},
	}
	for _, tt := range tests {
		for _, flag := range []string{"-h", "--help"} {
			var stdout, stderr bytes.Buffer
			if status := run([]string{tt.cmd, flag}, strings.NewReader(""), &stdout, &stderr); status != 0 {
				t.Errorf("%s %s: status %d, want 0", tt.cmd, flag, status)
			}
			if stderr.Len() > 0 {
				t.Errorf("%s %s: stderr %q, want nothing", tt.cmd, flag, stderr.String())
			}
			out := stdout.String()
			if !strings.HasPrefix(out, "Usage: stackimage "+tt.cmd) {
				t.Errorf("%s %s printed %q, want its usage first", tt.cmd, flag, out)
			}
			for _, list := range tt.want {
				for _, s := range list {
					if !strings.Contains(out, s) {
						t.Errorf("%s %s does not mention %q:\n%s", tt.cmd, flag, s, out)
					}
				}
			}
		}
	}
}

// TestBadFlag checks that a flag a command does not have is reported in
// one line with where to read more, exit status 2, and not the whole flag
// list.
func TestBadFlag(t *testing.T) {
	for _, cmd := range []string{"symbolicate", "atos", "index", "images", "version"} {
		for _, args := range [][]string{{"-x"}, {"input", "--no-such-flag=1"}} {
			var stdout, stderr bytes.Buffer
			status := run(append([]string{cmd}, args...), strings.NewReader(""), &stdout, &stderr)
			if status != 2 {
				t.Errorf("%s %q: status %d, want 2", cmd, args, status)
			}
			name := strings.TrimLeft(strings.SplitN(args[len(args)-1], "=", 2)[0], "-")
			want := fmt.Sprintf("stackimage %s: flag provided but not defined: -%s\nrun 'stackimage %s -h' for usage\n", cmd, name, cmd)
			if stderr.String() != want || stdout.Len() > 0 {
				t.Errorf("%s %q: stdout %q, stderr %q; want nothing and %q", cmd, args, stdout.String(), stderr.String(), want)
			}
		}
	}
}
