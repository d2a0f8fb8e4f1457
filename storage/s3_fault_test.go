package storage_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/lakesink/lakesink/storage"
)

// faultyS3 is a gofakes3 server whose conditional PUTs (If-None-Match) pass
// through a script: each entry decides one request's fate.
type faultyS3 struct {
	mu      sync.Mutex
	script  []putFate // consumed in order; when empty, requests pass through
	repeat  *putFate  // if set, used once the script is exhausted
	attempt int       // conditional PUTs seen
}

type putFate struct {
	forward bool   // let gofakes3 handle (and store) the request
	status  int    // if non-zero, answer with this status instead of gofakes3's
	code    string // S3 error code of that answer
}

func (f *faultyS3) next() (putFate, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.attempt++
	if len(f.script) > 0 {
		p := f.script[0]
		f.script = f.script[1:]
		return p, true
	}
	if f.repeat != nil {
		return *f.repeat, true
	}
	return putFate{}, false
}

func (f *faultyS3) attempts() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.attempt
}

func newFaultyS3(t *testing.T) (*faultyS3, string) {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket("lake"); err != nil {
		t.Fatal(err)
	}
	fake := gofakes3.New(backend).Server()
	f := &faultyS3{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPut || r.Header.Get("If-None-Match") == "" {
			fake.ServeHTTP(w, r)
			return
		}
		fate, scripted := f.next()
		if !scripted {
			fake.ServeHTTP(w, r)
			return
		}
		if fate.forward {
			rec := httptest.NewRecorder()
			fake.ServeHTTP(rec, r)
		}
		if fate.status == 0 {
			// forward only: unreachable in the scripts below
			return
		}
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(fate.status)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>injected</Message><RequestId>1</RequestId></Error>`, fate.code)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("AWS_ACCESS_KEY_ID", "lakesink-test-key")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "lakesink-test-secret")
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	return f, srv.URL
}

func TestS3PutIfAbsentFaults(t *testing.T) {
	conflict := putFate{status: http.StatusConflict, code: "ConditionalRequestConflict"}
	slowDownLost := putFate{status: http.StatusServiceUnavailable, code: "SlowDown"}
	storedLost := putFate{forward: true, status: http.StatusServiceUnavailable, code: "SlowDown"}
	denied := putFate{status: http.StatusForbidden, code: "AccessDenied"}
	opts := storage.DefaultOptions()
	opts.S3RetryBackoff = time.Millisecond
	for _, tc := range []struct {
		name         string
		preexisting  bool
		script       []putFate
		repeat       *putFate
		wantErr      error // nil: success
		notErr       []error
		wantAttempts int
		wantStored   bool
	}{
		{name: "409 is retried until the put lands", script: []putFate{conflict, conflict}, wantAttempts: 3, wantStored: true},
		{name: "503 before storing, then success", script: []putFate{slowDownLost}, wantAttempts: 2, wantStored: true},
		{name: "503 after storing: the re-send's 412 is ambiguous", script: []putFate{storedLost}, wantErr: storage.ErrCommitStateUnknown, notErr: []error{storage.ErrAlreadyExists}, wantAttempts: 2, wantStored: true},
		{name: "persistent 503 is commit state unknown", repeat: &slowDownLost, wantErr: storage.ErrCommitStateUnknown, wantAttempts: 1 + opts.S3UnknownRetries},
		{name: "412 on the first attempt is already exists", preexisting: true, wantErr: storage.ErrAlreadyExists, notErr: []error{storage.ErrCommitStateUnknown}, wantAttempts: 1, wantStored: true},
		{name: "403 is a plain failure", script: []putFate{denied}, notErr: []error{storage.ErrCommitStateUnknown, storage.ErrAlreadyExists}, wantAttempts: 1},
		{name: "409 forever gives up without claiming existence", repeat: &conflict, notErr: []error{storage.ErrCommitStateUnknown, storage.ErrAlreadyExists}, wantAttempts: 1 + opts.S3ConflictRetries},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, endpoint := newFaultyS3(t)
			o, err := storage.NewOpener(opts)
			if err != nil {
				t.Fatal(err)
			}
			s, err := o.Open(t.Context(), s3URL("lake", "t", endpoint))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			const key = "_delta_log/00000000000000000001.json"
			if tc.preexisting {
				if err := s.Put(t.Context(), key, []byte("rival")); err != nil {
					t.Fatal(err)
				}
			}
			f.script, f.repeat = tc.script, tc.repeat
			err = s.PutIfAbsent(t.Context(), key, []byte("ours"))
			switch {
			case tc.wantErr == nil && len(tc.notErr) == 0 && err != nil:
				t.Fatalf("PutIfAbsent: %v, want success", err)
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Fatalf("PutIfAbsent: got %v, want %v", err, tc.wantErr)
			case len(tc.notErr) > 0 && err == nil:
				t.Fatalf("PutIfAbsent succeeded, want an error")
			}
			for _, ne := range tc.notErr {
				if errors.Is(err, ne) {
					t.Errorf("PutIfAbsent: %v must not match %v", err, ne)
				}
			}
			if got := f.attempts(); got != tc.wantAttempts {
				t.Errorf("conditional PUTs sent = %d, want %d (SDK retries must be off)", got, tc.wantAttempts)
			}
			_, rerr := s.Read(t.Context(), key)
			if stored := rerr == nil; stored != tc.wantStored {
				t.Errorf("object stored = %v (%v), want %v", stored, rerr, tc.wantStored)
			}
		})
	}
}

// Without credentials the request is never sent: a plain failure, not an
// ambiguous commit.
func TestS3PutIfAbsentWithoutCredentials(t *testing.T) {
	_, endpoint := newFaultyS3(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "")
	t.Setenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "")
	t.Setenv("AWS_WEB_IDENTITY_TOKEN_FILE", "")
	s, err := storage.Open(t.Context(), s3URL("lake", "t", endpoint))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.PutIfAbsent(t.Context(), "_delta_log/00000000000000000000.json", []byte("c"))
	if err == nil || errors.Is(err, storage.ErrCommitStateUnknown) || errors.Is(err, storage.ErrAlreadyExists) {
		t.Errorf("PutIfAbsent without credentials: got %v, want a plain error", err)
	}
}
