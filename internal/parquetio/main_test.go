package parquetio

import (
	"testing"

	"go.uber.org/goleak"
)

// WriteFiles starts a helper goroutine per pipelined range; none may outlive
// its call.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
