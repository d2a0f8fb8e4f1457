package storage_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lakesink/lakesink/storage"
)

const (
	raceURLEnv   = "LAKESINK_STORAGE_RACE_URL"
	raceIDEnv    = "LAKESINK_STORAGE_RACE_ID"
	raceStartEnv = "LAKESINK_STORAGE_RACE_START_UNIX_NANO"
	raceKeys     = 200
	raceProcs    = 4
	raceStep     = 4 * time.Millisecond
)

// TestPutIfAbsentCrossProcess races raceProcs OS processes (this test binary
// re-executed) on the same raceKeys keys of one store and checks that every
// key has exactly one winner, whose content is the one stored: on local disk,
// on gofakes3 (served by this process to the children), and on the server
// of LAKESINK_S3_URL if set.
func TestPutIfAbsentCrossProcess(t *testing.T) {
	if raw := os.Getenv(raceURLEnv); raw != "" {
		raceChild(t, raw)
		return
	}
	t.Run("local", func(t *testing.T) { racePutIfAbsent(t, t.TempDir()) })
	t.Run("gofakes3", func(t *testing.T) {
		endpoint := fakeS3(t, "lake")
		racePutIfAbsent(t, s3URL("lake", "race", endpoint))
	})
	t.Run("LAKESINK_S3_URL", func(t *testing.T) {
		raw := os.Getenv("LAKESINK_S3_URL")
		if raw == "" {
			t.Skip("LAKESINK_S3_URL not set")
		}
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal("LAKESINK_S3_URL does not parse")
		}
		u.Path = "/" + path.Join(strings.Trim(u.Path, "/"), "lakesink-storagetest", subtestPrefix(t))
		racePutIfAbsent(t, u.String())
		s, err := storage.Open(t.Context(), u.String())
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for fi, err := range s.List(t.Context(), "", "") {
			if err != nil {
				t.Fatalf("cleanup: %v", err)
			}
			if err := s.Delete(t.Context(), fi.Path); err != nil {
				t.Fatalf("cleanup: %v", err)
			}
		}
	})
}

func racePutIfAbsent(t *testing.T, storeURL string) {
	start := time.Now().Add(700 * time.Millisecond).UnixNano()
	cmds := make([]*exec.Cmd, raceProcs)
	outs := make([]*bytes.Buffer, raceProcs)
	for i := range cmds {
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestPutIfAbsentCrossProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(),
			raceURLEnv+"="+storeURL,
			raceIDEnv+"="+strconv.Itoa(i),
			raceStartEnv+"="+strconv.FormatInt(start, 10),
		)
		outs[i] = new(bytes.Buffer)
		cmd.Stdout, cmd.Stderr = outs[i], outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	winners := make(map[string][]int)
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v\n%s", i, err, outs[i])
		}
		sc := bufio.NewScanner(outs[i])
		for sc.Scan() {
			if k, ok := strings.CutPrefix(sc.Text(), "WON "); ok {
				winners[k] = append(winners[k], i)
			}
		}
	}
	wins := make([]int, raceProcs)
	for _, w := range winners {
		for _, i := range w {
			wins[i]++
		}
	}
	t.Logf("keys won per process: %v", wins)
	s, err := storage.Open(t.Context(), storeURL)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for k := range raceKeys {
		key := raceKey(k)
		w := winners[key]
		if len(w) != 1 {
			t.Errorf("%s: winners %v, want exactly one", key, w)
			continue
		}
		data, err := s.Read(t.Context(), key)
		if err != nil {
			t.Errorf("%s: %v", key, err)
			continue
		}
		if want := fmt.Sprintf("process %d", w[0]); string(data) != want {
			t.Errorf("%s holds %q, but %q won", key, data, want)
		}
	}
	n := 0
	for fi, err := range s.List(t.Context(), "", "") {
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(fi.Path, "_delta_log/") {
			t.Errorf("unexpected object %s (a temp file?)", fi.Path)
		}
		n++
	}
	if n != raceKeys {
		t.Errorf("List = %d objects, want %d", n, raceKeys)
	}
	if strings.Contains(storeURL, "://") {
		return
	}
	entries, err := os.ReadDir(storeURL + "/_delta_log")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != raceKeys {
		t.Errorf("directory holds %d entries, want %d: temp files left behind", len(entries), raceKeys)
	}
}

func raceKey(k int) string { return fmt.Sprintf("_delta_log/%020d.json", k) }

// raceChild is the body of one racing process: it prints "WON <key>" for
// every key it created and fails on any error other than ErrAlreadyExists.
func raceChild(t *testing.T, storeURL string) {
	id := os.Getenv(raceIDEnv)
	start, err := strconv.ParseInt(os.Getenv(raceStartEnv), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	s, err := storage.Open(t.Context(), storeURL)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for k := range raceKeys {
		// All processes go for key k at the same instant, so that they
		// really collide instead of one running ahead of the others.
		time.Sleep(time.Until(time.Unix(0, start).Add(time.Duration(k) * raceStep)))
		key := raceKey(k)
		err := s.PutIfAbsent(t.Context(), key, []byte("process "+id))
		switch {
		case err == nil:
			fmt.Printf("WON %s\n", key)
		case errors.Is(err, storage.ErrAlreadyExists):
		default:
			t.Fatalf("process %s: %v", id, err)
		}
	}
}
