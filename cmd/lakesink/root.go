package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

// version is the lakesink version, also written as engineInfo "lakesink/<version>".
const version = "0.1.0"

// rootCommand is the top-level command with the global flags every verb shares.
type rootCommand struct {
	*cobra.Command
	global globalOptions
}

// globalOptions are flags shared by every verb.
type globalOptions struct {
	JSON  bool // --json: machine-readable output, one object per line
	Quiet bool // --quiet: no progress output
}

func (r *rootCommand) jsonErrors() bool { return r.global.JSON }

func newRootCommand() *rootCommand {
	r := &rootCommand{}
	r.Command = &cobra.Command{
		Use:   "lakesink",
		Short: "Stream data into Delta Lake tables and Spark file-sink directories, exactly once",
		Long: `lakesink streams records into lakehouse tables on local disk or S3 with
exactly-once guarantees, compacts them, and reads consistent snapshots.

Table URLs: a plain path or file:///abs/path (local disk), mem://name
(in-process, for tests), s3://bucket/prefix?region=R&endpoint=URL&use_path_style=true.

EXIT STATUS
  0    ok (a batch skipped as already committed is ok)
  1    error or bad usage
  3    commit conflict (another writer won; retry)
  4    corrupt or unsupported table
  130  interrupted (SIGINT/SIGTERM); the table is left consistent`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	r.PersistentFlags().BoolVar(&r.global.JSON, "json", false, "print machine-readable JSON, one object per line")
	r.PersistentFlags().BoolVarP(&r.global.Quiet, "quiet", "q", false, "no progress output and no one-line results (a report such as scan's rows stays)")
	g := &r.global
	r.AddCommand(
		newCreateCommand(g),
		newDescribeCommand(g),
		newHistoryCommand(g),
		newIngestCommand(g),
		newMergeCommand(g),
		newScanCommand(g),
		newFilesCommand(g),
		newCompactCommand(g),
		newVacuumCommand(g),
		newCheckpointCommand(g),
		newCleanupLogCommand(g),
		newMaintainCommand(g),
		newFileSinkCommand(g),
		newConvertCommand(g),
	)
	// Usage errors name the command and its usage line (cobra's read
	// "accepts 1 arg(s), received 0" and "unknown flag: --limt" alone).
	r.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%s%w (see %s --help)", subcommandPrefix(c), plainFlagValueError(err), c.CommandPath())
	})
	withUsageInArgErrors(r.Command)
	withNotATable(r.Command)
	r.PersistentPreRunE = func(c *cobra.Command, _ []string) error { return checkCounts(c) }
	return r
}

// countFlags are the integer flags that count something: 0 is "no limit" or
// "default", a negative value is a usage error named by its flag (the
// libraries' Validate name their option fields, e.g. "MaxBins -1 < 0").
var countFlags = []string{"limit", "max-files-per-trigger", "max-offsets-per-trigger", "max-bins", "workers", "small-files"}

func checkCounts(c *cobra.Command) error {
	for _, name := range countFlags {
		f := c.Flags().Lookup(name)
		if f == nil || (f.Value.Type() != "int" && f.Value.Type() != "int64") {
			continue
		}
		if n, err := strconv.ParseInt(f.Value.String(), 10, 64); err == nil && n < 0 {
			return fmt.Errorf("%s--%s %d: want 0 or more", subcommandPrefix(c), name, n)
		}
	}
	return nil
}

// withUsageInArgErrors wraps the argument check of cmd and its subcommands
// so that a wrong number of arguments names the command and its usage line.
func withUsageInArgErrors(cmd *cobra.Command) {
	if check := cmd.Args; check != nil {
		cmd.Args = func(c *cobra.Command, args []string) error {
			if err := check(c, args); err != nil {
				return fmt.Errorf("%s%w (usage: %s)", subcommandPrefix(c), err, c.UseLine())
			}
			return nil
		}
	}
	for _, sub := range cmd.Commands() {
		withUsageInArgErrors(sub)
	}
}

// subcommandPrefix is "filesink ls: " for lakesink filesink ls, "" for the
// root: errors are printed after "lakesink: " already.
func subcommandPrefix(c *cobra.Command) string {
	if !c.HasParent() {
		return ""
	}
	return strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ") + ": "
}

// plainFlagValueError rewrites pflag's `invalid argument "abc" for "--limit"
// flag: strconv.ParseInt: parsing "abc": invalid syntax` as `invalid
// argument "abc" for "--limit" flag: not an integer`: the strconv part
// names a Go function and repeats the value. Other errors are returned as
// they are.
func plainFlagValueError(err error) error {
	msg := err.Error()
	i := strings.Index(msg, ": strconv.")
	if i < 0 {
		return err
	}
	what := "not a valid value"
	switch rest := msg[i:]; {
	case strings.Contains(rest, "value out of range"):
		what = "out of range"
	case strings.HasPrefix(rest, ": strconv.ParseInt"), strings.HasPrefix(rest, ": strconv.ParseUint"), strings.HasPrefix(rest, ": strconv.Atoi"):
		what = "not an integer"
	case strings.HasPrefix(rest, ": strconv.ParseFloat"):
		what = "not a number"
	case strings.HasPrefix(rest, ": strconv.ParseBool"):
		what = "want true or false"
	}
	return errors.New(msg[:i] + ": " + what)
}
