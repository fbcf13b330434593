#!/usr/bin/env python3
"""Derive the catalog's version ranges from the programs' own sources.

For each program listed in src/go/catalog-derived.json, read every release of its main module:
the go.mod `go` line, and whether the main packages (and the helper packages named with them)
import go.uber.org/automaxprocs or github.com/KimMachineGun/automemlimit. Releases are sorted by
version and each fact becomes a list of ranges, `from` (inclusive) `below` (exclusive), so a
maintenance branch that moved to Go 1.25 after a newer minor release did, or an import that a
later release removed, is data. Each range boundary keeps its evidence: the tag, the file and the
line that decided it.

Two ways to read a release:
  --source proxy   through the Go module proxy: `go list -m -versions MODULE`, then
                   `go mod download -json MODULE@VERSION` for the module's files (needs `go`);
  --source git     from a local clone or mirror of the project's repository (`--git DIR`, or
                   `--git-root DIR` holding `owner+name/repo` directories): its release tags,
                   or, for a program released without tags (`version_file` in its spec), the
                   commits that set that file to each version.

Usage:
  scripts/derive-catalog.py [--source git|proxy] [--only PROGRAM] [--check] [--versions V,V]

Without --check the derived ranges and evidence are written back into
src/go/catalog-derived.json; with --check nothing is written and the exit status is 1 when a
derived range differs from the file. A unit test (src/go/catalog.rs) holds the catalog's ranges
to this file, and tests/heavy/derive_catalog.rs re-derives a sample through the module proxy.

Why Python and not a Rust xtask: the script only reads text (go.mod lines, import blocks) and
runs `go` and `git`; as a script it needs no build step and no crate in the workspace, and the
packaging tests already need a Python.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "src", "go", "catalog-derived.json")

IMPORTS = {
    "automaxprocs": "go.uber.org/automaxprocs",
    "automemlimit": "github.com/KimMachineGun/automemlimit",
}
# Calls that size the runtime from the program itself. runtime.GOMAXPROCS(0) only reads the
# value; any other argument sets it and turns Go 1.25's limit-aware default off.
CALLS = {
    "runtime_gomaxprocs": re.compile(r"\bruntime\.GOMAXPROCS\((?!\s*0\s*\))"),
}
GO_LINE = re.compile(r"^go\s+(\d+)\.(\d+)(?:\.(\d+))?\s*(?://.*)?$")


def release_of(tag, prefix):
    """(major, minor, patch) of a release tag with the program's prefix, None otherwise."""
    if not tag.startswith(prefix):
        return None
    m = re.fullmatch(r"v?(\d+)\.(\d+)\.(\d+)", tag[len(prefix):])
    return tuple(int(x) for x in m.groups()) if m else None


def show(v):
    return "%d.%d.%d" % v


class Git:
    """Releases from a git repository's tags; paths are relative to the module's directory."""

    def __init__(self, git_dir, module_dir):
        self.git_dir = git_dir
        self.module_dir = module_dir

    def run(self, *args, check=True):
        r = subprocess.run(
            ["git", "--git-dir", self.git_dir, *args],
            capture_output=True,
            text=True,
        )
        if check and r.returncode != 0:
            raise RuntimeError("git %s: %s" % (" ".join(args), r.stderr.strip()))
        return r

    def tags(self, spec):
        if "version_file" in spec:
            return self.version_file_commits(spec)
        out = self.run("tag", "--list").stdout.split()
        return {t: release_of(t, spec.get("tag_prefix", "v")) for t in out}

    def version_file_commits(self, spec):
        """A program released without tags, by a file that holds its version (an image's TAG):
        each release is the default branch's first commit that set the file to it."""
        path = spec["version_file"]
        out = self.run("log", "--format=%H", "--reverse", "HEAD", "--", path).stdout.split()
        releases = {}
        seen = set()
        for commit in out:
            r = self.run("show", "%s:%s" % (commit, path), check=False)
            version = release_of(r.stdout.strip(), "v") if r.returncode == 0 else None
            if version is not None and version not in seen:
                seen.add(version)
                releases[commit] = version
        return releases

    def read(self, tag, path):
        r = self.run("show", "%s:%s" % (tag, os.path.join(self.module_dir, path)), check=False)
        return r.stdout if r.returncode == 0 else None

    def go_files(self, tag, directory):
        full = os.path.join(self.module_dir, directory).rstrip("/")
        tree = "%s:%s" % (tag, full) if full else tag
        r = self.run("ls-tree", "--name-only", tree, check=False)
        if r.returncode != 0:
            return []
        return [
            (os.path.join(directory, n) if directory else n)
            for n in r.stdout.split()
            if n.endswith(".go") and not n.endswith("_test.go")
        ]


class Proxy:
    """Releases through the Go module proxy, one module."""

    def __init__(self, module, cache):
        self.module = module
        self.cache = cache
        self.dirs = {}

    def env(self):
        e = dict(os.environ)
        e["GOFLAGS"] = "-mod=mod -modcacherw"
        e.setdefault("GOMODCACHE", self.cache)
        return e

    def tags(self, spec):
        r = subprocess.run(
            ["go", "list", "-m", "-versions", self.module],
            capture_output=True,
            text=True,
            env=self.env(),
        )
        if r.returncode != 0:
            raise RuntimeError("go list -m -versions %s: %s" % (self.module, r.stderr.strip()))
        return {v: release_of(v, "v") for v in r.stdout.split()[1:]}

    def dir(self, version):
        if version not in self.dirs:
            r = subprocess.run(
                ["go", "mod", "download", "-json", "%s@%s" % (self.module, version)],
                capture_output=True,
                text=True,
                env=self.env(),
            )
            d = json.loads(r.stdout) if r.stdout.strip() else {}
            self.dirs[version] = d.get("Dir") if not d.get("Error") else None
        return self.dirs[version]

    def read(self, version, path):
        root = self.dir(version)
        if root is None:
            return None
        try:
            with open(os.path.join(root, path), encoding="utf-8") as f:
                return f.read()
        except OSError:
            return None

    def go_files(self, version, directory):
        root = self.dir(version)
        if root is None:
            return []
        try:
            names = sorted(os.listdir(os.path.join(root, directory)))
        except OSError:
            return []
        return [
            os.path.join(directory, n) if directory else n
            for n in names
            if n.endswith(".go") and not n.endswith("_test.go")
        ]


def go_line(text):
    """The go.mod `go` line as (major, minor) and its line number."""
    for i, line in enumerate(text.splitlines(), 1):
        m = GO_LINE.match(line.strip())
        if m:
            return (int(m.group(1)), int(m.group(2))), i, line.strip()
    return None


def imports(text, path):
    """(line number, line) of an import of `path` or one of its packages."""
    for i, line in enumerate(text.splitlines(), 1):
        m = re.search(r'"([^"]+)"', line)
        if m and (m.group(1) == path or m.group(1).startswith(path + "/")):
            if re.match(r"\s*(import\s+)?(_\s+|\w+\s+)?\"", line):
                return i, line.strip()
    return None


def calls(text, pattern):
    """(line number, line) of the first line matching `pattern`, outside `//` comments."""
    for i, line in enumerate(text.splitlines(), 1):
        code = line.split("//", 1)[0]
        if pattern.search(code):
            return i, line.strip()
    return None


def facts_of(reader, tag, spec):
    """The facts of one release: {fact: (bool, evidence)}, or None when it cannot be read."""
    # Evidence names files as the repository has them.
    in_repo = lambda path: os.path.join(spec.get("module_dir", ""), path)
    gomod_path = "go.mod"
    gomod = reader.read(tag, gomod_path)
    if gomod is None:
        return None
    facts = {}
    line = go_line(gomod)
    if line is None:
        facts["go_1_25"] = (
            False,
            {"tag": tag, "file": in_repo(gomod_path), "line": 0, "text": "no go line"},
        )
    else:
        (major, minor), n, text = line
        facts["go_1_25"] = (
            (major, minor) >= (1, 25),
            {"tag": tag, "file": in_repo(gomod_path), "line": n, "text": text},
        )
    for fact in spec.get("imports", []):
        found = None
        for directory in spec.get("packages", [""]):
            for f in reader.go_files(tag, directory):
                src = reader.read(tag, f)
                if fact in CALLS:
                    hit = src and calls(src, CALLS[fact])
                else:
                    hit = src and imports(src, IMPORTS[fact])
                if hit:
                    found = {"tag": tag, "file": in_repo(f), "line": hit[0], "text": hit[1]}
                    break
            if found:
                break
        if found:
            facts[fact] = (True, found)
        else:
            dirs = ", ".join(in_repo(d) or "." for d in spec.get("packages", [""]))
            facts[fact] = (
                False,
                {"tag": tag, "file": dirs, "line": 0, "text": "no %s" % IMPORTS.get(fact, fact)},
            )
    return facts


def ranges(releases, fact):
    """Ranges of consecutive releases (in version order) where the fact holds."""
    out = []
    current = None
    for version, facts in releases:
        holds, evidence = facts[fact]
        if holds and current is None:
            current = {"from": show(version), "evidence": [evidence]}
        elif not holds and current is not None:
            current["below"] = show(version)
            current["evidence"].append(evidence)
            out.append(current)
            current = None
    if current is not None:
        out.append(current)
    return out


def derive(spec, reader):
    tags = reader.tags(spec)
    releases = sorted((v, t) for t, v in tags.items() if v is not None)
    if "first" in spec:
        first = tuple(int(x) for x in spec["first"].split("."))
        releases = [(v, t) for v, t in releases if v >= first]
    if "last_below" in spec:
        # A major version kept in the same repository as another program (Cloud SQL Proxy v1).
        below = tuple(int(x) for x in spec["last_below"].split("."))
        releases = [(v, t) for v, t in releases if v < below]
    read = []
    unreadable = []
    for version, tag in releases:
        facts = facts_of(reader, tag, spec)
        if facts is None:
            unreadable.append(tag)
            continue
        read.append((version, facts))
    result = {"releases_read": len(read)}
    if unreadable:
        result["unreadable"] = unreadable
    for fact in ["go_1_25"] + spec.get("imports", []):
        result[fact] = ranges(read, fact)
    return result


def reader_for(spec, args):
    if args.source == "proxy":
        return Proxy(spec["module"], args.modcache)
    module_dir = spec.get("module_dir", "")
    if args.git:
        return Git(args.git, module_dir)
    root = args.git_root or os.environ.get("GOLINT_K8S_GIT_ROOT")
    if not root:
        sys.exit("--source git needs --git DIR or --git-root DIR")
    return Git(os.path.join(root, spec["repository"].replace("/", "+"), "repo"), module_dir)


def strip_evidence(d):
    return {
        k: [{kk: vv for kk, vv in r.items() if kk != "evidence"} for r in v]
        if isinstance(v, list) and k not in ("unreadable",)
        else v
        for k, v in d.items()
        if k not in ("releases_read", "unreadable")
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--source", choices=["git", "proxy"], default="git")
    p.add_argument("--git", help="the git directory of the one program's repository (with --only)")
    p.add_argument("--git-root", help="a directory of owner+name/repo git directories")
    p.add_argument("--only", action="append", help="a program of catalog-derived.json")
    p.add_argument("--versions", help="only these releases (comma-separated, X.Y.Z)")
    p.add_argument("--check", action="store_true", help="compare, do not write")
    p.add_argument("--data", default=DATA)
    p.add_argument("--modcache", default=os.path.join(tempfile.gettempdir(), "derive-catalog-mod"))
    args = p.parse_args()
    with open(args.data, encoding="utf-8") as f:
        data = json.load(f)
    only_versions = set(args.versions.split(",")) if args.versions else None
    differ = False
    for entry in data["programs"]:
        if args.only and entry["program"] not in args.only:
            continue
        if "spec" not in entry:
            # A program whose releases cannot be read this way; its note says why.
            continue
        reader = reader_for(entry["spec"], args)
        if args.check and only_versions is not None:
            # A sample: each sampled release must fall in the file's ranges exactly when its
            # source says the fact holds.
            # The tag is named, not listed: a proxy lists only the versions it has been asked for.
            prefix = entry["spec"].get("tag_prefix", "v") if args.source == "git" else "v"
            for version in sorted(only_versions):
                facts = facts_of(reader, prefix + version, entry["spec"])
                if facts is None:
                    differ = True
                    print("%s: release %s could not be read" % (entry["program"], version))
                    continue
                for fact, (holds, evidence) in facts.items():
                    said = covered(entry["derived"].get(fact, []), version)
                    if said != holds:
                        differ = True
                        print("%s %s: %s says %s, the file says %s" % (entry["program"], version, fact, holds, said))
                        print("  %s" % json.dumps(evidence))
            continue
        got = derive(entry["spec"], reader)
        if args.check:
            if strip_evidence(entry["derived"]) != strip_evidence(got):
                differ = True
                print("%s: derived %s" % (entry["program"], json.dumps(strip_evidence(got))))
                print("%s: the file has %s" % (entry["program"], json.dumps(strip_evidence(entry["derived"]))))
        else:
            entry["derived"] = got
            print("%s: %d releases read" % (entry["program"], got["releases_read"]), file=sys.stderr)
    if not args.check:
        with open(args.data, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1)
            f.write("\n")
    sys.exit(1 if differ else 0)


def covered(rs, version):
    v = tuple(int(x) for x in version.split("."))
    for r in rs:
        lo = tuple(int(x) for x in r["from"].split("."))
        hi = tuple(int(x) for x in r["below"].split(".")) if "below" in r else None
        if v >= lo and (hi is None or v < hi):
            return True
    return False


if __name__ == "__main__":
    main()
