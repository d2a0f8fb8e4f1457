package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/lakesink/lakesink/stream/kafka"
)

// KafkaFlags are the Kafka source flags of `lakesink ingest` (docs/kafka.md).
type KafkaFlags struct {
	Bootstrap            []string
	Topics               []string
	TopicPattern         string
	StartingOffsets      string
	MaxOffsetsPerTrigger int64
	FailOnDataLoss       bool
	IncludeHeaders       bool
	ValueFormat          string
	Options              map[string]string
	TLS                  bool
	TLSCA                string
	TLSCert, TLSKey      string
	TLSSkipVerify        bool
	SASLMechanism        string
	SASLUser             string
	Group                string // ingest_group.go
	Assign               string
}

// Environment variables read by the Kafka flags.
const (
	envKafkaBootstrap = "LAKESINK_KAFKA_BOOTSTRAP"
	envKafkaSASLUser  = "LAKESINK_KAFKA_SASL_USERNAME"
	envKafkaSASLPass  = "LAKESINK_KAFKA_SASL_PASSWORD"
)

// AddFlags registers the flags.
func (o *KafkaFlags) AddFlags(f *pflag.FlagSet) {
	f.StringSliceVar(&o.Bootstrap, "kafka-bootstrap", nil, "Kafka bootstrap servers host:port, comma-separated (env "+envKafkaBootstrap+"); selects the Kafka source")
	f.StringSliceVar(&o.Topics, "kafka-topic", nil, "Kafka topic(s) to read, comma-separated")
	f.StringVar(&o.TopicPattern, "kafka-topic-pattern", "", "regular expression over whole topic names (instead of --kafka-topic); new matching topics are picked up")
	f.StringVar(&o.StartingOffsets, "starting-offsets", "latest", `where a new query starts: earliest, latest, or JSON {"topic":{"0":23,"1":-2}} (-2 earliest, -1 latest)`)
	f.Int64Var(&o.MaxOffsetsPerTrigger, "max-offsets-per-trigger", 0, "at most N Kafka records per micro-batch, split across partitions by backlog (0: no limit)")
	f.BoolVar(&o.FailOnDataLoss, "fail-on-data-loss", true, "fail when records of a planned range were deleted (retention) before they were read; false: skip them with a warning")
	f.BoolVar(&o.IncludeHeaders, "kafka-include-headers", false, "add the headers column (array<struct<key:string,value:binary>>)")
	f.StringVar(&o.ValueFormat, "value-format", "", "Kafka value format: empty keeps the raw Kafka columns (key, value, topic, partition, offset, timestamp, timestampType); json decodes values against --schema")
	f.StringToStringVar(&o.Options, "kafka-option", nil, "consumer property, e.g. kafka.client.id=lakesink,kafka.isolation.level=read_committed (repeatable)")
	f.BoolVar(&o.TLS, "kafka-tls", false, "connect to the brokers with TLS")
	f.StringVar(&o.TLSCA, "kafka-tls-ca", "", "PEM file of CA certificates to trust (implies --kafka-tls)")
	f.StringVar(&o.TLSCert, "kafka-tls-cert", "", "PEM client certificate for mutual TLS (with --kafka-tls-key)")
	f.StringVar(&o.TLSKey, "kafka-tls-key", "", "PEM client key for mutual TLS")
	f.BoolVar(&o.TLSSkipVerify, "kafka-tls-insecure-skip-verify", false, "do not verify the brokers' certificates (testing only)")
	f.StringVar(&o.SASLMechanism, "kafka-sasl-mechanism", "", "SASL mechanism: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (password from env "+envKafkaSASLPass+")")
	f.StringVar(&o.SASLUser, "kafka-sasl-username", "", "SASL user name (default env "+envKafkaSASLUser+")")
	f.StringVar(&o.Group, "kafka-group", "", "consumer-group mode: workers with the same group share the topic's partitions; each commit carries a txn per partition (appId <group>-<topic>-<partition>, version = last offset); no --checkpoint")
	f.StringVar(&o.Assign, "kafka-assign", "", `static split instead of group membership (Spark's assign): JSON {"topic":[0,1]}; needs --kafka-group to name the txn appIds`)
}

// Enabled reports whether the ingest reads Kafka: --format kafka, or
// --kafka-bootstrap given (or its environment variable with --format kafka).
func (o *KafkaFlags) Enabled(format string) bool {
	return format == "kafka" || len(o.Bootstrap) > 0
}

func (o *KafkaFlags) brokers() []string {
	if len(o.Bootstrap) > 0 {
		return o.Bootstrap
	}
	if env := os.Getenv(envKafkaBootstrap); env != "" {
		return strings.Split(env, ",")
	}
	return nil
}

// kafkaOptions turns the flags into kafka.Options; ingest.Run adds the row
// options (--schema or the table's, --timestamp-format, the bad-records
// hook) for --value-format json and validates them.
func kafkaOptions(o KafkaFlags) (kafka.Options, error) {
	ko := kafka.DefaultOptions()
	ko.Brokers = o.brokers()
	if len(ko.Brokers) == 0 {
		return ko, fmt.Errorf("the Kafka source needs --kafka-bootstrap (or %s)", envKafkaBootstrap)
	}
	ko.Topics, ko.TopicPattern = o.Topics, o.TopicPattern
	ko.StartingOffsets = o.StartingOffsets
	ko.MaxOffsetsPerTrigger = o.MaxOffsetsPerTrigger
	ko.FailOnDataLoss = o.FailOnDataLoss
	ko.IncludeHeaders = o.IncludeHeaders
	ko.ValueFormat = o.ValueFormat
	ko.Consumer = o.Options
	if o.TLS || o.TLSCA != "" || o.TLSCert != "" {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: o.TLSSkipVerify} //nolint:gosec // opt-in flag
		if o.TLSCA != "" {
			pem, err := os.ReadFile(o.TLSCA)
			if err != nil {
				return ko, fmt.Errorf("--kafka-tls-ca: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return ko, fmt.Errorf("--kafka-tls-ca %s: no PEM certificates", o.TLSCA)
			}
			cfg.RootCAs = pool
		}
		if (o.TLSCert == "") != (o.TLSKey == "") {
			return ko, fmt.Errorf("give both --kafka-tls-cert and --kafka-tls-key, or neither")
		}
		if o.TLSCert != "" {
			cert, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey)
			if err != nil {
				return ko, fmt.Errorf("--kafka-tls-cert/--kafka-tls-key: %w", err)
			}
			cfg.Certificates = []tls.Certificate{cert}
		}
		ko.TLS = cfg
	}
	if o.SASLMechanism != "" {
		user := o.SASLUser
		if user == "" {
			user = os.Getenv(envKafkaSASLUser)
		}
		pass := os.Getenv(envKafkaSASLPass)
		if user == "" || pass == "" {
			return ko, fmt.Errorf("--kafka-sasl-mechanism %s needs a user (--kafka-sasl-username or %s) and a password (%s)",
				o.SASLMechanism, envKafkaSASLUser, envKafkaSASLPass)
		}
		var m sasl.Mechanism
		switch strings.ToUpper(o.SASLMechanism) {
		case "PLAIN":
			m = plain.Auth{User: user, Pass: pass}.AsMechanism()
		case "SCRAM-SHA-256":
			m = scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()
		case "SCRAM-SHA-512":
			m = scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()
		default:
			return ko, fmt.Errorf("--kafka-sasl-mechanism %q: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", o.SASLMechanism)
		}
		ko.SASL = m
	}
	return ko, nil
}
