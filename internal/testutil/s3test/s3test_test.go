package s3test_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/lakesink/lakesink/internal/testutil/s3test"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/storage/storagetest"
)

func open(t *testing.T, rawURL string) storage.Store {
	t.Helper()
	s, err := storage.Open(t.Context(), rawURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestURLForm(t *testing.T) {
	srv := s3test.Start(t)
	for _, tc := range []struct{ name, prefix, wantPath string }{
		{"prefix", "tables/events", "/tables/events"},
		{"slashes trimmed", "/t/", "/t"},
		{"bucket root", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := srv.URL(tc.prefix)
			u, err := url.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			q := u.Query()
			if u.Scheme != "s3" || u.Host != s3test.Bucket || u.Path != tc.wantPath ||
				q.Get("region") != "us-east-1" || q.Get("endpoint") != srv.Endpoint || q.Get("use_path_style") != "true" {
				t.Errorf("URL(%q) = %s", tc.prefix, raw)
			}
			if strings.Contains(raw, s3test.SecretAccessKey) || strings.Contains(raw, s3test.AccessKeyID) {
				t.Errorf("URL carries credentials: %s", raw)
			}
		})
	}
	// The URL opens, and what is written through it lands in the bucket.
	st := open(t, srv.URL("u"))
	if err := st.Put(t.Context(), "x", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	out, err := srv.Client().HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: aws.String(srv.Bucket), Key: aws.String("u/x")})
	if err != nil || aws.ToInt64(out.ContentLength) != 5 {
		t.Fatalf("HeadObject u/x: %v (%v)", err, out)
	}
}

// The check Start runs must catch a server that overwrites despite
// If-None-Match: *: one that ignores it on PutObject (a bare store), and
// gofakes3, which honours it on PutObject but not on CompleteMultipartUpload.
func TestCheckConditionalWritesCatchesOverwrite(t *testing.T) {
	srv := s3test.Start(t)
	if err := s3test.CheckConditionalWrites(t.Context(), srv.Client(), srv.Bucket); err != nil {
		t.Fatalf("versitygw: %v", err)
	}

	var mu sync.Mutex
	objects := map[string][]byte{}
	overwriting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch r.Method {
		case http.MethodPut:
			b, _ := io.ReadAll(r.Body)
			objects[r.URL.Path] = b
			w.Header().Set("ETag", `"x"`)
		case http.MethodGet:
			b, ok := objects[r.URL.Path]
			if !ok {
				http.NotFound(w, r)
				return
			}
			_, _ = w.Write(b)
		case http.MethodDelete:
			delete(objects, r.URL.Path)
			w.WriteHeader(http.StatusNoContent)
		default:
			w.WriteHeader(http.StatusNotImplemented)
		}
	}))
	defer overwriting.Close()

	backend := s3mem.New()
	if err := backend.CreateBucket("lake"); err != nil {
		t.Fatal(err)
	}
	fake := httptest.NewServer(gofakes3.New(backend).Server())
	defer fake.Close()

	for _, tc := range []struct {
		name, endpoint, want string
	}{
		{"ignores If-None-Match on PutObject", overwriting.URL, "PutObject"},
		{"gofakes3 ignores it on CompleteMultipartUpload", fake.URL, "CompleteMultipartUpload"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s3test.CheckConditionalWrites(t.Context(), s3test.NewClient(tc.endpoint), "lake")
			if !errors.Is(err, s3test.ErrNoConditionalWrites) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CheckConditionalWrites: %v, want ErrNoConditionalWrites naming %s", err, tc.want)
			}
		})
	}
}

// TestStorageConformance runs internal/storage's suite against versitygw:
// 200 rounds of 8 concurrent PutIfAbsent with exactly one winner, listing
// of 1,100 objects (two pages), a 6 MiB multipart upload, cancellation.
func TestStorageConformance(t *testing.T) {
	srv := s3test.Start(t)
	var n atomic.Int64
	storagetest.Run(t, func(t *testing.T) storage.Store {
		return open(t, srv.URL(fmt.Sprintf("conformance/%d", n.Add(1))))
	})
}

// A streamed object larger than one part goes up as a multipart upload and
// is invisible until Close; an aborted one leaves neither an object nor a
// pending upload behind.
func TestMultipartVisibility(t *testing.T) {
	srv := s3test.Start(t)
	st := open(t, srv.URL("mpu"))
	ctx := t.Context()
	const size = 12 << 20 // > 2 parts of 5 MiB
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 64<<10/16)
	pending := func() int {
		out, err := srv.Client().ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(srv.Bucket), Prefix: aws.String("mpu/")})
		if err != nil {
			t.Fatal(err)
		}
		return len(out.Uploads)
	}
	for _, tc := range []struct {
		name    string
		publish bool
	}{{"close publishes", true}, {"abort discards", false}} {
		t.Run(tc.name, func(t *testing.T) {
			key := strings.ReplaceAll(tc.name, " ", "-") + ".bin"
			w, err := st.NewWriter(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			for written := 0; written < size; written += len(chunk) {
				if _, err := w.Write(chunk); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := st.Stat(ctx, key); !errors.Is(err, storage.ErrNotFound) {
				t.Fatalf("Stat before Close: %v, want ErrNotFound", err)
			}
			for fi, err := range st.List(ctx, "", "") {
				if err == nil && fi.Path == key {
					t.Fatalf("%s listed before Close", key)
				}
			}
			if tc.publish {
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				fi, err := st.Stat(ctx, key)
				if err != nil || fi.Size != int64(size) {
					t.Fatalf("Stat after Close: %v, size %d, want %d", err, fi.Size, size)
				}
			} else {
				if err := w.Abort(); err != nil {
					t.Fatal(err)
				}
				if _, err := st.Stat(ctx, key); !errors.Is(err, storage.ErrNotFound) {
					t.Fatalf("Stat after Abort: %v, want ErrNotFound", err)
				}
			}
			if n := pending(); n != 0 {
				t.Errorf("%d multipart uploads still pending", n)
			}
		})
	}
}

// The storage layer's commit primitive through a proxy that lets the server
// store a conditional PUT and then answers 503: the SDK's own retry is off,
// so the caller is told the outcome is unknown (never "already exists",
// which would claim a lost race for a commit that is in place), and the
// object holds our bytes.
func TestPutIfAbsentStoredThen503(t *testing.T) {
	srv := s3test.Start(t)
	var faulted atomic.Int32
	proxy := srv.Proxy(t, func(r *http.Request) s3test.Fault {
		if s3test.IsConditionalPut(r) && faulted.Add(1) == 1 {
			return s3test.StoredThen503
		}
		return s3test.Pass
	})
	st := open(t, proxy.URL("p"))
	err := st.PutIfAbsent(t.Context(), "_delta_log/00000000000000000000.json", []byte("ours"))
	if !errors.Is(err, storage.ErrCommitStateUnknown) || errors.Is(err, storage.ErrAlreadyExists) {
		t.Fatalf("PutIfAbsent: %v, want ErrCommitStateUnknown (and not ErrAlreadyExists)", err)
	}
	got, rerr := st.Read(t.Context(), "_delta_log/00000000000000000000.json")
	if rerr != nil || string(got) != "ours" {
		t.Fatalf("read back: %q, %v; want the stored %q", got, rerr, "ours")
	}
	if n := faulted.Load(); n < 1 {
		t.Fatalf("the proxy saw %d conditional PUTs", n)
	}
}
