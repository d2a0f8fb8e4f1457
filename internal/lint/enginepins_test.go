package lint

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEngineVersionsNamedAsPinned (issue 17): README's Interoperability
// section names the engine versions scripts/install-engines.sh pins (and
// the S3 server scripts/install-s3-server.sh installs), and docs/interop.md,
// written by the last `make interop` run, names the same Spark, Delta and
// delta-rs versions: bumping a pin without the run (or without the README)
// fails here.
func TestEngineVersionsNamedAsPinned(t *testing.T) {
	root := repoRoot(t)
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	pin := func(script, re string) string {
		m := regexp.MustCompile(re).FindStringSubmatch(read(script))
		if m == nil {
			t.Fatalf("%s: no pin matching %s", script, re)
		}
		return m[1]
	}
	pyspark := pin("scripts/install-engines.sh", `(?m)^PYSPARK_VERSION=([0-9.]+)$`)
	delta := pin("scripts/install-engines.sh", `(?m)^DELTA_SPARK_VERSION=([0-9.]+)$`)
	deltalake := pin("scripts/install-engines.sh", `(?m)^DELTALAKE_VERSION=([0-9.]+)$`)
	pyarrow := pin("scripts/install-engines.sh", `(?m)^PYARROW_VERSION=([0-9.]+)$`)
	versitygw := pin("scripts/install-s3-server.sh", `VERSITYGW_VERSION:-(v[0-9.]+)\}`)

	readme := read("README.md")
	i := strings.Index(readme, "\n## Interoperability\n")
	if i < 0 {
		t.Fatal("README.md has no Interoperability section")
	}
	section := readme[i+1:]
	if j := strings.Index(section[3:], "\n## "); j >= 0 {
		section = section[:j+3]
	}
	for _, want := range []string{"Spark " + pyspark + " (pyspark " + pyspark + ")", "Delta Lake " + delta + " (delta-spark " + delta,
		"Delta Kernel " + delta, "deltalake " + deltalake, "pyarrow " + pyarrow, "versitygw " + versitygw} {
		if !strings.Contains(section, want) {
			t.Errorf("README.md's Interoperability section does not name %q (the pins of scripts/install-engines.sh)", want)
		}
	}
	engines := regexp.MustCompile(`(?m)^Engines: (.*)$`).FindStringSubmatch(read("docs/interop.md"))
	if engines == nil {
		t.Fatal("docs/interop.md has no 'Engines:' line (written by make interop)")
	}
	for _, want := range []string{"Spark " + pyspark, "pyspark " + pyspark, "Delta Lake " + delta, "deltalake) " + deltalake} {
		if !strings.Contains(engines[1], want) {
			t.Errorf("docs/interop.md's last run (%q) does not name %q: run make interop after bumping a pin", engines[1], want)
		}
	}
}
