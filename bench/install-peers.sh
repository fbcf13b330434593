#!/usr/bin/env bash
# Install the peer tools the benchmark compares golint-k8s with, pinned, into target/bench-tools/
# (relative to the repository root), and prepare kubeconform's schemas for offline use.
#
#   bench/install-peers.sh            install what is missing (reruns skip what is installed)
#   bench/install-peers.sh --no-checkov   skip the Checkov virtualenv
#
# Layout:
#   target/bench-tools/bin/kube-score, kubeconform        (go install, pinned)
#   target/bench-tools/bin/kube-linter                     (go build of ../shared/peers' pinned source)
#   target/bench-tools/kubeconform-schemas/v<K8S>-standalone{,-strict}/<kind>-<group>-<version>.json
#   target/bench-tools/checkov-venv/                       (python venv, pinned checkov)
#   target/bench-tools/status/<tool>                       "ok <version>" or "skip <reason>"
#   target/bench-tools/logs/                               install logs and times
# kube-linter and Polaris are not served by the Go module proxy here: kube-linter is built from the
# source beside the checkout when it is there; Polaris is timed only when it is already on PATH.
set -uo pipefail

KUBE_SCORE_VERSION=v1.20.0
KUBECONFORM_VERSION=v0.8.0
K8S_MODULE_VERSION=v1.36.3        # k8s.io/kubernetes module holding api/openapi-spec/swagger.json
CHECKOV_VERSION=3.2.533            # pinned; see docs/performance.md
CHECKOV_TIMEOUT=${CHECKOV_TIMEOUT:-300}   # seconds; past that Checkov is skipped with a note

WITH_CHECKOV=1
for a in "$@"; do
  case "$a" in
    --no-checkov) WITH_CHECKOV=0 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "install-peers.sh: unknown argument $a" >&2; exit 2 ;;
  esac
done

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 2
TOOLS=target/bench-tools
mkdir -p "$TOOLS/bin" "$TOOLS/logs" "$TOOLS/status"

# One install at a time: a second run waits for the first (up to 30 minutes).
exec 9>"$TOOLS/.install.lock"
if ! flock -w 1800 9; then
  echo "install-peers.sh: another install holds $TOOLS/.install.lock" >&2
  exit 1
fi

note() { echo "install-peers: $*"; }
status() { echo "$2" > "$TOOLS/status/$1"; }

# Time a command into logs/<name>.log; print the seconds it took.
timed() {
  local name=$1; shift
  local t0 t1
  t0=$(date +%s.%N)
  "$@" > "$TOOLS/logs/$name.log" 2>&1
  local rc=$?
  t1=$(date +%s.%N)
  echo "$name rc=$rc seconds=$(python3 -c "print(round($t1-$t0,1))")" >> "$TOOLS/logs/install-times.txt"
  return $rc
}

go_tool() {  # name module version
  local name=$1 module=$2 version=$3
  if [[ -x "$TOOLS/bin/$name" && "$(cat "$TOOLS/status/$name" 2>/dev/null)" == "ok $version" ]]; then
    note "$name $version already installed"
    return 0
  fi
  if ! command -v go >/dev/null; then
    note "$name: go is not installed, skipping"; status "$name" "skip go not found"; return 1
  fi
  note "installing $name $version (go install)…"
  if timed "$name" env GOBIN="$ROOT/$TOOLS/bin" GOFLAGS=-buildvcs=false nice -n 10 go install "$module@$version"; then
    status "$name" "ok $version"; note "$name $version installed"
  else
    status "$name" "skip go install failed (see $TOOLS/logs/$name.log)"
    note "$name: go install failed, see $TOOLS/logs/$name.log"; return 1
  fi
}

go_tool kube-score github.com/zegl/kube-score/cmd/kube-score "$KUBE_SCORE_VERSION"
go_tool kubeconform github.com/yannh/kubeconform/cmd/kubeconform "$KUBECONFORM_VERSION"

# kubeconform schemas, offline: from the swagger.json of the k8s.io/kubernetes module.
K8S=${K8S_MODULE_VERSION#v}
SCHEMAS="$TOOLS/kubeconform-schemas"
if [[ -f "$SCHEMAS/v$K8S-standalone-strict/deployment-apps-v1.json" && -f "$SCHEMAS/.done" ]]; then
  note "kubeconform schemas for $K8S already generated"
  status kubeconform-schemas "ok $K8S"
else
  note "downloading k8s.io/kubernetes@$K8S_MODULE_VERSION (go mod download) for its swagger.json…"
  if timed k8s-module go mod download -json "k8s.io/kubernetes@$K8S_MODULE_VERSION"; then
    DIR=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("Dir",""))' "$TOOLS/logs/k8s-module.log" 2>/dev/null)
    SWAGGER="$DIR/api/openapi-spec/swagger.json"
    if [[ -f "$SWAGGER" ]]; then
      rm -rf "$SCHEMAS"
      if timed kubeconform-schemas python3 bench/openapi2kubeconform.py "$SWAGGER" "$SCHEMAS" "$K8S"; then
        touch "$SCHEMAS/.done"; status kubeconform-schemas "ok $K8S"
        note "kubeconform schemas written to $SCHEMAS"
      else
        status kubeconform-schemas "skip schema conversion failed (see $TOOLS/logs/kubeconform-schemas.log)"
      fi
    else
      status kubeconform-schemas "skip no swagger.json in the module"
      note "no api/openapi-spec/swagger.json in the downloaded module"
    fi
  else
    status kubeconform-schemas "skip go mod download failed (see $TOOLS/logs/k8s-module.log)"
    note "go mod download k8s.io/kubernetes failed"
  fi
fi

# Checkov: pinned, in its own virtualenv.
VENV="$TOOLS/checkov-venv"
if [[ $WITH_CHECKOV == 0 ]]; then
  note "Checkov not requested (--no-checkov)"
elif [[ -x "$VENV/bin/checkov" && "$(cat "$TOOLS/status/checkov" 2>/dev/null)" == "ok $CHECKOV_VERSION" ]]; then
  note "checkov $CHECKOV_VERSION already installed"
elif [[ "$(cat "$TOOLS/status/checkov" 2>/dev/null)" == "skip"* && -z "${RETRY_CHECKOV:-}" ]]; then
  note "checkov: skipped by an earlier run ($(cat "$TOOLS/status/checkov")); set RETRY_CHECKOV=1 to try again"
else
  note "installing checkov==$CHECKOV_VERSION in $VENV (limit ${CHECKOV_TIMEOUT}s)…"
  rm -rf "$VENV"
  if timed checkov timeout "$CHECKOV_TIMEOUT" bash -c \
      "python3 -m venv '$VENV' && '$VENV/bin/pip' install --quiet --disable-pip-version-check 'checkov==$CHECKOV_VERSION' && '$VENV/bin/checkov' --version"; then
    status checkov "ok $CHECKOV_VERSION"; note "checkov $CHECKOV_VERSION installed"
  else
    status checkov "skip install failed or took over ${CHECKOV_TIMEOUT}s (see $TOOLS/logs/checkov.log)"
    note "checkov: install failed or took over ${CHECKOV_TIMEOUT}s; the benchmark skips it"
    rm -rf "$VENV"
  fi
fi

# kube-linter's module path is not served by the proxy here, but its source is beside the checkout
# (../shared/peers, pinned tag): build it from there; its dependencies come from the proxy.
KUBE_LINTER_VERSION=v0.8.3
KUBE_LINTER_SRC="../shared/peers/kube-linter-$KUBE_LINTER_VERSION.tar.gz"
if [[ -x "$TOOLS/bin/kube-linter" && "$(cat "$TOOLS/status/kube-linter" 2>/dev/null)" == "ok $KUBE_LINTER_VERSION" ]]; then
  note "kube-linter $KUBE_LINTER_VERSION already installed"
elif [[ -f "$KUBE_LINTER_SRC" ]] && command -v go >/dev/null; then
  note "building kube-linter $KUBE_LINTER_VERSION from $KUBE_LINTER_SRC…"
  rm -rf "$TOOLS/src/kube-linter" && mkdir -p "$TOOLS/src/kube-linter"
  if tar -xzf "$KUBE_LINTER_SRC" -C "$TOOLS/src/kube-linter" \
      && timed kube-linter bash -c "cd '$TOOLS/src/kube-linter' && GOFLAGS=-buildvcs=false nice -n 10 go build -o '$ROOT/$TOOLS/bin/kube-linter' ./cmd/kube-linter"; then
    status kube-linter "ok $KUBE_LINTER_VERSION"; note "kube-linter $KUBE_LINTER_VERSION built"
  else
    status kube-linter "skip build failed (see $TOOLS/logs/kube-linter.log)"
    note "kube-linter: build failed, see $TOOLS/logs/kube-linter.log"
  fi
fi

for t in polaris; do
  if command -v "$t" >/dev/null; then
    note "$t found on PATH ($(command -v "$t")): it will be timed"
  else
    note "$t: not on PATH and not served by the Go module proxy here; the benchmark skips it"
  fi
done
exit 0
