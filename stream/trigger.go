package stream

import (
	"fmt"
	"strings"
	"time"
)

type triggerKind int

const (
	kindAvailableNow triggerKind = iota
	kindOnce
	kindProcessingTime
)

// Trigger decides when micro-batches run (Spark's Trigger). The zero value is
// AvailableNow.
type Trigger struct {
	kind     triggerKind
	interval time.Duration
}

// AvailableNow processes everything available when the run starts, in as many
// batches as MaxFilesPerTrigger requires, then returns (Trigger.AvailableNow).
func AvailableNow() Trigger { return Trigger{kind: kindAvailableNow} }

// Once runs one batch with all available data (MaxFilesPerTrigger is ignored,
// as Spark's Trigger.Once does), or the rerun of an uncommitted batch, then
// returns.
func Once() Trigger { return Trigger{kind: kindOnce} }

// ProcessingTime runs a batch every interval until ctx is cancelled. A batch
// that takes longer than the interval is followed immediately by the next
// (ProcessingTimeExecutor). Interval 0 runs batches back to back, polling
// every Options.IdlePollInterval when there is no new data.
func ProcessingTime(interval time.Duration) Trigger {
	return Trigger{kind: kindProcessingTime, interval: interval}
}

// ParseTrigger reads "available-now", "once" or "interval=<duration>"
// (e.g. "interval=30s"; "processing-time=30s" is accepted too).
func ParseTrigger(s string) (Trigger, error) {
	switch s {
	case "available-now", "availableNow", "":
		return AvailableNow(), nil
	case "once":
		return Once(), nil
	}
	for _, p := range []string{"interval=", "processing-time="} {
		if v, ok := strings.CutPrefix(s, p); ok {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return Trigger{}, fmt.Errorf("%w: trigger %q: bad interval", ErrInvalidOptions, s)
			}
			return ProcessingTime(d), nil
		}
	}
	return Trigger{}, fmt.Errorf("%w: trigger %q (want available-now, once or interval=<duration>)", ErrInvalidOptions, s)
}

// Interval is the ProcessingTime interval (0 for the other triggers).
func (t Trigger) Interval() time.Duration { return t.interval }

// String is the trigger in the form ParseTrigger reads ("available-now", "once", "interval=30s").
func (t Trigger) String() string {
	switch t.kind {
	case kindOnce:
		return "once"
	case kindProcessingTime:
		return "interval=" + t.interval.String()
	}
	return "available-now"
}
