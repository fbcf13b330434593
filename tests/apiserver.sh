#!/usr/bin/env bash
# A real kube-apiserver with a real etcd on 127.0.0.1, for the `cluster` tests.
#
#   tests/apiserver.sh build            build kube-apiserver v1.36.3 and etcd v3.6.8 from their Go
#                                       modules into the cache (skipped when they are there)
#   tests/apiserver.sh start DIR        start both with an empty data dir under DIR; write
#                                       DIR/kubeconfig (admin), DIR/kubeconfig-nobody (a token with
#                                       no permissions), DIR/pids; print "ready" when /readyz is ok
#   tests/apiserver.sh stop DIR         stop what start started
#   tests/apiserver.sh vpa-crd          print the path of the VerticalPodAutoscaler CRDs of
#                                       k8s.io/autoscaler/vertical-pod-autoscaler v1.8.1, fetched
#                                       through the Go module proxy into the module cache
#
# The binaries are cached outside the checkout ($GOLINT_K8S_CACHE, default ~/.cache/golint-k8s) so
# that reruns and fresh clones on the same machine skip the build (about 8 minutes cold).
# Exit status 3 means this machine cannot have them (no go, no openssl).
set -euo pipefail

readonly K8S_VERSION=v1.36.3
readonly STAGING_VERSION=v0.36.3
readonly ETCD_VERSION=v3.6.8
readonly VPA_MODULE=k8s.io/autoscaler/vertical-pod-autoscaler
readonly VPA_VERSION=v1.8.1

cache=${GOLINT_K8S_CACHE:-$HOME/.cache/golint-k8s}
bin=$cache/apiserver-$K8S_VERSION-etcd-$ETCD_VERSION
say() { echo "apiserver: $*" >&2; }
impossible() {
    say "cannot: $*"
    exit 3
}

build() {
    if [[ -x $bin/kube-apiserver && -x $bin/etcd ]] &&
        "$bin/kube-apiserver" --version 2>/dev/null | grep -qx "Kubernetes $K8S_VERSION"; then
        return 0
    fi
    command -v go >/dev/null || impossible "go not found"
    mkdir -p "$cache"
    exec 8>"$cache/.build.lock"
    flock 8
    if [[ -x $bin/kube-apiserver && -x $bin/etcd ]]; then
        return 0
    fi
    local work
    work=$(mktemp -d "$cache/build.XXXXXX")
    # kubernetes cannot be `go install`ed (its go.mod replaces the staging modules with local
    # paths), so a throwaway module requires it and replaces each staging module it requires as
    # v0.0.0 with the published version.
    local gomod
    gomod=$(GOFLAGS= go mod download -json "k8s.io/kubernetes@$K8S_VERSION" |
        sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
    [[ -f $gomod ]] || { say "no go.mod for k8s.io/kubernetes@$K8S_VERSION"; exit 1; }
    mkdir -p "$work/k8s" "$work/etcd"
    {
        echo "module golintk8s.test/apiserver"
        echo "go 1.26"
        echo "require k8s.io/kubernetes $K8S_VERSION"
        grep -E '^[[:space:]]+k8s\.io/[a-z0-9-]+ v0\.0\.0$' "$gomod" | awk '{print $1}' |
            grep -vE '^k8s\.io/(sample-controller|sample-cli-plugin)$' |
            while read -r m; do echo "replace $m => $m $STAGING_VERSION"; done
    } >"$work/k8s/go.mod"
    echo 'package main' >"$work/k8s/tools.go"
    local pkg=k8s.io/component-base/version
    say "building kube-apiserver $K8S_VERSION (about 8 minutes the first time)"
    (cd "$work/k8s" && CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false" go build -trimpath \
        -ldflags "-s -w -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=36" \
        -o "$work/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver) >&2
    {
        echo "module golintk8s.test/etcd"
        echo "go 1.26"
        echo "require go.etcd.io/etcd/server/v3 $ETCD_VERSION"
        for m in api/v3 client/pkg/v3 client/v3 pkg/v3; do
            echo "replace go.etcd.io/etcd/$m => go.etcd.io/etcd/$m $ETCD_VERSION"
        done
    } >"$work/etcd/go.mod"
    echo 'package main' >"$work/etcd/tools.go"
    say "building etcd $ETCD_VERSION"
    (cd "$work/etcd" && CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false" go build -trimpath \
        -ldflags "-s -w" -o "$work/etcd-bin" go.etcd.io/etcd/server/v3) >&2
    mkdir -p "$bin.tmp"
    mv "$work/kube-apiserver" "$bin.tmp/kube-apiserver"
    mv "$work/etcd-bin" "$bin.tmp/etcd"
    rm -rf "$bin" && mv "$bin.tmp" "$bin"
    rm -rf "$work"
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

start() {
    local dir=$1
    command -v openssl >/dev/null || impossible "openssl not found"
    build
    rm -rf "$dir"
    mkdir -p "$dir/pki" "$dir/etcd-data"
    local pki=$dir/pki
    # A CA, and a serving certificate that is not a CA (rustls refuses a CA as a server cert).
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=golint-k8s-test-ca" \
        -keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" \
        -keyout "$pki/server.key" -out "$pki/server.csr" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' \
        >"$pki/ext.cnf"
    openssl x509 -req -in "$pki/server.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" \
        -CAcreateserial -days 2 -extfile "$pki/ext.cnf" -out "$pki/server.crt" 2>/dev/null
    openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
    openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
    local admin nobody
    admin=$(openssl rand -hex 16)
    nobody=$(openssl rand -hex 16)
    printf '%s,admin,admin-uid,"system:masters"\n%s,nobody,nobody-uid\n' "$admin" "$nobody" \
        >"$pki/tokens.csv"

    local etcd_client etcd_peer port
    etcd_client=$(free_port)
    etcd_peer=$(free_port)
    port=$(free_port)
    "$bin/etcd" --data-dir "$dir/etcd-data" --unsafe-no-fsync \
        --listen-client-urls "http://127.0.0.1:$etcd_client" \
        --advertise-client-urls "http://127.0.0.1:$etcd_client" \
        --listen-peer-urls "http://127.0.0.1:$etcd_peer" \
        --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
        --initial-cluster "default=http://127.0.0.1:$etcd_peer" \
        >"$dir/etcd.log" 2>&1 &
    echo $! >"$dir/pids"
    "$bin/kube-apiserver" --bind-address=127.0.0.1 --advertise-address=127.0.0.1 \
        --secure-port="$port" --tls-cert-file="$pki/server.crt" \
        --tls-private-key-file="$pki/server.key" --client-ca-file="$pki/ca.crt" \
        --etcd-servers="http://127.0.0.1:$etcd_client" \
        --service-account-issuer=https://kubernetes.default.svc \
        --service-account-key-file="$pki/sa.pub" \
        --service-account-signing-key-file="$pki/sa.key" --api-audiences=golint-k8s-test \
        --token-auth-file="$pki/tokens.csv" --authorization-mode=RBAC \
        --service-cluster-ip-range=10.96.0.0/16 --endpoint-reconciler-type=none \
        --disable-admission-plugins=ServiceAccount --allow-privileged=true \
        >"$dir/apiserver.log" 2>&1 &
    echo $! >>"$dir/pids"

    local ca
    ca=$(base64 -w0 <"$pki/ca.crt")
    for who in admin nobody; do
        local token=$admin file=$dir/kubeconfig
        [[ $who == nobody ]] && token=$nobody file=$dir/kubeconfig-nobody
        cat >"$file" <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: test
    cluster:
      server: https://127.0.0.1:$port
      certificate-authority-data: $ca
users:
  - name: $who
    user:
      token: $token
contexts:
  - name: test
    context: {cluster: test, user: $who}
current-context: test
EOF
    done
    echo "https://127.0.0.1:$port" >"$dir/server"
    for _ in $(seq 1 120); do
        if curl -fsS --cacert "$pki/ca.crt" -H "Authorization: Bearer $admin" \
            "https://127.0.0.1:$port/readyz" >/dev/null 2>&1; then
            echo ready
            return 0
        fi
        sleep 0.5
    done
    say "kube-apiserver did not become ready; the end of its log:"
    tail -20 "$dir/apiserver.log" >&2
    stop "$dir"
    exit 1
}

stop() {
    local dir=$1
    [[ -f $dir/pids ]] || return 0
    # The API server first, then etcd.
    tac "$dir/pids" | while read -r pid; do
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 1 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -9 "$pid" 2>/dev/null || true
    done
    rm -f "$dir/pids"
}

# The module's checksum is verified against the checksum database like any other download.
vpa_crd() {
    command -v go >/dev/null || impossible "go not found"
    local dir
    dir=$(GOFLAGS= go mod download -json "$VPA_MODULE@$VPA_VERSION" |
        sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
    [[ -f $dir/deploy/vpa-v1-crd-gen.yaml ]] || { say "no CRD in $VPA_MODULE@$VPA_VERSION"; exit 1; }
    echo "$dir/deploy/vpa-v1-crd-gen.yaml"
}

case ${1:-} in
build) build ;;
vpa-crd) vpa_crd ;;
start) start "${2:?start DIR}" ;;
stop) stop "${2:?stop DIR}" ;;
*)
    sed -n '2,15p' "$0" >&2
    exit 2
    ;;
esac
