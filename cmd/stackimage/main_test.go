package main

import (
	"bytes"
	"flag"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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

func TestHelp(t *testing.T) {
	for _, cmd := range []string{"symbolicate", "atos", "images"} {
		var stdout, stderr bytes.Buffer
		if status := run([]string{cmd, "--help"}, strings.NewReader(""), &stdout, &stderr); status != 0 {
			t.Errorf("%s --help: status %d, want 0", cmd, status)
		}
		if !strings.Contains(stderr.String(), "Usage: stackimage "+cmd) {
			t.Errorf("%s --help printed %q, want its usage", cmd, stderr.String())
		}
	}
}
