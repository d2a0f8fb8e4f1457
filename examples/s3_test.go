package examples

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/lakesink/lakesink/reader"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/table"
)

// versitygw finds the local S3 server that scripts/install-s3-server.sh
// installs ($LAKESINK_VERSITYGW, PATH, $GOBIN, $GOPATH/bin, ~/go/bin). Without
// it the test skips, or fails under CI=true or LAKESINK_REQUIRE_S3=1 as the
// other S3 tests do.
func versitygw(t *testing.T) string {
	t.Helper()
	cands := []string{os.Getenv("LAKESINK_VERSITYGW")}
	if p, err := exec.LookPath("versitygw"); err == nil {
		cands = append(cands, p)
	}
	cands = append(cands, filepath.Join(os.Getenv("GOBIN"), "versitygw"))
	for _, d := range filepath.SplitList(os.Getenv("GOPATH")) {
		cands = append(cands, filepath.Join(d, "bin", "versitygw"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		cands = append(cands, filepath.Join(home, "go", "bin", "versitygw"))
	}
	for _, p := range cands {
		if fi, err := os.Stat(p); p != "" && err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci || os.Getenv("LAKESINK_REQUIRE_S3") != "" {
		t.Fatal("versitygw not found (run scripts/install-s3-server.sh); CI must not skip the S3 tests")
	}
	t.Skip("versitygw not found (run scripts/install-s3-server.sh): skipping the local S3 example")
	return ""
}

// startS3 starts versitygw on a free loopback port over a temporary folder
// with one bucket, "lake", and returns the query string of its s3:// URLs.
// The credentials are test-only values given to the server and to the AWS
// SDK through the environment.
func startS3(t *testing.T) string {
	bin := versitygw(t)
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "lake"), 0o755); err != nil { // a bucket is a folder of the posix backend
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	const key, secret = "examples-access-key", "examples-secret-key"
	cmd := exec.Command(bin, "--port", addr, "--quiet", "posix", "--sidecar", t.TempDir(), root)
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID="+key, "ROOT_SECRET_ACCESS_KEY="+secret, "VGW_REGION=us-east-1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": key, "AWS_SECRET_ACCESS_KEY": secret, "AWS_REGION": "us-east-1",
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
		"AWS_SESSION_TOKEN": "", "AWS_PROFILE": "", "AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_S3": "",
	} {
		t.Setenv(k, v)
	}
	for i := 0; ; i++ { // at most 60 s for the server to listen
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if i == 600 {
			t.Fatalf("versitygw did not listen on %s", addr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return "region=us-east-1&endpoint=http://" + addr + "&use_path_style=true"
}

// Open a store on the local S3 server, write a Delta table there through
// its URL, and read it back: the same calls as on local disk.
func TestOpenStoreOnLocalS3(t *testing.T) {
	q := startS3(t)
	ctx := context.Background()
	url := "s3://lake/events?" + q

	st, err := storage.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.PutIfAbsent(ctx, "hello.txt", []byte("hi")); err != nil {
		t.Fatal(err)
	}
	if err := st.PutIfAbsent(ctx, "hello.txt", []byte("again")); !errors.Is(err, storage.ErrAlreadyExists) {
		t.Fatalf("second PutIfAbsent: %v, want ErrAlreadyExists (the store honours If-None-Match)", err)
	}

	b, err := schema.FromStructs(events(0, 4))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := table.Create(ctx, url, table.CreateOptions{Schema: b.Schema})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if _, err := tb.Write(ctx, b, table.WriteOptions{AppID: "example", Version: 1}); err != nil {
		t.Fatal(err)
	}
	snap, err := reader.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	n := 0
	for _, err := range reader.Rows[Event](ctx, snap, reader.ReadOptions{Where: "country = 'NL'"}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if snap.Version() != 1 || n != 2 {
		t.Fatalf("version %d, %d NL rows; want version 1 and 2 rows", snap.Version(), n)
	}
}
