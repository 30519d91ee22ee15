package serve

import (
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/symstore/remote"
)

// Config is the service's configuration: the YAML file of --config.
// docs/serve.md documents every key with its default, and the zero value
// of every field means that default: New, Check and ParseConfig read a
// zero Listen as 127.0.0.1:3021, a zero limit as its documented limit, and
// so on (TestZeroValuesAreTheDocumentedDefaults).
type Config struct {
	// Listen is the address to listen on (host:port); the command's
	// --listen overrides it.
	Listen string `yaml:"listen"`
	// Sources are the places symbol files are looked for, in order.
	Sources []SourceConfig `yaml:"sources"`
	// InProcessSources are a Go program's own sources (a
	// *symstore.Symbols, a symstore.MemorySource, a SourceFunc, a
	// remote.Source), asked after Sources. Their indexes are cached like
	// any other's and never shared through the store; answers name them
	// "in-process-1", "in-process-2"…, and a request's own "sources",
	// which pick configured sources by name, leave them out.
	InProcessSources []symstore.Source `yaml:"-"`
	// Store names the source that PUT /v1/symbols writes into and that
	// holds the shared cache of derived indexes; empty for none.
	Store string `yaml:"store"`
	// AllowSources names the configured sources a request's own "sources"
	// may pick from. A request never adds a source of its own.
	AllowSources []string    `yaml:"allow_sources"`
	Cache        CacheConfig `yaml:"cache"`
	Limits       Limits      `yaml:"limits"`
	Auth         AuthConfig  `yaml:"auth"`
	// Log receives the service's structured logs (logs.go); nil for
	// slog's default logger.
	Log *slog.Logger `yaml:"-"`
}

// SourceConfig is one symbol source.
type SourceConfig struct {
	// Name identifies the source in responses, metrics and requests.
	Name string `yaml:"name"`
	// Type is "filesystem", "http" or "s3".
	Type string `yaml:"type"`
	// Path is a filesystem source's directory.
	Path string `yaml:"path"`
	// URL is an http source's base URL.
	URL string `yaml:"url"`
	// Headers are sent with every request to an http source.
	Headers map[string]string `yaml:"headers"`
	// Endpoint, Bucket, Prefix, Region, AccessKey, SecretKey and Secure
	// describe an s3 source; credentials left empty come from the
	// environment (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or
	// MINIO_ROOT_USER/MINIO_ROOT_PASSWORD).
	Endpoint  string `yaml:"endpoint"`
	Bucket    string `yaml:"bucket"`
	Prefix    string `yaml:"prefix"`
	Region    string `yaml:"region"`
	AccessKey string `yaml:"access_key"`
	SecretKey string `yaml:"secret_key"`
	Secure    bool   `yaml:"secure"`
	// Layout says where a file with a UUID lies in the source.
	Layout LayoutConfig `yaml:"layout"`
	// MaxDownload bounds one file fetched from the source; DownloadTimeout
	// bounds the time one fetch may take.
	MaxDownload     ByteSize      `yaml:"max_download"`
	DownloadTimeout time.Duration `yaml:"download_timeout"`
}

// LayoutConfig is a source's directory layout, as symbolicator names them.
type LayoutConfig struct {
	// Type is "scan" (filesystem only: index every file below the path),
	// "unified", "native" (LLDB's UUID directories), "breakpad", "ssqp"
	// (Microsoft's symbol server keys, as symbolicator's "symstore") or
	// "debuginfod".
	Type string `yaml:"type"`
	// Casing is "default", "lowercase" or "uppercase": how the path is
	// cased after the layout built it.
	Casing string `yaml:"casing"`
}

// CacheConfig configures the local cache of derived indexes.
type CacheConfig struct {
	// Dir holds downloads and indexes; empty for a directory under the
	// system's temporary directory.
	Dir string `yaml:"dir"`
	// MaxBytes bounds the index files kept in Dir, with the binaries and
	// dSYMs downloaded beside them for walks; the least recently used go
	// first.
	MaxBytes ByteSize `yaml:"max_bytes"`
	// MissTTL is how long a UUID no source has is remembered as missing;
	// FailedTTL how long a file that could not be indexed is remembered,
	// so that it is not fetched and built again in a loop.
	MissTTL   time.Duration `yaml:"miss_ttl"`
	FailedTTL time.Duration `yaml:"failed_ttl"`
	// Shared keeps derived indexes in the store too (under _index/), so
	// that another instance reads them instead of building them again.
	Shared *bool `yaml:"shared"`
}

// Limits bound what one request, and all of them together, may take.
type Limits struct {
	// MaxConcurrent is the most requests served at once; beyond it a
	// request gets 503 with Retry-After.
	MaxConcurrent int `yaml:"max_concurrent"`
	// RequestTimeout bounds one request; the answer keeps what was done,
	// and modules not ready say "timeout".
	RequestTimeout time.Duration `yaml:"request_timeout"`
	// Body caps, per endpoint.
	MaxSymbolicateBody ByteSize `yaml:"max_symbolicate_body"`
	MaxDumpBody        ByteSize `yaml:"max_dump_body"`
	MaxReportBody      ByteSize `yaml:"max_report_body"`
	MaxUploadBody      ByteSize `yaml:"max_upload_body"`
	// MaxFrames bounds the frames of one answer (every thread together).
	MaxFrames int `yaml:"max_frames"`
	// MaxPending bounds answers kept for GET /requests/{id}.
	MaxPending int `yaml:"max_pending"`
	// BodyTimeout bounds the time a request's body may take to arrive,
	// pushed later by each MinBodyRate bytes that arrive: the body is
	// read before the request takes a slot of MaxConcurrent, so a slow
	// client holds a connection, not a slot.
	BodyTimeout time.Duration `yaml:"body_timeout"`
	MinBodyRate ByteSize      `yaml:"min_body_rate"`
	// MaxFetches bounds the symbol lookups that fetch from the sources
	// at once in the instance (each holds at most one connection to a
	// source at a time); MaxRequestFetches those of one request.
	MaxFetches        int `yaml:"max_fetches"`
	MaxRequestFetches int `yaml:"max_request_fetches"`
	// MaxUploadInflateRatio and MaxUploadInflated bound the bytes one zip
	// upload may inflate: at most the body's size times the ratio, and
	// never more than MaxUploadInflated.
	MaxUploadInflateRatio int      `yaml:"max_upload_inflate_ratio"`
	MaxUploadInflated     ByteSize `yaml:"max_upload_inflated"`
}

// AuthConfig configures bearer-token authentication.
type AuthConfig struct {
	// Token, when set, is required as "Authorization: Bearer TOKEN" on
	// every endpoint but /healthcheck.
	Token string `yaml:"token"`
	// UploadToken is required by PUT /v1/symbols; uploads are refused
	// when it is empty.
	UploadToken string `yaml:"upload_token"`
	// Disabled allows a non-loopback listen address without a Token.
	Disabled bool `yaml:"disabled"`
}

// ByteSize is a size in bytes; YAML may spell it as a number or with a
// unit: 512KiB, 64MiB, 2GiB, 10GB.
type ByteSize int64

// UnmarshalYAML reads a number or a number with a unit.
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseByteSize(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*b = v
	return nil
}

// ParseByteSize reads "123", "64KiB", "64MiB", "2GiB", "10GB", "1TiB".
func ParseByteSize(s string) (ByteSize, error) {
	s = strings.TrimSpace(s)
	units := []struct {
		suffix string
		mul    int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	mul := int64(1)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, mul = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mul
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mul {
		return 0, fmt.Errorf("size %q: want a number of bytes, optionally with KiB, MiB, GiB, KB, MB or GB", s)
	}
	return ByteSize(n * mul), nil
}

// DefaultConfig returns the configuration of `serve --symbols DIR` with
// no file: one filesystem source scanning dir (none when dir is empty).
func DefaultConfig(dir string) Config {
	c := Config{Listen: "127.0.0.1:3021"}
	if dir != "" {
		c.AddSymbolsDir(dir)
	}
	c.setDefaults()
	return c
}

// AddSymbolsDir puts a scanned directory, the source named "local",
// before the configured sources: what --symbols DIR adds to a --config.
func (c *Config) AddSymbolsDir(dir string) {
	c.Sources = append([]SourceConfig{{Name: "local", Type: "filesystem", Path: dir}}, c.Sources...)
	c.setDefaults()
}

// LoadConfig reads a YAML configuration file; keys it does not know are
// an error, so that a misspelled limit is not silently ignored.
func LoadConfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	return ParseConfig(data)
}

// ParseConfig reads a YAML configuration, fills in defaults and checks it.
func ParseConfig(data []byte) (Config, error) {
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && err.Error() != "EOF" {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	c.setDefaults()
	return c, c.check()
}

// Defaults, named for docs/serve.md.
const (
	defaultMaxDownload        = remote.DefaultMaxDownload
	defaultDownloadTimeout    = remote.DefaultDownloadTimeout
	defaultCacheBytes         = 10 << 30
	defaultMissTTL            = time.Minute
	defaultFailedTTL          = 10 * time.Minute
	defaultMaxConcurrent      = 64
	defaultRequestTimeout     = 30 * time.Second
	defaultMaxSymbolicateBody = 8 << 20
	defaultMaxDumpBody        = 256 << 20
	defaultMaxReportBody      = 16 << 20
	defaultMaxUploadBody      = 4 << 30
	defaultMaxFrames          = 1 << 15
	defaultMaxPending         = 1024
	defaultBodyTimeout        = 30 * time.Second
	defaultMinBodyRate        = 1 << 20
	defaultMaxFetches         = 32
	defaultMaxRequestFetches  = 16
	defaultInflateRatio       = 100
	defaultMaxInflated        = 16 << 30
)

func (c *Config) setDefaults() {
	if c.Listen == "" {
		c.Listen = "127.0.0.1:3021"
	}
	for i := range c.Sources {
		s := &c.Sources[i]
		if s.Layout.Type == "" {
			s.Layout.Type = "unified"
			if s.Type == "filesystem" {
				s.Layout.Type = "scan"
			}
		}
		if s.Layout.Casing == "" {
			s.Layout.Casing = "default"
		}
		if s.MaxDownload == 0 {
			s.MaxDownload = defaultMaxDownload
		}
		if s.DownloadTimeout == 0 {
			s.DownloadTimeout = defaultDownloadTimeout
		}
		if s.Type == "s3" && s.Region == "" {
			s.Region = "us-east-1"
		}
	}
	if s := c.sourceNamed(c.Store); s != nil && s.Type == "filesystem" && s.Layout.Type == "scan" {
		// A store is written in the unified layout, so that it can be
		// read back by UUID without scanning.
		s.Layout.Type = "unified"
	}
	if c.Cache.MaxBytes == 0 {
		c.Cache.MaxBytes = defaultCacheBytes
	}
	if c.Cache.MissTTL == 0 {
		c.Cache.MissTTL = defaultMissTTL
	}
	if c.Cache.FailedTTL == 0 {
		c.Cache.FailedTTL = defaultFailedTTL
	}
	if c.Cache.Shared == nil {
		yes := true
		c.Cache.Shared = &yes
	}
	l := &c.Limits
	setInt := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	setSize := func(p *ByteSize, v ByteSize) {
		if *p == 0 {
			*p = v
		}
	}
	setInt(&l.MaxConcurrent, defaultMaxConcurrent)
	setInt(&l.MaxFrames, defaultMaxFrames)
	setInt(&l.MaxPending, defaultMaxPending)
	setInt(&l.MaxFetches, defaultMaxFetches)
	setInt(&l.MaxRequestFetches, defaultMaxRequestFetches)
	setInt(&l.MaxUploadInflateRatio, defaultInflateRatio)
	setSize(&l.MinBodyRate, defaultMinBodyRate)
	setSize(&l.MaxUploadInflated, defaultMaxInflated)
	if l.BodyTimeout == 0 {
		l.BodyTimeout = defaultBodyTimeout
	}
	if l.RequestTimeout == 0 {
		l.RequestTimeout = defaultRequestTimeout
	}
	setSize(&l.MaxSymbolicateBody, defaultMaxSymbolicateBody)
	setSize(&l.MaxDumpBody, defaultMaxDumpBody)
	setSize(&l.MaxReportBody, defaultMaxReportBody)
	setSize(&l.MaxUploadBody, defaultMaxUploadBody)
}

// sourceNamed returns the source named name, or nil.
func (c *Config) sourceNamed(name string) *SourceConfig {
	for i := range c.Sources {
		if name != "" && c.Sources[i].Name == name {
			return &c.Sources[i]
		}
	}
	return nil
}

// Check reports the first thing wrong with the configuration, as New
// would find it: a field left at its zero value stands for its documented
// default (docs/serve.md), so the zero Config is valid (127.0.0.1:3021,
// no sources). Check changes nothing in c.
func (c *Config) Check() error {
	d := *c
	d.Sources = slices.Clone(c.Sources)
	d.setDefaults()
	return d.check()
}

// check is Check of a configuration whose defaults are set.
func (c *Config) check() error {
	names := map[string]*SourceConfig{}
	for i := range c.Sources {
		s := &c.Sources[i]
		where := fmt.Sprintf("config: sources[%d]", i)
		if s.Name == "" {
			return fmt.Errorf("%s: name is required", where)
		}
		if names[s.Name] != nil {
			return fmt.Errorf("%s: name %q used twice", where, s.Name)
		}
		names[s.Name] = s
		sc := s.storeConfig()
		if err := sc.Check(); err != nil {
			return fmt.Errorf("%s (%s): %w", where, s.Name, err)
		}
	}
	if c.Store != "" {
		s := names[c.Store]
		if s == nil {
			return fmt.Errorf("config: store %q names no source", c.Store)
		}
		if s.Type == "http" {
			return fmt.Errorf("config: store %q is an http source, which cannot be written", c.Store)
		}
	}
	for _, a := range c.AllowSources {
		if names[a] == nil {
			return fmt.Errorf("config: allow_sources: %q names no source", a)
		}
	}
	l := c.Limits
	if l.MaxConcurrent < 0 || l.MaxFrames < 0 || l.MaxPending < 0 || l.RequestTimeout < 0 ||
		l.MaxSymbolicateBody < 0 || l.MaxDumpBody < 0 || l.MaxReportBody < 0 || l.MaxUploadBody < 0 ||
		l.MaxFetches < 0 || l.MaxRequestFetches < 0 || l.MaxUploadInflateRatio < 0 || l.BodyTimeout < 0 {
		return fmt.Errorf("config: limits must not be negative")
	}
	if c.Cache.MaxBytes < 0 || c.Cache.MissTTL < 0 || c.Cache.FailedTTL < 0 {
		return fmt.Errorf("config: cache sizes and times must not be negative")
	}
	return c.CheckListen(c.Listen)
}

// CheckListen refuses a listen address other machines can reach when no
// token protects it, unless auth is explicitly disabled.
func (c *Config) CheckListen(addr string) error {
	if c.Auth.Token != "" || c.Auth.Disabled {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("config: listen %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("config: listen %q is not a loopback address: set auth.token, or auth.disabled: true to serve without one", addr)
}
