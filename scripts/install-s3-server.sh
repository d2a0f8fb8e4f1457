#!/usr/bin/env bash
# Installs versitygw, the S3-compatible server the S3 integration tests start
# on 127.0.0.1 (package internal/s3test). Idempotent: when the pinned version
# is already installed it returns at once.
#
#   scripts/install-s3-server.sh            # into $(go env GOPATH)/bin
#   GOBIN=/some/dir scripts/install-s3-server.sh
#
# Override the version with VERSITYGW_VERSION (default v1.8.0, Apache-2.0).
set -euo pipefail

version="${VERSITYGW_VERSION:-v1.8.0}"
bindir="${GOBIN:-$(go env GOPATH)/bin}"
bin="$bindir/versitygw"
stamp="$bindir/.versitygw-version"

if [[ -x "$bin" && -f "$stamp" && "$(cat "$stamp")" == "$version" ]]; then
	echo "versitygw $version already installed: $bin"
	exit 0
fi

mkdir -p "$bindir"
echo "installing versitygw $version into $bindir (first time: a few minutes)"
# -buildvcs=false: the build happens inside the module cache, not a checkout.
GOBIN="$bindir" GOFLAGS=-buildvcs=false go install "github.com/versity/versitygw/cmd/versitygw@$version"
echo "$version" >"$stamp"
echo "installed $bin"
