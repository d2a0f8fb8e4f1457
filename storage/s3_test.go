package storage_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/storage/storagetest"
)

// fakeS3 starts an in-process gofakes3 server with one bucket and points the
// AWS SDK's credential chain at dummy credentials.
func fakeS3(t *testing.T, bucket string) string {
	t.Helper()
	endpoint, _ := fakeS3Backend(t, bucket)
	return endpoint
}

func fakeS3Backend(t *testing.T, bucket string) (string, *s3mem.Backend) {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	t.Setenv("AWS_ACCESS_KEY_ID", "lakesink-test-key")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "lakesink-test-secret")
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	return srv.URL, backend
}

func s3URL(bucket, prefix, endpoint string) string {
	q := url.Values{"region": {"us-east-1"}, "endpoint": {endpoint}, "use_path_style": {"true"}}
	return "s3://" + bucket + "/" + prefix + "?" + q.Encode()
}

// subtestPrefix is a unique, valid key prefix for one subtest.
func subtestPrefix(t *testing.T) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())
	return name + "-" + hex.EncodeToString(b[:])
}

func TestS3Conformance(t *testing.T) {
	endpoint := fakeS3(t, "lake")
	o, err := storage.NewOpener(storage.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	storagetest.RunConfig(t, suiteConfig(), func(t *testing.T) storage.Store {
		s, err := o.Open(t.Context(), s3URL("lake", subtestPrefix(t), endpoint))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

// TestS3RealServer runs the suite against the server named by
// LAKESINK_S3_URL (e.g. a local versitygw:
// s3://bucket/prefix?region=us-east-1&endpoint=http://127.0.0.1:7070&use_path_style=true,
// credentials in AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY). Each subtest
// works under its own fresh prefix and deletes what it wrote. Passed on
// versitygw v1.8.0 (posix backend), e.g.:
//
//	ROOT_ACCESS_KEY=k ROOT_SECRET_KEY=s versitygw --port 127.0.0.1:7070 posix /tmp/gw &  # with /tmp/gw/lake/
//	AWS_ACCESS_KEY_ID=k AWS_SECRET_ACCESS_KEY=s \
//	LAKESINK_S3_URL='s3://lake/base?region=us-east-1&endpoint=http://127.0.0.1:7070&use_path_style=true' \
//	go test ./storage/ -run 'S3RealServer|CrossProcess'

func TestS3RealServer(t *testing.T) {
	raw := os.Getenv("LAKESINK_S3_URL")
	if raw == "" {
		t.Skip("LAKESINK_S3_URL not set; set it to run the suite against a real S3-compatible server")
	}
	base, err := url.Parse(raw)
	if err != nil {
		t.Fatal("LAKESINK_S3_URL does not parse")
	}
	storagetest.Run(t, func(t *testing.T) storage.Store {
		u := *base
		u.Path = "/" + path.Join(strings.Trim(base.Path, "/"), "lakesink-storagetest", subtestPrefix(t))
		s, err := storage.Open(t.Context(), u.String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx := context.Background()
			for fi, err := range s.List(ctx, "", "") {
				if err != nil {
					t.Logf("cleanup: %v", err)
					break
				}
				_ = s.Delete(ctx, fi.Path)
			}
			_ = s.Close()
		})
		return s
	})
}

func TestS3URLHasNoCredentials(t *testing.T) {
	endpoint := fakeS3(t, "lake")
	s, err := storage.Open(t.Context(), s3URL("lake", "t/x", endpoint))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, u := range []string{s.URL(), s.Sub("y").URL()} {
		if strings.Contains(u, "lakesink-test-secret") || strings.Contains(u, "lakesink-test-key") {
			t.Errorf("URL() leaks credentials: %s", u)
		}
		if !strings.HasPrefix(u, "s3://lake/t/x") || !strings.Contains(u, "endpoint=") {
			t.Errorf("URL() = %q, want s3://lake/t/x...?...endpoint=...", u)
		}
	}
	_, err = s.Read(t.Context(), "missing")
	if !errors.Is(err, storage.ErrNotFound) || strings.Contains(err.Error(), "lakesink-test-secret") {
		t.Errorf("Read missing: %v", err)
	}
	for _, raw := range []string{
		"s3://AKIA:secret@lake/t?region=us-east-1",
		"s3://lake/t?region=us-east-1&endpoint=http://AKIA:secret@127.0.0.1:1",
	} {
		_, err := storage.Open(t.Context(), raw)
		if !errors.Is(err, storage.ErrUnsupportedURL) {
			t.Errorf("Open(URL with credentials): got %v, want ErrUnsupportedURL", err)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("error leaks credentials: %v", err)
		}
	}
}

// Directory markers ("dir/" objects made by consoles and Hadoop connectors)
// are not files and are not listed.
func TestS3ListSkipsDirectoryMarkers(t *testing.T) {
	endpoint, backend := fakeS3Backend(t, "lake")
	for _, key := range []string{"t/part=1/", "t/part=1/f.parquet", "t/z"} {
		if _, err := backend.PutObject("lake", key, nil, strings.NewReader("x"), 1, nil); err != nil {
			t.Fatal(err)
		}
	}
	s, err := storage.Open(t.Context(), s3URL("lake", "t", endpoint))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got []string
	for fi, err := range s.List(t.Context(), "", "") {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fi.Path)
	}
	if want := []string{"part=1/f.parquet", "z"}; !slices.Equal(got, want) {
		t.Errorf("List = %q, want %q", got, want)
	}
}

// TestS3MissingBucketIsNamed: a bucket that does not exist is ErrNotFound
// whose message says so (it read "list _delta_log/: not found", as if the
// table were empty; new-user trial).
func TestS3MissingBucketIsNamed(t *testing.T) {
	endpoint := fakeS3(t, "lake")
	st, err := storage.Open(t.Context(), s3URL("no-such-bucket", "t", endpoint))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, err := range st.List(t.Context(), "_delta_log/", "") {
		if !errors.Is(err, storage.ErrNotFound) || !strings.Contains(err.Error(), "bucket does not exist") {
			t.Fatalf("list in a missing bucket: %v; want ErrNotFound saying the bucket does not exist", err)
		}
		return
	}
	t.Fatal("list in a missing bucket yielded nothing")
}
