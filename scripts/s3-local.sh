#!/usr/bin/env bash
# Starts a local S3 server (versitygw, installed by install-s3-server.sh) over
# DIR for the docs/s3.md walkthrough, on a free port of 127.0.0.1, with fresh
# random credentials, and checks that the server answering on that port is
# the one it started: lakesink must reach it with those credentials (a
# foreign server would refuse them). On success it prints the shell exports
# to use it (S3, AWS_*, LAKESINK_S3_PID); on any failure it prints the
# server's log and exits 1, so nothing is ever written into someone else's
# server.
#
#   ./scripts/s3-local.sh ./s3data > s3.env && . ./s3.env
#   ...
#   kill "$LAKESINK_S3_PID"
#
# Each subfolder of DIR is a bucket. Needs bin/lakesink (make build).
set -euo pipefail

dir="${1:?usage: $0 DIR}"
root="$(cd "$(dirname "$0")/.." && pwd)"
lakesink="$root/bin/lakesink"
gw="$(go env GOPATH)/bin/versitygw"
[[ -x "$gw" ]] || "$root/scripts/install-s3-server.sh" >&2
[[ -x "$lakesink" ]] || { echo "s3-local: $lakesink missing: run make build first" >&2; exit 1; }
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"

# A free port: one that nothing answers on (the server's own bind is the
# final check: if someone takes the port meanwhile, versitygw exits).
port=""
for _ in $(seq 50); do
	p=$((20000 + RANDOM % 40000))
	if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
		port=$p
		break
	fi
done
[[ -n "$port" ]] || { echo "s3-local: no free port found" >&2; exit 1; }

key="local-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
secret="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
log="$dir.versitygw.log"
ROOT_ACCESS_KEY_ID="$key" ROOT_SECRET_ACCESS_KEY="$secret" \
	"$gw" --port "127.0.0.1:$port" --quiet posix "$dir" >"$log" 2>&1 &
pid=$!

fail() {
	echo "s3-local: $1; versitygw log ($log):" >&2
	tail -n 20 "$log" >&2 || true
	rm -rf "$probe"
	kill "$pid" 2>/dev/null || true
	exit 1
}

s3="region=us-east-1&endpoint=http://127.0.0.1:$port&use_path_style=true"
bucket="probe-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')" # a bucket only this server serves
probe="$dir/$bucket"
mkdir "$probe"
ok=""
for _ in $(seq 50); do
	kill -0 "$pid" 2>/dev/null || fail "versitygw exited (port $port taken?)"
	# Ours: it accepts the fresh credentials and serves the probe bucket
	# (an empty one: "not a Delta table"); anything else is not ours yet.
	if out=$(AWS_ACCESS_KEY_ID="$key" AWS_SECRET_ACCESS_KEY="$secret" AWS_EC2_METADATA_DISABLED=true \
		"$lakesink" describe "s3://$bucket/probe?$s3" 2>&1); then
		fail "the probe bucket $bucket unexpectedly holds a table"
	fi
	case "$out" in
	*"not a Delta table"* | *"no _delta_log"* | *"table not found"*) ok=1; break ;;
	esac
	sleep 0.1
done
rmdir "$probe"
[[ -n "$ok" ]] || fail "no answer from our server on 127.0.0.1:$port with its credentials (last: $out)"

cat <<ENV
export AWS_ACCESS_KEY_ID='$key' AWS_SECRET_ACCESS_KEY='$secret'
export AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
export S3='$s3'
export LAKESINK_S3_PID=$pid
ENV
echo "s3-local: versitygw (pid $pid) serves $dir on 127.0.0.1:$port" >&2
