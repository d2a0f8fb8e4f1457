package tests

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/lakesink/lakesink/internal/testutil/s3test"
)

// TestS3CLIOutputHasNoCredentials runs CLI commands against the S3 server
// that succeed and that fail in several ways (missing table, table exists,
// server down, wrong secret) and checks that neither the access key, the
// secret, nor any piece of a SigV4 signature or presigned URL shows up in
// stdout or stderr.
func TestS3CLIOutputHasNoCredentials(t *testing.T) {
	srv := s3test.Start(t)
	schema := `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`
	down := "s3://lake/t?region=us-east-1&endpoint=http://127.0.0.1:1&use_path_style=true"
	for _, tc := range []struct {
		name    string
		env     []string
		args    []string
		wantErr bool
	}{
		{"create", nil, []string{"create", srv.URL("secrets/t"), "--schema", schema}, false},
		{"describe --json", nil, []string{"--json", "describe", srv.URL("secrets/t")}, false},
		{"create again", nil, []string{"create", srv.URL("secrets/t"), "--schema", schema}, true},
		{"describe missing", nil, []string{"describe", srv.URL("secrets/missing")}, true},
		{"describe missing --json", nil, []string{"--json", "describe", srv.URL("secrets/missing")}, true},
		{"server down", nil, []string{"describe", down}, true},
		{"wrong secret", []string{"AWS_SECRET_ACCESS_KEY=wrong-" + s3test.SecretAccessKey}, []string{"describe", srv.URL("secrets/t")}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(lakesinkBin, tc.args...)
			cmd.Env = append(cmd.Environ(), tc.env...)
			out, err := cmd.CombinedOutput()
			if (err != nil) != tc.wantErr {
				t.Fatalf("lakesink %v: err %v, want error %v\n%s", tc.args, err, tc.wantErr, out)
			}
			for _, secret := range []string{s3test.SecretAccessKey, s3test.AccessKeyID, "X-Amz-Signature", "X-Amz-Credential", "Signature=", "Credential="} {
				if strings.Contains(string(out), secret) {
					t.Errorf("output contains %q:\n%s", secret, out)
				}
			}
		})
	}
}
