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
  --source proxy   through the Go module proxy: `go list -m -versions MODULE`, then each
                   release's go.mod (`go list -m -json MODULE@VERSION`: the .mod file) and,
                   for imports, its zip (`go mod download -json MODULE@VERSION`; needs `go`);
  --source git     from a local clone or mirror of the project's repository (`--git DIR`, or
                   `--git-root DIR` holding `owner+name/repo` directories): its release tags,
                   or, for a program released without tags (`version_file` in its spec), the
                   commits that set that file to each version.

A program whose repository is too large to clone says `"source": "proxy"` in its spec and is
always read through the proxy. The proxy lists only the versions it holds, so such a listing is
partial: it is widened with the releases the project's release notes name (`release_notes`),
the zip is read only at a few releases, and the ranges keep to the releases read (`ranges`).

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
import glob
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
    """Releases from a git repository's tags; paths are relative to the module's directory.
    Every release tag is read, so the listing is complete."""

    complete = True
    refused = {}

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

    def has_source(self, tag):
        return True

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
    """Releases through the Go module proxy, one module.

    The proxy lists only some of a module's versions (those it holds), so the listing is partial:
    `complete` is False and the ranges keep to the releases read (see `ranges`). A release's
    go.mod is its `.mod` file (`go list -m -json`, no zip); the source, for imports, is the
    module's zip (`go mod download`), read only at the releases `derive` picks.
    """

    complete = False

    def __init__(self, module, cache, scheme=None):
        self.module = module
        self.cache = cache
        self.scheme = scheme
        self.dirs = {}
        self.mods = {}
        self.refused = {}

    def env(self):
        e = dict(os.environ)
        e["GOFLAGS"] = "-mod=mod -modcacherw"
        e.setdefault("GOMODCACHE", self.cache)
        return e

    def go(self, *args):
        return subprocess.run(["go", *args], capture_output=True, text=True, env=self.env())

    def release(self, version):
        """The release a module version stands for. Vitess tags each release vN.0.P twice, the
        second time as v0.N.P, the only one a module of major version 0 or 1 can have."""
        v = release_of(version, "v")
        if v is not None and self.scheme == "v0.MAJOR.PATCH":
            return (v[1], 0, v[2]) if v[0] == 0 else None
        return v

    def version(self, release):
        """The module version of a release (X.Y.Z), the inverse of `release`."""
        v = tuple(int(x) for x in release.split("."))
        if self.scheme == "v0.MAJOR.PATCH":
            return "v0.%d.%d" % (v[0], v[2])
        return "v" + release

    def tags(self, spec):
        r = self.go("list", "-m", "-versions", self.module)
        if r.returncode != 0:
            raise RuntimeError("go list -m -versions %s: %s" % (self.module, r.stderr.strip()))
        listed = {v: self.release(v) for v in r.stdout.split()[1:]}
        self.listed = sorted(v for v, rel in listed.items() if rel is not None)
        self.notes_read_at = []
        releases = dict(listed)
        notes = spec.get("release_notes")
        if notes:
            # The proxy lists what it holds, not every release; the project's release notes
            # name the rest. Read them in the newest listed release of each minor series.
            first = tuple(int(x) for x in spec.get("first", "0.0.0").split("."))
            known = dict(listed)
            if "seed" in notes:
                # A proxy that lists none of the module's releases: the notes of a release the
                # spec names (one the proxy serves) name the others. Newer ones are not read.
                seed = tuple(int(x) for x in notes["seed"].split("."))
                known[self.version(notes["seed"])] = seed
                releases[self.version(notes["seed"])] = seed
            newest = {}
            for v, rel in known.items():
                if rel is not None and rel >= first and rel > newest.get(rel[:2], ((), None))[0]:
                    newest[rel[:2]] = (rel, v)
            for _, v in sorted(newest.values()):
                found = self.releases_in_notes(v, notes)
                if found is not None:
                    self.notes_read_at.append(v)
                    for rel in found:
                        releases.setdefault(self.version(show(rel)), rel)
        return releases

    def releases_in_notes(self, version, notes):
        """The releases a release's notes name: headings of the files `glob` matches
        (`heading`, a pattern whose group is X.Y.Z) or their paths (`path`)."""
        root = self.dir(version)
        if root is None:
            return None
        found = set()
        for path in sorted(glob.glob(os.path.join(root, notes["glob"]))):
            rel = os.path.relpath(path, root)
            if "path" in notes:
                m = re.fullmatch(notes["path"], rel)
                texts = [m.group(1)] if m else []
            else:
                with open(path, encoding="utf-8", errors="replace") as f:
                    texts = [m.group(1) for m in re.finditer(notes["heading"], f.read(), re.M)]
            for t in texts:
                v = release_of(t, "")
                if v is not None:
                    found.add(v)
        return found

    def mod(self, version):
        """The release's go.mod as the proxy serves it (`.info` and `.mod` only)."""
        if version not in self.mods:
            r = self.go("list", "-m", "-json", "%s@%s" % (self.module, version))
            d = json.loads(r.stdout) if r.stdout.strip() else {}
            text = None
            if r.returncode == 0 and d.get("GoMod") and not d.get("Error"):
                with open(d["GoMod"], encoding="utf-8") as f:
                    text = f.read()
            elif r.returncode == 0 and not d.get("Error"):
                # The .info was served and the .mod was not: `go list` says nothing of it.
                self.refused[version] = "the .info is served, the .mod is not"
            else:
                self.refused[version] = refusal(d.get("Error", {}).get("Err") or r.stderr)
            self.mods[version] = text
        return self.mods[version]

    def dir(self, version):
        if version not in self.dirs:
            r = self.go("mod", "download", "-json", "%s@%s" % (self.module, version))
            d = json.loads(r.stdout) if r.stdout.strip() else {}
            if d.get("Error") or not d.get("Dir"):
                self.refused[version] = refusal(d.get("Error") or r.stderr)
            self.dirs[version] = d.get("Dir") if not d.get("Error") else None
        return self.dirs[version]

    def has_source(self, version):
        return self.dir(version) is not None

    def read(self, version, path):
        if path == "go.mod":
            return self.mod(version)
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


def refusal(message):
    """The proxy's reason, one line: `403 Forbidden`, `404 Not Found`, `410 Gone`, ..."""
    text = " ".join(str(message).split())
    m = re.search(r"\b(\d{3} [A-Z][A-Za-z ]+?)(?:\s+server response|$)", text)
    return m.group(1) if m else text[-200:]


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


def facts_of(reader, tag, spec, with_imports=True):
    """The facts of one release: {fact: (bool, evidence)}, or None when it cannot be read.
    Without `with_imports` only the go.mod is read (through the proxy: no zip)."""
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
    if with_imports and spec.get("imports") and not reader.has_source(tag):
        # A zip the proxy refused is not a release without the import.
        return None
    for fact in spec.get("imports", []) if with_imports else []:
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


def successor(version):
    """The least release above `version`: no X.Y.Z release sorts between the two."""
    return version[:2] + (version[2] + 1,)


def ranges(releases, fact, complete=True):
    """Ranges of consecutive releases (in version order) where the fact holds.

    From a complete listing (every tag of a clone) a range runs from the first release where the
    fact holds to the first where it no longer does. From a partial one (the module proxy's) a
    release that was not read may lie between two that were, so a range claims no release the
    reading does not cover: it starts at the first read release where the fact holds and ends
    after the last one (`below` is that release's successor), and the evidence of a boundary
    between two read releases that are not neighbours names both (`boundary_between`). Releases
    where the fact was not read (imports read only at some releases) are skipped."""
    out = []
    current = None
    previous = None
    last = None
    for version, facts in releases:
        if fact not in facts:
            continue
        holds, evidence = facts[fact]
        if holds and current is None:
            evidence = dict(evidence)
            if not complete and previous is None:
                # Nothing older was read: the fact may hold for older releases too.
                evidence["earlier_releases_not_read"] = True
            elif not complete and successor(previous[0]) != version:
                evidence["boundary_between"] = [previous[1]["tag"], evidence["tag"]]
            current = {"from": show(version), "evidence": [evidence]}
        elif not holds and current is not None:
            below = version
            evidence = dict(evidence)
            if not complete and successor(last[0]) != version:
                below = successor(last[0])
                evidence["boundary_between"] = [last[1]["tag"], evidence["tag"]]
            current["below"] = show(below)
            current["evidence"].append(evidence)
            out.append(current)
            current = None
        if holds:
            last = (version, evidence)
        previous = (version, evidence)
    if current is not None:
        out.append(current)
    return out


def import_sample(read):
    """Where a partial listing reads the source (a zip each): the first and the newest release
    read, and both sides of each go_1_25 boundary."""
    picks = {0, len(read) - 1}
    for i in range(1, len(read)):
        if read[i][1]["go_1_25"][0] != read[i - 1][1]["go_1_25"][0]:
            picks.update((i - 1, i))
    return sorted(p for p in picks if p >= 0)


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
        facts = facts_of(reader, tag, spec, with_imports=reader.complete)
        if facts is None:
            unreadable.append(tag)
            continue
        read.append((version, facts))
    imports_read_at = []
    if not reader.complete and spec.get("imports") and read:
        # A zip per release is too much to read at every release; read it where a boundary
        # of the go line is, and at both ends.
        for i in import_sample(read):
            version, facts = read[i]
            tag = facts["go_1_25"][1]["tag"]
            more = facts_of(reader, tag, spec)
            if more is not None:
                facts.update((f, more[f]) for f in spec["imports"])
                imports_read_at.append(tag)
    result = {"releases_read": len(read)}
    if unreadable and reader.complete:
        result["unreadable"] = unreadable
    if not reader.complete:
        # An object, not a range list: what the partial listing covered and what it did not.
        result["listing"] = {
            "source": "module proxy",
            "module": reader.module,
            "releases_listed": len(reader.listed),
            "release_notes_read_at": reader.notes_read_at,
            "releases_named": len(releases),
            "refused": {t: reader.refused[t] for t in unreadable if t in reader.refused},
            "imports_read_at": imports_read_at,
        }
    for fact in ["go_1_25"] + spec.get("imports", []):
        result[fact] = ranges(read, fact, reader.complete)
    return result


def reader_for(spec, args):
    if args.source == "proxy" or spec.get("source") == "proxy":
        # A program whose repository is too large to clone is read through the proxy only.
        return Proxy(spec["module"], args.modcache, spec.get("module_versions"))
    module_dir = spec.get("module_dir", "")
    if args.git:
        return Git(args.git, module_dir)
    root = args.git_root or os.environ.get("GOLINT_K8S_GIT_ROOT")
    if not root:
        sys.exit("--source git needs --git DIR or --git-root DIR")
    return Git(os.path.join(root, spec["repository"].replace("/", "+"), "repo"), module_dir)


def strip_evidence(d):
    """The ranges alone: what the proxy refused on one day is not a difference in the sources."""
    return {
        k: [{kk: vv for kk, vv in r.items() if kk != "evidence"} for r in v]
        for k, v in d.items()
        if isinstance(v, list) and k != "unreadable"
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
            prefix = entry["spec"].get("tag_prefix", "v")
            checked = 0
            refused = 0
            for version in sorted(only_versions):
                tag = prefix + version if reader.complete else reader.version(version)
                facts = facts_of(reader, tag, entry["spec"])
                if facts is None and tag in reader.refused:
                    # The proxy holds some versions and refuses others; a refusal says nothing
                    # about the release, so it is reported, not counted as a difference.
                    refused += 1
                    print("%s: release %s refused by the module proxy: %s" % (entry["program"], version, reader.refused[tag]))
                    continue
                if facts is None:
                    differ = True
                    print("%s: release %s could not be read" % (entry["program"], version))
                    continue
                checked += 1
                for fact, (holds, evidence) in facts.items():
                    said = covered(entry["derived"].get(fact, []), version)
                    if said != holds:
                        differ = True
                        print("%s %s: %s says %s, the file says %s" % (entry["program"], version, fact, holds, said))
                        print("  %s" % json.dumps(evidence))
            print("%s: %d releases checked, %d refused by the module proxy" % (entry["program"], checked, refused))
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
