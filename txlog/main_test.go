package txlog

import (
	"testing"

	"go.uber.org/goleak"
)

// Replay fans out commit reads; every goroutine must be waited for.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
