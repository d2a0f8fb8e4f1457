package benchproc

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

var sink []byte

func init() {
	Register("touch", func(args []string) error {
		n, err := strconv.Atoi(args[0])
		if err != nil {
			return err
		}
		sink = make([]byte, n<<20)
		for i := range sink { // resident, not just reserved
			sink[i] = byte(i)
		}
		return nil
	})
	Register("setup-then-work", func(args []string) error {
		time.Sleep(100 * time.Millisecond) // setup
		return Work(func() error { time.Sleep(time.Millisecond); return nil })
	})
	Register("fail", func(args []string) error { return errors.New("failed as asked: " + strings.Join(args, " ")) })
}

// runErr is Run's measurement without failing the test.
func runErr(cmd *exec.Cmd) (string, error) {
	defer os.Remove(workFileOf(cmd))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestSideIsAWholeProcessMeasured(t *testing.T) {
	small := Run(t, Side("touch", "1"))
	big := Run(t, Side("touch", "96"))
	if big.MaxRSS < 96<<20 {
		t.Errorf("a side touching 96 MiB: peak RSS %d bytes, want >= 96 MiB", big.MaxRSS)
	}
	if big.MaxRSS-small.MaxRSS < 80<<20 {
		t.Errorf("peak RSS 96 MiB side %d, 1 MiB side %d: want a difference of >= 80 MiB", big.MaxRSS, small.MaxRSS)
	}
	if big.Wall <= 0 || big.CPU <= 0 {
		t.Errorf("wall %v, CPU %v: want both > 0", big.Wall, big.CPU)
	}
}

func TestSideErrors(t *testing.T) {
	out, err := runErr(Side("fail", "x", "y"))
	if err == nil || !strings.Contains(out, "failed as asked: x y") {
		t.Errorf("failing side: err %v, output %q; want exit 1 with its error", err, out)
	}
	out, err = runErr(Side("no-such-side"))
	if err == nil || !strings.Contains(out, "side-not-registered") {
		t.Errorf("unregistered side: err %v, output %q; want a flag error", err, out)
	}
}

func TestMedian(t *testing.T) {
	if got := Median([]float64{3, 1, 2}); got != 2 {
		t.Errorf("Median(3 1 2) = %v", got)
	}
	xs := []time.Duration{4, 1, 3, 2}
	if got := Median(xs); got != 2 { // (2+3)/2 in integer nanoseconds
		t.Errorf("Median(4 1 3 2) = %v", got)
	}
	if xs[0] != 4 {
		t.Error("Median reordered its argument")
	}
}

func TestWorkIsTimedInsideTheSide(t *testing.T) {
	f := Run(t, Side("setup-then-work"))
	if f.Work <= 0 || f.Work >= f.Wall {
		t.Errorf("work %v, whole process %v: want 0 < work < wall (the setup is not work)", f.Work, f.Wall)
	}
	if f2 := Run(t, Side("touch", "1")); f2.Work != 0 {
		t.Errorf("a side without Work: work %v, want 0", f2.Work)
	}
}

// TestParentRSSIsNotTheChildsFloor: a benchmark process holding 256 MiB
// does not make its child's peak RSS 256 MiB (it did when Run started the
// child directly: see launch.go).
func TestParentRSSIsNotTheChildsFloor(t *testing.T) {
	held := make([]byte, 256<<20)
	for i := range held {
		held[i] = 1
	}
	f := Run(t, Side("touch", "1"))
	if f.MaxRSS >= 128<<20 {
		t.Errorf("a 1 MiB side under a parent holding 256 MiB: peak RSS %d MiB (launcher %d MiB), want < 128 MiB", f.MaxRSS>>20, f.RSSFloor>>20)
	}
	direct := Side("touch", "1")
	defer os.Remove(workFileOf(direct))
	if err := direct.Run(); err != nil {
		t.Fatal(err)
	}
	ru := direct.ProcessState.SysUsage().(*syscall.Rusage)
	t.Logf("started from the launcher: %d MiB (launcher %d MiB); started directly: %d MiB", f.MaxRSS>>20, f.RSSFloor>>20, ru.Maxrss>>10)
	held[0] = held[len(held)-1] // held stays live until here
}
