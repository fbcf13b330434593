#!/usr/bin/env bash
# Installs what the VS Code extension's end-to-end test (editors/vscode/e2e) drives, each pinned,
# into target/test-tools/vscode, and prints where they are as KEY=path lines. Stdout carries
# nothing else; progress and errors go to stderr.
#
#   CODE_SERVER  code-server from the npm registry: a real VS Code (the workbench in a browser)
#   CHROMIUM     Debian's chromium package, which playwright-core drives (no browser download)
#
# Nothing is fetched from outside the npm registry and the Debian archive. code-server's own
# install script would download ripgrep from GitHub, so the install runs without scripts and
# then does the script's steps itself: the native modules are built from source against the
# local Node's headers, and ripgrep is Debian's.
#
# Exit status: 0 when everything is ready; 3 when this machine cannot have it (a prerequisite
# is missing); anything else when an install failed.
set -euo pipefail

# code-server 4.100.3 (VS Code 1.100.3) is the newest whose engines field accepts Node 20; later
# releases want Node 22. The extension's engines.vscode (^1.100.0) is chosen to match it.
readonly CODE_SERVER_VERSION=4.100.3
# Debian bookworm's chromium. A security update replaces it in the archive; bump this then.
readonly CHROMIUM_VERSION=156.0.8078.108-1~deb12u1
# code-server's native modules build only on the Node major it was released for.
readonly NODE_MAJOR=20

here=${BASH_SOURCE[0]%/*}
[[ $here == "${BASH_SOURCE[0]}" ]] && here=.
root=$(cd "$here/.." && pwd)
dir=$root/target/test-tools/vscode
marker=$dir/.installed-code-server-$CODE_SERVER_VERSION
code_server=$dir/node_modules/.bin/code-server

say() { echo "vscode-e2e-tools: $*" >&2; }
missing() {
    say "$*"
    exit 3
}

mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9

# Debian's packages: Chromium at the pinned version; ripgrep (code-server's search, which its own
# install would download) and the Kerberos headers (one of its native modules) at the archive's.
apt_install() {
    [[ $(id -u) == 0 ]] || missing "not installed: $* (as root: apt-get install $*)"
    command -v apt-get >/dev/null || missing "not installed and there is no apt-get: $*"
    say "installing $*"
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >&2; then
        apt-get update -q >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >&2
    fi
}
wanted=()
command -v chromium >/dev/null || wanted+=("chromium=$CHROMIUM_VERSION")
command -v rg >/dev/null || wanted+=(ripgrep)
[[ -f /usr/include/krb5.h ]] || wanted+=(libkrb5-dev)
((${#wanted[@]} == 0)) || apt_install "${wanted[@]}"
chromium=$(command -v chromium)
installed=$(dpkg-query -W -f '${Version}' chromium 2>/dev/null || true)
[[ $installed == "$CHROMIUM_VERSION" ]] ||
    missing "chromium is $installed, not the pinned $CHROMIUM_VERSION (bump CHROMIUM_VERSION after checking the test passes)"

if [[ ! -e $marker ]]; then
    node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || true)
    [[ $node_major == "$NODE_MAJOR" ]] || missing "code-server $CODE_SERVER_VERSION needs Node $NODE_MAJOR, this is Node ${node_major:-none}"
    rg=$(command -v rg)
    command -v c++ >/dev/null && command -v make >/dev/null ||
        missing "no C++ compiler or make, needed to build code-server's native modules"
    # node-gyp builds against these headers instead of downloading them.
    nodedir=$(cd "$(dirname "$(command -v node)")/.." && pwd)
    [[ -f $nodedir/include/node/node_api.h ]] || missing "no Node headers under $nodedir/include/node"
    export npm_config_nodedir=$nodedir npm_config_build_from_source=true npm_config_yes=true
    export npm_config_audit=false npm_config_fund=false JOBS=1

    say "installing code-server $CODE_SERVER_VERSION into $dir"
    rm -rf "$dir/node_modules" "$dir/package.json" "$dir/package-lock.json"
    (cd "$dir" && npm install --ignore-scripts --save-exact --prefix . "code-server@$CODE_SERVER_VERSION" >&2)
    (cd "$dir" && npm rebuild argon2 >&2)
    vscode=$dir/node_modules/code-server/lib/vscode
    (cd "$vscode" && npm install --omit=dev --ignore-scripts >&2)
    # With bin/ in place, @vscode/ripgrep's install script keeps it instead of downloading.
    mkdir -p "$vscode/node_modules/@vscode/ripgrep/bin"
    ln -sf "$rg" "$vscode/node_modules/@vscode/ripgrep/bin/rg"
    (cd "$vscode" && npm rebuild >&2)
    # The rest of code-server's install script: its symlinks and the built-in extensions'
    # dependencies (its `npm install` in lib/vscode finds everything in place).
    (cd "$dir/node_modules/code-server" &&
        npm_config_user_agent="npm/$(npm -v) node/$(node -v) linux x64" npm_config_unsafe_perm=true \
            sh ./postinstall.sh >&2)
    # Pointed into the install: without a config home it writes one into ~/.config.
    XDG_CONFIG_HOME=$dir/.config XDG_DATA_HOME=$dir/.local "$code_server" --version >&2
    touch "$marker"
fi

echo "CODE_SERVER=$code_server"
echo "CHROMIUM=$chromium"
