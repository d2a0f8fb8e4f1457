package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	gcaws "gocloud.dev/aws"
	"gocloud.dev/blob"
	"gocloud.dev/blob/s3blob"
)

// s3 query parameters handled here rather than by gocloud's
// V2ConfigFromURLParams; every parameter either is handled or is refused.
const (
	s3ParamPathStyle       = "use_path_style"
	s3ParamLegacyPathStyle = "s3ForcePathStyle"
	s3ParamDisableHTTPS    = "disable_https"
	s3ParamEndpoint        = "endpoint"
)

func (o *Opener) openS3(ctx context.Context, u *url.URL) (Store, error) {
	name := u.Host
	if name == "" {
		return nil, fmt.Errorf("%w: s3 URL without a bucket", ErrUnsupportedURL)
	}
	q := u.Query()
	shown := url.Values{} // the query URL() renders: the same parameters
	for k, v := range q {
		shown[k] = v
	}
	var clientOpts []func(*s3.Options)
	for _, key := range []string{s3ParamPathStyle, s3ParamLegacyPathStyle} {
		if v := q.Get(key); v != "" {
			q.Del(key)
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, fmt.Errorf("%w: s3://%s: %s=%q is not a boolean", ErrUnsupportedURL, name, key, v)
			}
			clientOpts = append(clientOpts, func(o *s3.Options) { o.UsePathStyle = b })
		}
	}
	if v := q.Get(s3ParamDisableHTTPS); v != "" {
		q.Del(s3ParamDisableHTTPS)
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("%w: s3://%s: %s=%q is not a boolean", ErrUnsupportedURL, name, s3ParamDisableHTTPS, v)
		}
		clientOpts = append(clientOpts, func(o *s3.Options) { o.EndpointOptions.DisableHTTPS = b })
	}
	if v := q.Get(s3ParamEndpoint); v != "" {
		eu, err := url.Parse(v)
		if err != nil || eu.Host == "" {
			return nil, fmt.Errorf("%w: s3://%s: endpoint is not an absolute URL", ErrUnsupportedURL, name)
		}
		if eu.User != nil {
			return nil, fmt.Errorf("%w: s3://%s: credentials must not be part of the endpoint URL", ErrUnsupportedURL, name)
		}
	}
	cfg, err := gcaws.V2ConfigFromURLParams(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("%w: s3://%s: %w", ErrUnsupportedURL, name, err)
	}
	if cfg.Region == "" {
		// Without a region every request fails before it is sent; say so
		// now rather than as an ambiguous commit later.
		return nil, fmt.Errorf("%w: s3://%s: no region (add region=... to the URL or set AWS_REGION)", ErrUnsupportedURL, name)
	}
	if cfg.Credentials != nil && !credentialSourceConfigured(q) {
		cfg.Credentials = noCredentialsHint{inner: cfg.Credentials, bucket: name}
	}
	client := s3.NewFromConfig(cfg, clientOpts...)
	b, err := s3blob.OpenBucket(ctx, client, name, &s3blob.Options{
		// The transfer manager does not take this from the client; without
		// it S3-compatible servers get checksum trailers they may refuse.
		RequestChecksumCalculation: cfg.RequestChecksumCalculation,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: s3://%s: %w", ErrUnsupportedURL, name, err)
	}
	query := shown.Encode()
	s := newStore(&s3Backend{name: name, client: client, creds: cfg.Credentials, b: b, opts: o.opts, query: query})
	st, err := subRoot(s, u.Path)
	if err != nil {
		_ = b.Close()
		return nil, err
	}
	return st, nil
}

// s3Backend stores objects in an S3 bucket through s3blob; PutIfAbsent talks
// to the S3 client directly so that it controls retries.
type s3Backend struct {
	name   string
	client *s3.Client
	creds  aws.CredentialsProvider // nil: anonymous
	b      *blob.Bucket
	opts   Options
	query  string // "" or "region=...", rendered by url
}

func (s *s3Backend) bucket(context.Context) (*blob.Bucket, error) { return s.b, nil }

func (s *s3Backend) put(ctx context.Context, key string, data []byte) error {
	return gcPut(ctx, s.b, key, data)
}

func (s *s3Backend) newWriter(ctx context.Context, key string) (Writer, error) {
	return gcNewWriter(ctx, s.b, key)
}

func (s *s3Backend) checkKey(string) error { return nil }

func (s *s3Backend) url(root string) string {
	u := url.URL{Scheme: "s3", Host: s.name, RawQuery: s.query}
	if root != "" {
		u.Path = "/" + root[:len(root)-1]
	}
	return u.String()
}

func (s *s3Backend) close() error { return s.b.Close() }

// putOnce sends one PutObject with If-None-Match: * and the SDK's retries
// turned off: an SDK retry after a 5xx that the server had in fact stored
// would come back as 412 and be mistaken for a lost race.
func (s *s3Backend) putOnce(ctx context.Context, key string, data []byte) error {
	_, err := s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:        aws.String(s.name),
		Key:           aws.String(key),
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
		ContentType:   aws.String("application/octet-stream"),
		IfNoneMatch:   aws.String("*"),
	}, func(o *s3.Options) { o.Retryer = aws.NopRetryer{} })
	return err
}

// s3Outcome classifies a PutObject error.
type s3Outcome int

const (
	s3Failed    s3Outcome = iota // definitely not stored (a 4xx, or never sent)
	s3Exists                     // 412 Precondition Failed
	s3Conflict                   // 409 ConditionalRequestConflict: retry
	s3Ambiguous                  // 5xx, timeout, broken connection: may be stored
)

func classifyPut(err error) s3Outcome {
	status := 0
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	code := ""
	var ae smithy.APIError
	if errors.As(err, &ae) {
		code = ae.ErrorCode()
	}
	switch {
	case status == http.StatusPreconditionFailed || code == "PreconditionFailed":
		return s3Exists
	case status == http.StatusConflict || code == "ConditionalRequestConflict":
		return s3Conflict
	case status >= 500:
		return s3Ambiguous
	case status != 0:
		return s3Failed
	}
	// No HTTP response. A refused connection never carried the request.
	var ne *net.OpError
	if errors.As(err, &ne) && ne.Op == "dial" {
		return s3Failed
	}
	return s3Ambiguous
}

// putIfAbsent: PutObject with If-None-Match: *. 412 is ErrAlreadyExists;
// 409 ConditionalRequestConflict is retried with back-off up to
// S3ConflictRetries times; an ambiguous failure is re-sent up to
// S3UnknownRetries times, and once an attempt was ambiguous a later 412 can
// no longer tell our write from a rival's, so it is ErrCommitStateUnknown.
func (s *s3Backend) putIfAbsent(ctx context.Context, key string, data []byte) error {
	if s.creds != nil {
		// A credentials failure means the request was never sent: report it
		// as a plain failure, not as an ambiguous commit. (Cached: cheap.)
		if _, err := s.creds.Retrieve(ctx); err != nil {
			return fmt.Errorf("retrieve S3 credentials: %w", err)
		}
	}
	backoff := s.opts.S3RetryBackoff
	conflicts, unknowns := 0, 0
	var ambiguous error // the first ambiguous failure, if any
	for {
		err := s.putOnce(ctx, key, data)
		if err == nil {
			return nil
		}
		if cerr := ctx.Err(); cerr != nil {
			// Cancelled while the request may have been in flight.
			return &classErr{class: ErrCommitStateUnknown, cause: err}
		}
		switch classifyPut(err) {
		case s3Exists:
			if ambiguous != nil {
				return &classErr{class: ErrCommitStateUnknown, cause: fmt.Errorf("412 after an earlier attempt failed ambiguously (%w): %w", ambiguous, err)}
			}
			return &classErr{class: ErrAlreadyExists, cause: err}
		case s3Conflict:
			if conflicts >= s.opts.S3ConflictRetries {
				if ambiguous != nil {
					return &classErr{class: ErrCommitStateUnknown, cause: err}
				}
				return fmt.Errorf("conditional write still conflicting after %d retries: %w", conflicts, err)
			}
			conflicts++
		case s3Ambiguous:
			if ambiguous == nil {
				ambiguous = err
			}
			if unknowns >= s.opts.S3UnknownRetries {
				return &classErr{class: ErrCommitStateUnknown, cause: err}
			}
			unknowns++
		default:
			if ambiguous != nil {
				return &classErr{class: ErrCommitStateUnknown, cause: err}
			}
			return err
		}
		if err := sleepCtx(ctx, backoff); err != nil {
			if ambiguous != nil {
				return &classErr{class: ErrCommitStateUnknown, cause: err}
			}
			return err
		}
		backoff *= 2
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// list pages through ListObjectsV2, setting StartAfter on the first request
// (blob.ListOptions has no start-after; BeforeList exposes the S3 input).
// Keys are also filtered client-side, for servers that ignore StartAfter.
func (s *s3Backend) list(ctx context.Context, prefix, startAfter string) iter.Seq2[FileInfo, error] {
	return func(yield func(FileInfo, error) bool) {
		opts := &blob.ListOptions{Prefix: prefix}
		if startAfter != "" {
			opts.BeforeList = func(as func(any) bool) error {
				var in *s3.ListObjectsV2Input
				if as(&in) && in.ContinuationToken == nil {
					in.StartAfter = aws.String(startAfter)
				}
				return nil
			}
		}
		token := blob.FirstPageToken
		var last string
		for {
			objs, next, err := s.b.ListPage(ctx, token, listPageSize, opts)
			if err != nil {
				yield(FileInfo{}, err)
				return
			}
			page := make([]FileInfo, 0, len(objs))
			for _, o := range objs {
				// Skip "directory marker" objects ("dir/") that consoles and
				// some Hadoop connectors create: they are not files.
				if o.IsDir || o.Key <= startAfter || strings.HasSuffix(o.Key, "/") {
					continue
				}
				page = append(page, FileInfo{Path: o.Key, Size: o.Size, ModTime: o.ModTime})
			}
			// S3 returns keys in UTF-8 byte order; keep the promise even if a
			// compatible server does not.
			sort.Slice(page, func(i, j int) bool { return page[i].Path < page[j].Path })
			for _, fi := range page {
				if fi.Path <= last && last != "" {
					continue
				}
				last = fi.Path
				if !yield(fi, nil) {
					return
				}
			}
			if len(next) == 0 {
				return
			}
			token = next
		}
	}
}

// noCredentialsHint turns a failed credential retrieval into a
// *NoCredentialsError; it wraps the SDK's default chain only when no source
// was configured (credentialSourceConfigured), so that a broken profile or
// an expired SSO session keeps the SDK's own explanation.
type noCredentialsHint struct {
	inner  aws.CredentialsProvider
	bucket string
}

func (p noCredentialsHint) Retrieve(ctx context.Context) (aws.Credentials, error) {
	c, err := p.inner.Retrieve(ctx)
	if err != nil && ctx.Err() == nil {
		return c, &NoCredentialsError{Bucket: p.bucket, Err: err}
	}
	return c, err
}

// credentialSourceConfigured reports whether anything names AWS credentials
// for the SDK's default chain: the environment variables of static keys,
// profiles, web identity or container credentials, a profile URL parameter,
// or an existing shared config or credentials file. (With none, the chain
// can only end at the EC2 instance metadata service.)
func credentialSourceConfigured(q url.Values) bool {
	if q.Get("profile") != "" || q.Get("anonymous") != "" {
		return true
	}
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI"} {
		if os.Getenv(v) != "" {
			return true
		}
	}
	files := []string{os.Getenv("AWS_SHARED_CREDENTIALS_FILE"), os.Getenv("AWS_CONFIG_FILE")}
	if home, err := os.UserHomeDir(); err == nil {
		files = append(files, filepath.Join(home, ".aws", "credentials"), filepath.Join(home, ".aws", "config"))
	}
	for _, f := range files {
		if f == "" {
			continue
		}
		if _, err := os.Stat(f); err == nil {
			return true
		}
	}
	return false
}
