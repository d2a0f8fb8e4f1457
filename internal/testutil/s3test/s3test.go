package s3test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Fixed test settings. The credentials are the server's root user; they are
// test-only values and guard nothing.
const (
	AccessKeyID     = "lakesink-test-access-key"
	SecretAccessKey = "lakesink-test-secret-key"
	Region          = "us-east-1"
	Bucket          = "lake"
)

// Version is the versitygw release scripts/install-s3-server.sh installs.
const Version = "v1.8.0"

// Server is a running S3-compatible server (or a proxy in front of one).
type Server struct {
	// Endpoint is the server's base URL, http://127.0.0.1:PORT.
	Endpoint string
	// Bucket is the bucket Start created.
	Bucket string
	// Root is the posix backend's folder (buckets are its subfolders).
	Root string
	// Sidecar is the metadata folder, "" when metadata lives in xattrs
	// (Start falls back to a sidecar folder where the filesystem has none).
	Sidecar string

	client *s3.Client
	proc   *process // nil for a proxy view
}

// URL returns the s3:// URL of prefix in the server's bucket, in the form
// internal/storage opens:
// s3://BUCKET/PREFIX?region=us-east-1&endpoint=http://127.0.0.1:PORT&use_path_style=true.
func (s *Server) URL(prefix string) string {
	u := "s3://" + s.Bucket
	if p := strings.Trim(prefix, "/"); p != "" {
		u += "/" + p
	}
	return u + "?region=" + Region + "&endpoint=" + s.Endpoint + "&use_path_style=true"
}

// Client is an S3 client for the server, for checks below lakesink's
// storage layer (raw PutObject, ListMultipartUploads, ...). Its retries are
// off.
func (s *Server) Client() *s3.Client { return s.client }

// Env returns the environment variables a child process needs to reach the
// server through the AWS SDK's default chain (Start already set them in
// this process's environment, which children inherit).
func Env() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + AccessKeyID,
		"AWS_SECRET_ACCESS_KEY=" + SecretAccessKey,
		"AWS_REGION=" + Region,
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_CONFIG_FILE=" + os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE=" + os.DevNull,
	}
}

// required reports whether a missing server must fail rather than skip.
func required() bool {
	if v, _ := strconv.ParseBool(os.Getenv("CI")); v {
		return true
	}
	return os.Getenv("LAKESINK_REQUIRE_S3") != ""
}

// Binary finds the versitygw executable: $LAKESINK_VERSITYGW, then PATH,
// then $GOBIN, each $GOPATH/bin and $HOME/go/bin (where
// scripts/install-s3-server.sh puts it).
func Binary() (string, error) {
	if p := os.Getenv("LAKESINK_VERSITYGW"); p != "" {
		if isExecutable(p) {
			return p, nil
		}
		return "", fmt.Errorf("%w: LAKESINK_VERSITYGW=%s is not an executable file", ErrNotInstalled, p)
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	var dirs []string
	if d := os.Getenv("GOBIN"); d != "" {
		dirs = append(dirs, d)
	}
	for _, d := range filepath.SplitList(os.Getenv("GOPATH")) {
		if d != "" {
			dirs = append(dirs, filepath.Join(d, "bin"))
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, "go", "bin"))
	}
	for _, d := range dirs {
		if p := filepath.Join(d, "versitygw"); isExecutable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: not in PATH nor in %s", ErrNotInstalled, strings.Join(dirs, ", "))
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// Start starts versitygw on 127.0.0.1 with its posix backend over a
// temporary folder, creates the bucket Bucket, checks that conditional
// writes are honoured, sets the AWS environment (see the package doc) and
// stops the server when the test ends. Without versitygw it skips the test
// (fails under CI=true or LAKESINK_REQUIRE_S3).
func Start(t testing.TB) *Server {
	t.Helper()
	return start(t, false)
}

// start is Start; sidecarFirst starts with metadata in a sidecar folder
// without trying xattrs first.
func start(t testing.TB, sidecarFirst bool) *Server {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		if required() {
			t.Fatalf("%v; CI must not skip the S3 tests", err)
		}
		t.Skipf("%v; skipping the S3 test", err)
	}
	for _, kv := range Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	// Settings that would redirect or re-sign the SDK's requests.
	for _, k := range []string{"AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_DEFAULT_REGION"} {
		t.Setenv(k, "")
	}

	dir := t.TempDir()
	root := filepath.Join(dir, "data")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	var (
		proc     *process
		endpoint string
		sidecar  string
	)
	if sidecarFirst {
		sidecar = filepath.Join(dir, "meta")
		if err := os.MkdirAll(sidecar, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		endpoint = "http://127.0.0.1:" + strconv.Itoa(port)
		proc, err = startProcess(bin, port, root, sidecar)
		if err != nil {
			t.Fatal(err)
		}
		client := NewClient(endpoint)
		err = waitReady(t.Context(), client, proc, 60*time.Second)
		if err == nil {
			break
		}
		proc.stop()
		out := proc.output()
		switch {
		case sidecar == "" && strings.Contains(out, "xattr"):
			// The filesystem has no user xattrs: keep metadata in a sidecar folder.
			sidecar = filepath.Join(dir, "meta")
			if err := os.MkdirAll(sidecar, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		case attempt < 3 && strings.Contains(out, "address already in use"):
			continue
		}
		t.Fatalf("%v\nversitygw output:\n%s", err, out)
	}
	t.Cleanup(proc.stop)

	s := &Server{Endpoint: endpoint, Bucket: Bucket, Root: root, Sidecar: sidecar, client: NewClient(endpoint), proc: proc}
	ctx := t.Context()
	if _, err := s.client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(Bucket)}); err != nil {
		t.Fatalf("s3test: create bucket %s: %v\nversitygw output:\n%s", Bucket, err, proc.output())
	}
	if err := CheckConditionalWrites(ctx, s.client, Bucket); err != nil {
		t.Fatalf("%v\nversitygw output:\n%s", err, proc.output())
	}
	return s
}

// Logs returns what the server printed so far (for failure messages).
func (s *Server) Logs() string {
	if s.proc == nil {
		return ""
	}
	return s.proc.output()
}

// NewClient is an S3 client for endpoint with the test credentials, path-style
// addressing and no retries.
func NewClient(endpoint string) *s3.Client {
	return s3.New(s3.Options{
		Region:                     Region,
		BaseEndpoint:               aws.String(endpoint),
		UsePathStyle:               true,
		Credentials:                credentials.NewStaticCredentialsProvider(AccessKeyID, SecretAccessKey, ""),
		Retryer:                    aws.NopRetryer{},
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
}

// CheckConditionalWrites verifies that the server refuses to overwrite an
// existing key with If-None-Match: * on PutObject and on
// CompleteMultipartUpload (412), and that the first object survives. It
// leaves no object behind.
func CheckConditionalWrites(ctx context.Context, c *s3.Client, bucket string) error {
	const putKey, mpuKey = "_s3test/conditional-put", "_s3test/conditional-mpu"
	defer func() {
		for _, k := range []string{putKey, mpuKey} {
			_, _ = c.DeleteObject(context.WithoutCancel(ctx), &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(k)})
		}
	}()
	put := func(body string) error {
		_, err := c.PutObject(ctx, &s3.PutObjectInput{
			Bucket: aws.String(bucket), Key: aws.String(putKey),
			Body: strings.NewReader(body), ContentLength: aws.Int64(int64(len(body))),
			IfNoneMatch: aws.String("*"),
		})
		return err
	}
	if err := put("first"); err != nil {
		return fmt.Errorf("conditional PutObject of a new key: %w", err)
	}
	if err := put("second"); err == nil {
		return fmt.Errorf("%w: a second PutObject with If-None-Match: * on %s succeeded", ErrNoConditionalWrites, putKey)
	} else if status(err) != http.StatusPreconditionFailed {
		return fmt.Errorf("%w: a second PutObject with If-None-Match: * on %s: got %v, want 412", ErrNoConditionalWrites, putKey, err)
	}
	if got, err := get(ctx, c, bucket, putKey); err != nil || got != "first" {
		return fmt.Errorf("%w: %s holds %q (%v) after a refused overwrite, want %q", ErrNoConditionalWrites, putKey, got, err, "first")
	}

	mpu := func(body string) error {
		cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(mpuKey)})
		if err != nil {
			return err
		}
		abort := func() {
			_, _ = c.AbortMultipartUpload(context.WithoutCancel(ctx), &s3.AbortMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(mpuKey), UploadId: cr.UploadId})
		}
		up, err := c.UploadPart(ctx, &s3.UploadPartInput{
			Bucket: aws.String(bucket), Key: aws.String(mpuKey), UploadId: cr.UploadId,
			PartNumber: aws.Int32(1), Body: strings.NewReader(body), ContentLength: aws.Int64(int64(len(body))),
		})
		if err != nil {
			abort()
			return err
		}
		_, err = c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
			Bucket: aws.String(bucket), Key: aws.String(mpuKey), UploadId: cr.UploadId,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: up.ETag, PartNumber: aws.Int32(1)}}},
			IfNoneMatch:     aws.String("*"),
		})
		if err != nil {
			abort()
		}
		return err
	}
	if err := mpu("first"); err != nil {
		return fmt.Errorf("conditional CompleteMultipartUpload of a new key: %w", err)
	}
	if err := mpu("second"); err == nil {
		return fmt.Errorf("%w: a second CompleteMultipartUpload with If-None-Match: * on %s succeeded", ErrNoConditionalWrites, mpuKey)
	} else if status(err) != http.StatusPreconditionFailed {
		return fmt.Errorf("%w: a second CompleteMultipartUpload with If-None-Match: * on %s: got %v, want 412", ErrNoConditionalWrites, mpuKey, err)
	}
	if got, err := get(ctx, c, bucket, mpuKey); err != nil || got != "first" {
		return fmt.Errorf("%w: %s holds %q (%v) after a refused multipart overwrite, want %q", ErrNoConditionalWrites, mpuKey, got, err, "first")
	}
	return nil
}

func get(ctx context.Context, c *s3.Client, bucket, key string) (string, error) {
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return "", err
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	return string(b), err
}

func status(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitReady polls ListBuckets until the server answers, the process exits,
// or timeout passes.
func waitReady(ctx context.Context, c *s3.Client, p *process, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := c.ListBuckets(rctx, &s3.ListBucketsInput{})
		cancel()
		if err == nil {
			return nil
		}
		last = err
		select {
		case <-p.exited:
			return fmt.Errorf("%w: versitygw exited: %v", ErrStart, p.waitErr)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: no answer within %s: %w", ErrStart, timeout, last)
		}
	}
}

// process is a running versitygw.
type process struct {
	cmd     *exec.Cmd
	out     *syncBuffer
	exited  chan struct{}
	waitErr error
	once    sync.Once
}

func startProcess(bin string, port int, root, sidecar string) (*process, error) {
	args := []string{"--port", "127.0.0.1:" + strconv.Itoa(port), "--quiet", "posix"}
	if sidecar != "" {
		args = append(args, "--sidecar", sidecar)
	}
	args = append(args, root)
	cmd := exec.Command(bin, args...)
	// The root credentials go through the environment, not argv (which
	// other users of the machine can read).
	env := []string{"ROOT_ACCESS_KEY_ID=" + AccessKeyID, "ROOT_SECRET_ACCESS_KEY=" + SecretAccessKey, "VGW_REGION=" + Region}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "VGW_") && !strings.HasPrefix(kv, "ROOT_") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrStart, bin, err)
	}
	p := &process{cmd: cmd, out: out, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// stop terminates the server (SIGTERM, then SIGKILL after 5 s) and waits
// for it.
func (p *process) stop() {
	p.once.Do(func() {
		select {
		case <-p.exited:
			return
		default:
		}
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
}

func (p *process) output() string { return p.out.String() }

// syncBuffer keeps the last 64 KiB a process printed.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if over := b.buf.Len() - 64<<10; over > 0 {
		b.buf.Next(over)
	}
	return len(p), nil
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
