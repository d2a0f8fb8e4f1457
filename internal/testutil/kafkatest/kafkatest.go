package kafkatest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

var (
	// ErrNotInstalled: no complete broker install was found.
	ErrNotInstalled = errors.New("Kafka not installed (run scripts/install-kafka.sh)")
	// ErrStart: the broker did not come up.
	ErrStart = errors.New("broker did not start")
)

// Heap is the JVM's maximum heap (-Xmx): the machines running the tests
// have 2 cores shared with other work.
const Heap = "512m"

// Required reports whether a missing broker must fail the test instead of
// skipping it (LAKESINK_REQUIRE_KAFKA set to anything but "" or "0").
func Required() bool {
	v := os.Getenv("LAKESINK_REQUIRE_KAFKA")
	return v != "" && v != "0"
}

// Classpath returns the broker's Java classpath: $LAKESINK_KAFKA_CLASSPATH,
// else the jars of a complete scripts/install-kafka.sh install in
// ${LAKESINK_KAFKA_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/lakesink/kafka}.
// It also checks that java is on PATH.
func Classpath() (string, error) {
	if _, err := exec.LookPath("java"); err != nil {
		return "", fmt.Errorf("%w: java not on PATH", ErrNotInstalled)
	}
	if cp := os.Getenv("LAKESINK_KAFKA_CLASSPATH"); cp != "" {
		return cp, nil
	}
	dir := os.Getenv("LAKESINK_KAFKA_DIR")
	if dir == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("%w: %w", ErrNotInstalled, err)
			}
			cache = filepath.Join(home, ".cache")
		}
		dir = filepath.Join(cache, "lakesink", "kafka")
	}
	if _, err := os.Stat(filepath.Join(dir, "complete")); err != nil {
		return "", fmt.Errorf("%w: no complete install in %s", ErrNotInstalled, dir)
	}
	jars, err := filepath.Glob(filepath.Join(dir, "jars", "*.jar"))
	if err != nil || len(jars) == 0 {
		return "", fmt.Errorf("%w: no jars in %s/jars", ErrNotInstalled, dir)
	}
	return strings.Join(jars, string(os.PathListSeparator)), nil
}

// Broker is a running single-node Kafka cluster.
type Broker struct {
	// Addr is the PLAINTEXT listener, 127.0.0.1:PORT.
	Addr string
	// Dir holds server.properties, broker.log and the log dir.
	Dir string

	proc *process
}

// Start launches a broker in a temp dir of t and stops it when the test
// ends; on failure the test's log gets the broker output's tail. Without an
// install it skips t (fails with LAKESINK_REQUIRE_KAFKA).
func Start(t testing.TB) *Broker {
	t.Helper()
	if _, err := Classpath(); err != nil {
		if Required() {
			t.Fatalf("%v; LAKESINK_REQUIRE_KAFKA is set, so the broker tests must not skip", err)
		}
		t.Skipf("%v; skipping the real-broker test", err)
	}
	b, err := Launch(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b.Stop()
		if t.Failed() {
			t.Logf("kafka broker %s output (tail of %s):\n%s", b.Addr, b.LogPath(), b.LogTail(200))
		}
	})
	return b
}

// Launch formats dir and starts a broker in it; the caller calls Stop. It
// returns an error wrapping ErrNotInstalled without an install, ErrStart
// (with the broker's output) if it does not come up within 3 minutes.
func Launch(ctx context.Context, dir string) (*Broker, error) {
	cp, err := Classpath()
	if err != nil {
		return nil, err
	}
	var lastErr error
	for attempt := 1; attempt <= 3; attempt++ {
		b, err := launch(ctx, cp, filepath.Join(dir, "attempt-"+strconv.Itoa(attempt)))
		if err == nil {
			return b, nil
		}
		lastErr = err
		if !strings.Contains(err.Error(), "Address already in use") {
			break
		}
	}
	return nil, lastErr
}

func launch(ctx context.Context, cp, dir string) (*Broker, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cport, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	caddr := "127.0.0.1:" + strconv.Itoa(cport)
	props := filepath.Join(dir, "server.properties")
	if err := os.WriteFile(props, []byte(serverProperties(addr, caddr, filepath.Join(dir, "data"))), 0o644); err != nil {
		return nil, err
	}
	log4j := filepath.Join(dir, "log4j2.properties")
	if err := os.WriteFile(log4j, []byte(log4jProperties), 0o644); err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "broker.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	jvm := []string{"-Xms64m", "-Xmx" + Heap, "-XX:+UseSerialGC", "-Djava.awt.headless=true",
		"-Dlog4j2.configurationFile=" + log4j, "-cp", cp}

	// kafka-storage.sh format -t <random cluster id> -c server.properties
	id, err := clusterID(rand.Reader)
	if err != nil {
		return nil, err
	}
	format := exec.CommandContext(ctx, "java", append(clone(jvm), "kafka.tools.StorageTool", "format",
		"-t", id, "-c", props)...)
	format.Stdout, format.Stderr = logf, logf
	procAttr(format)
	if err := format.Run(); err != nil {
		return nil, fmt.Errorf("%w: kafka.tools.StorageTool format in %s: %w\n%s", ErrStart, dir, err, tail(logPath, 40))
	}

	cmd := exec.Command("java", append(clone(jvm), "kafka.Kafka", props)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	procAttr(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: java kafka.Kafka: %w", ErrStart, err)
	}
	p := &process{cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	b := &Broker{Addr: addr, Dir: dir, proc: p}
	if err := b.waitReady(ctx, 3*time.Minute); err != nil {
		b.Stop()
		return nil, fmt.Errorf("%w\n%s", err, tail(logPath, 60))
	}
	return b, nil
}

func clone(s []string) []string { return append([]string(nil), s...) }

// serverProperties is a combined broker+controller of one node, with the
// internal topics at replication factor 1 and no initial rebalance delay
// (a group's first join completes at once).
func serverProperties(addr, caddr, logDir string) string {
	return strings.Join([]string{
		"process.roles=broker,controller",
		"node.id=1",
		"controller.quorum.voters=1@" + caddr,
		"listeners=PLAINTEXT://" + addr + ",CONTROLLER://" + caddr,
		"advertised.listeners=PLAINTEXT://" + addr,
		"controller.listener.names=CONTROLLER",
		"listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
		"inter.broker.listener.name=PLAINTEXT",
		"log.dirs=" + logDir,
		"num.partitions=1",
		"auto.create.topics.enable=false",
		"offsets.topic.replication.factor=1",
		"offsets.topic.num.partitions=3",
		"transaction.state.log.replication.factor=1",
		"transaction.state.log.min.isr=1",
		"share.coordinator.state.topic.replication.factor=1",
		"share.coordinator.state.topic.min.isr=1",
		"group.initial.rebalance.delay.ms=0",
		"num.network.threads=2",
		"num.io.threads=2",
		"background.threads=2",
		"log.flush.interval.messages=9223372036854775807",
		"",
	}, "\n")
}

const log4jProperties = `rootLogger.level=INFO
rootLogger.appenderRef.stdout.ref=STDOUT
appender.stdout.type=Console
appender.stdout.name=STDOUT
appender.stdout.layout.type=PatternLayout
appender.stdout.layout.pattern=[%d] %p %m (%c)%n
logger.kafka.name=kafka
logger.kafka.level=WARN
logger.apache.name=org.apache.kafka
logger.apache.level=WARN
logger.state.name=state.change.logger
logger.state.level=WARN
logger.started.name=kafka.server.KafkaRaftServer
logger.started.level=INFO
`

// clusterID is a random cluster id as Kafka's Uuid.randomUuid prints it:
// 16 random bytes, URL-safe base64 without padding. Like Uuid.randomUuid
// (org.apache.kafka.common.Uuid), it draws again while the id starts with
// '-': kafka-storage's argument parser takes "-t -Xy..." for a flag and
// fails with "argument --cluster-id/-t: expected one argument" (1 start in
// 64 failed so in CI).
func clusterID(r io.Reader) (string, error) {
	for {
		var b [16]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return "", fmt.Errorf("cluster id: %w", err)
		}
		if id := base64.RawURLEncoding.EncodeToString(b[:]); id[0] != '-' {
			return id, nil
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitReady polls the broker's metadata until it lists itself, the JVM
// exits, or timeout passes.
func (b *Broker) waitReady(ctx context.Context, timeout time.Duration) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	deadline := time.Now().Add(timeout)
	var last error
	for {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		brokers, err := adm.ListBrokers(rctx)
		cancel()
		if err == nil && len(brokers) > 0 {
			return nil
		}
		last = err
		select {
		case <-b.proc.exited:
			return fmt.Errorf("%w: the JVM exited: %v", ErrStart, b.proc.waitErr)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: no answer on %s within %s: %v", ErrStart, b.Addr, timeout, last)
		}
	}
}

// Stop kills the broker's process group and waits for the JVM to exit.
// It may be called more than once.
func (b *Broker) Stop() {
	b.proc.once.Do(func() {
		killGroup(b.proc.cmd)
		<-b.proc.exited
	})
}

// LogPath is the file holding the broker's output.
func (b *Broker) LogPath() string { return filepath.Join(b.Dir, "broker.log") }

// LogTail returns the last n lines of the broker's output.
func (b *Broker) LogTail(n int) string { return tail(b.LogPath(), n) }

// CreateTopic creates topic with the given partitions (replication factor
// 1) and waits until every partition has a leader.
func (b *Broker) CreateTopic(t testing.TB, topic string, partitions int32) {
	t.Helper()
	if err := b.CreateTopicContext(t.Context(), topic, partitions); err != nil {
		t.Fatal(err)
	}
}

// CreateTopicContext is CreateTopic returning its error.
func (b *Broker) CreateTopicContext(ctx context.Context, topic string, partitions int32) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	resp, err := adm.CreateTopic(ctx, partitions, 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	for {
		md, err := adm.Metadata(ctx, topic)
		if err == nil {
			td, ok := md.Topics[topic]
			ready := ok && td.Err == nil && len(td.Partitions) == int(partitions)
			for _, p := range td.Partitions {
				if p.Leader < 0 || p.Err != nil {
					ready = false
				}
			}
			if ready {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topic %s has no leaders: %w", topic, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

type process struct {
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
	once    sync.Once
}

func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(read %s: %v)", path, err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
