#!/bin/sh
# Build the .vsix of one VS Code platform target with its golint-k8s binary inside.
# usage: package-target.sh TARGET BINARY   (e.g. linux-x64 path/to/golint-k8s)
# TARGET is one of vsce's: linux-x64, linux-arm64, darwin-x64, darwin-arm64, win32-x64, alpine-x64, ...
set -eu
target=${1:?usage: package-target.sh TARGET BINARY}
binary=${2:?usage: package-target.sh TARGET BINARY}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
case $target in
  win32-*) name=golint-k8s.exe ;;
  *) name=golint-k8s ;;
esac
# bin/ holds exactly one binary: a leftover of another target must not ship.
rm -rf bin
mkdir bin
cp "$binary" "bin/$name"
chmod 755 "bin/$name"
# vsce wants the licence next to the manifest; the repository's is the extension's.
cp ../../LICENSE LICENSE
npm ci --no-audit --no-fund
npx --no-install vsce package --target "$target" --out "golint-k8s-$target.vsix"
