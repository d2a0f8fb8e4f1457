package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/lakesink/lakesink/storage"
)

// Exit codes, documented as stable in README.md ("Exit status").
const (
	exitOK          = 0
	exitError       = 1
	exitConflict    = 3
	exitCorrupt     = 4
	exitInterrupted = 130
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	root := newRootCommand()
	err := root.ExecuteContext(ctx)
	interrupted := ctx.Err() != nil
	stop()
	if err != nil {
		printExitError(os.Stderr, root.jsonErrors(), markInterrupted(err, interrupted))
	}
	os.Exit(exitCode(err, interrupted))
}

// markInterrupted starts the message of an error that ends in exit status
// 130 with "interrupted" (else it read "...: context canceled" alone). What
// an interruption leaves behind is documented per command; every command
// leaves its table consistent.
func markInterrupted(err error, interrupted bool) error {
	if err == nil || exitCode(err, interrupted) != exitInterrupted || strings.Contains(err.Error(), "interrupted") {
		return err
	}
	return &hintError{err, "interrupted (SIGINT/SIGTERM); the table is left consistent: " + err.Error()}
}

// printExitError writes a fatal error to stderr: as a JSON object when the
// command ran with --json, else as text.
func printExitError(w io.Writer, asJSON bool, err error) {
	// Missing AWS credentials: the storage error says what to set; the
	// SDK's chain of providers tried (EC2 roles...) only buries it.
	var nce *storage.NoCredentialsError
	if errors.As(err, &nce) {
		err = &hintError{err, nce.Error()}
	}
	if asJSON {
		_ = json.NewEncoder(w).Encode(map[string]any{"message_type": "exit_error", "code": exitCode(err, false), "message": err.Error()})
		return
	}
	fmt.Fprintln(w, "lakesink:", err)
}

// exitCode maps an error to the CLI's exit status, once, with errors.Is.
func exitCode(err error, interrupted bool) int {
	switch {
	case err == nil:
		return exitOK
	case interrupted || errors.Is(err, context.Canceled):
		return exitInterrupted
	case isConflict(err):
		return exitConflict
	case isCorrupt(err):
		return exitCorrupt
	default:
		return exitError
	}
}
