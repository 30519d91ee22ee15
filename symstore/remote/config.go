package remote

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/stackimage/stackimage/symstore/objstore"
)

// StoreConfig describes where a configured source's files are, as
// symbolicator's source configuration names it: a directory, an HTTP
// symbol server or an S3 bucket, and the layout its files are kept in.
// A program maps its own configuration file onto it.
type StoreConfig struct {
	// Type is "filesystem", "http" or "s3".
	Type string
	// Path is a filesystem source's directory.
	Path string
	// URL is an http source's base URL; Headers are sent with every
	// request to it.
	URL     string
	Headers map[string]string
	// Endpoint, Bucket, Prefix, Region, AccessKey, SecretKey and Secure
	// describe an s3 source (objstore.S3Config).
	Endpoint, Bucket, Prefix, Region string
	AccessKey, SecretKey             string
	Secure                           bool
	// Layout says where a file with a UUID lies; a filesystem source's
	// may also be "scan" (every file below Path indexed, by
	// symstore.Symbols, not read through a layout).
	Layout Layout
	// MaxDownload and DownloadTimeout bound one file fetched (Config).
	MaxDownload     int64
	DownloadTimeout time.Duration
}

// Scanned reports whether the source is a directory indexed whole rather
// than read through a layout.
func (c *StoreConfig) Scanned() bool { return c.Type == "filesystem" && c.Layout.Type == "scan" }

// Check reports the first thing wrong with the configuration, its
// defaults set (an empty layout type or casing is an error here).
func (c *StoreConfig) Check() error {
	layoutKnown := slices.Contains(Layouts, c.Layout.Type)
	switch c.Type {
	case "filesystem":
		if c.Path == "" {
			return errors.New("a filesystem source needs a path")
		}
		if !c.Scanned() && !layoutKnown {
			return fmt.Errorf("unknown layout %q", c.Layout.Type)
		}
	case "http":
		if !strings.HasPrefix(c.URL, "http://") && !strings.HasPrefix(c.URL, "https://") {
			return errors.New("an http source needs an http:// or https:// url")
		}
		if !layoutKnown {
			return fmt.Errorf("unknown layout %q for an http source", c.Layout.Type)
		}
	case "s3":
		if c.Endpoint == "" || c.Bucket == "" {
			return errors.New("an s3 source needs an endpoint and a bucket")
		}
		if !layoutKnown {
			return fmt.Errorf("unknown layout %q for an s3 source", c.Layout.Type)
		}
	default:
		return fmt.Errorf("type %q: want filesystem, http or s3", c.Type)
	}
	switch c.Layout.Casing {
	case "default", "lowercase", "uppercase":
	default:
		return fmt.Errorf("casing %q: want default, lowercase or uppercase", c.Layout.Casing)
	}
	if c.MaxDownload < 0 || c.DownloadTimeout < 0 {
		return errors.New("max_download and download_timeout must not be negative")
	}
	return nil
}

// OpenStore opens the store the configuration names (a filesystem
// source's directory made if missing); maxConns bounds its connections
// to a remote store: requests beyond it wait.
func (c *StoreConfig) OpenStore(maxConns int) (objstore.Store, error) {
	switch c.Type {
	case "filesystem":
		if err := os.MkdirAll(c.Path, 0o755); err != nil {
			return nil, err
		}
		return objstore.Dir{Root: c.Path}, nil
	case "http":
		return objstore.NewHTTP(objstore.HTTPConfig{URL: c.URL, Headers: c.Headers, MaxConns: maxConns})
	case "s3":
		return objstore.NewS3(objstore.S3Config{Endpoint: c.Endpoint, Bucket: c.Bucket, Prefix: c.Prefix,
			Region: c.Region, AccessKey: c.AccessKey, SecretKey: c.SecretKey, Secure: c.Secure, MaxConns: maxConns})
	}
	return nil, fmt.Errorf("type %q: want filesystem, http or s3", c.Type)
}
