package objstore

import (
	"context"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3Config says where an S3 bucket is and how to sign for it.
type S3Config struct {
	// Endpoint is the server, host:port or with http:// or https://.
	Endpoint string
	Bucket   string
	// Prefix is put before every key ("" for none).
	Prefix string
	Region string
	// AccessKey and SecretKey sign requests; left empty, they come from
	// the environment (AWS_* or MINIO_*).
	AccessKey, SecretKey string
	// Secure uses HTTPS (so does an https:// endpoint).
	Secure bool
	// MaxConns bounds the connections to the endpoint (0: no bound).
	MaxConns int
}

// S3 is an S3-compatible bucket, addressed path-style so that any
// endpoint (versitygw, MinIO, Ceph, AWS) answers.
type S3 struct {
	client *minio.Client
	bucket string
	prefix string
	desc   string
}

// NewS3 makes an S3 store; it does not connect.
func NewS3(cfg S3Config) (*S3, error) {
	var creds *credentials.Credentials
	if cfg.AccessKey != "" {
		creds = credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, "")
	} else {
		creds = credentials.NewChainCredentials([]credentials.Provider{
			&credentials.EnvAWS{}, &credentials.EnvMinio{}})
	}
	endpoint := strings.TrimPrefix(strings.TrimPrefix(cfg.Endpoint, "http://"), "https://")
	secure := cfg.Secure || strings.HasPrefix(cfg.Endpoint, "https://")
	c, err := minio.New(endpoint, &minio.Options{
		Creds:        creds,
		Secure:       secure,
		Region:       cfg.Region,
		BucketLookup: minio.BucketLookupPath,
		Transport:    boundedTransport(cfg.MaxConns),
	})
	if err != nil {
		return nil, err
	}
	prefix := strings.Trim(cfg.Prefix, "/")
	if prefix != "" {
		prefix += "/"
	}
	return &S3{client: c, bucket: cfg.Bucket, prefix: prefix, desc: "s3://" + cfg.Bucket + "/" + prefix}, nil
}

// Get downloads the object at key.
func (s *S3) Get(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	if !ValidKey(key) {
		return nil, 0, badKey(key)
	}
	obj, err := s.client.GetObject(ctx, s.bucket, s.prefix+key, minio.GetObjectOptions{})
	if err != nil {
		return nil, 0, s3Err(err)
	}
	st, err := obj.Stat()
	if err != nil {
		obj.Close()
		return nil, 0, s3Err(err)
	}
	return taggedBody{obj, st.ETag}, st.Size, nil
}

// Put uploads the object; onlyIfAbsent sends If-None-Match: *.
func (s *S3) Put(ctx context.Context, key string, r io.Reader, size int64, onlyIfAbsent bool) error {
	if !ValidKey(key) {
		return badKey(key)
	}
	opts := minio.PutObjectOptions{ContentType: "application/octet-stream"}
	if onlyIfAbsent {
		opts.SetMatchETagExcept("*")
	}
	_, err := s.client.PutObject(ctx, s.bucket, s.prefix+key, r, size, opts)
	if err != nil {
		resp := minio.ToErrorResponse(err)
		if resp.StatusCode == http.StatusPreconditionFailed || resp.Code == "PreconditionFailed" {
			return ErrExists
		}
		return err
	}
	return nil
}

// Stat returns the object's size and ETag.
func (s *S3) Stat(ctx context.Context, key string) (int64, string, error) {
	if !ValidKey(key) {
		return 0, "", badKey(key)
	}
	info, err := s.client.StatObject(ctx, s.bucket, s.prefix+key, minio.StatObjectOptions{})
	if err != nil {
		return 0, "", s3Err(err)
	}
	return info.Size, info.ETag, nil
}

// Describe is the object's s3:// address.
func (s *S3) Describe(key string) string { return s.desc + key }

// List lists the objects under prefix.
func (s *S3) List(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.prefix + prefix, Recursive: true}) {
		if obj.Err != nil {
			return nil, s3Err(obj.Err)
		}
		keys = append(keys, strings.TrimPrefix(obj.Key, s.prefix))
	}
	sort.Strings(keys)
	return keys, nil
}

// Remove deletes the object at key.
func (s *S3) Remove(ctx context.Context, key string) error {
	if !ValidKey(key) {
		return badKey(key)
	}
	err := s.client.RemoveObject(ctx, s.bucket, s.prefix+key, minio.RemoveObjectOptions{})
	if err != nil && s3Err(err) != errNotFound {
		return err
	}
	return nil
}

func s3Err(err error) error {
	resp := minio.ToErrorResponse(err)
	if resp.Code == "NoSuchKey" || resp.StatusCode == http.StatusNotFound {
		return errNotFound
	}
	return err
}

var (
	_ Store = Dir{}
	_ Store = (*HTTP)(nil)
	_ Store = (*S3)(nil)
)
