#!/usr/bin/env python3
"""List the files that get an error-level finding, and say whether each is a Kubernetes manifest.

golint-k8s judges manifests only: a file with no document that has both `apiVersion` and `kind`
(a Helm values file, a workflow, KEP metadata, a dashboard's JSON, Go test data) must never get an
error-level finding; when it does not parse it is skipped with a note instead. This runs
`golint-k8s lint . --format json` with default settings at the root of each directory given and
checks that promise with a test of its own, independent of the linter's:

- with PyYAML present, a file is a manifest when one of its documents (YAML or JSON) is a mapping
  with both `apiVersion` and `kind`, or is a `List`-like mapping whose `items` hold one;
- when PyYAML is absent or the file does not parse (a Go or Helm template, a broken manifest), a
  line-based check: some line starts with `apiVersion:` and some line starts with `kind:` (or,
  in JSON, the keys `"apiVersion"` and `"kind"` both appear as keys).

A finding whose file is a directory or no file at all (a Helm chart or kustomization the linter
rendered) counts as a manifest.
The inputs the linter lists as not linted (its `errors`) are printed too, for reading; they are
not findings and do not fail the check.

Exit status: 1 when a file that is not a manifest has an error-level finding, 2 when the linter
could not be run or its output not read, else 0.

Usage: scripts/nonmanifest-errors.py [--bin PATH] DIR [DIR ...]
"""

import argparse
import json
import os
import re
import subprocess
import sys

try:
    import yaml  # PyYAML, optional

    class _Loader(yaml.SafeLoader):
        """SafeLoader that also takes custom tags (CloudFormation's !Ref and the like)."""

    _Loader.add_multi_constructor("", lambda loader, suffix, node: None)
except ImportError:  # pragma: no cover - depends on the machine
    yaml = None

TOP_KEY = re.compile(r"^(apiVersion|kind)\s*:", re.MULTILINE)
JSON_KEY = re.compile(r'"(apiVersion|kind)"\s*:')


def _is_object(doc):
    if not isinstance(doc, dict):
        return False
    if "apiVersion" in doc and "kind" in doc:
        return True
    items = doc.get("items")
    return isinstance(items, list) and any(_is_object(i) for i in items)


def _line_check(text):
    """Why the text looks like a (broken or templated) manifest, or None."""
    if set(TOP_KEY.findall(text)) == {"apiVersion", "kind"}:
        return "top-level apiVersion: and kind: lines"
    if set(JSON_KEY.findall(text)) == {"apiVersion", "kind"}:
        return 'JSON keys "apiVersion" and "kind"'
    return None


def manifest_verdict(path):
    """(is_manifest, how) for a file or directory named by a finding."""
    if os.path.isdir(path):
        return True, "directory (rendered)"
    if not os.path.exists(path):
        return True, "no such file: a rendered input (`helm template`); counted as a manifest"
    try:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", errors="replace")
    except OSError as e:
        return True, f"unreadable ({e.strerror}); counted as a manifest"
    if yaml is not None:
        try:
            docs = list(yaml.load_all(text, Loader=_Loader))
        except Exception:  # noqa: BLE001 - any parse failure falls back to lines
            pass
        else:
            if any(_is_object(d) for d in docs):
                return True, "parses; a document has apiVersion and kind"
            return False, "parses; no document has apiVersion and kind"
    how = "does not parse; " if yaml is not None else ""
    why = _line_check(text)
    if why:
        return True, how + why
    return False, how + "no top-level apiVersion: and kind: lines"


def lint(binary, directory):
    proc = subprocess.run(
        [binary, "lint", ".", "--format", "json", "--no-color"],
        cwd=directory,
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        sys.stderr.write(
            f"{directory}: no JSON report (exit {proc.returncode}): {proc.stderr.strip()[:500]}\n"
        )
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default="golint-k8s", help="golint-k8s binary [golint-k8s]")
    ap.add_argument("dirs", nargs="+", metavar="DIR")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin) if os.sep in args.bin else args.bin
    if yaml is None:
        print("PyYAML not found: manifests are told by their top-level lines only")

    bad = False
    failed = False
    for directory in args.dirs:
        report = lint(binary, directory)
        if report is None:
            failed = True
            continue
        by_file = {}
        for f in report.get("findings", []):
            if f.get("severity") == "error":
                by_file.setdefault(f["file"], []).append(f)
        total = sum(len(v) for v in by_file.values())
        summary = report.get("summary", {})
        print(
            f"== {directory}: {summary.get('files', '?')} files, {total} error-level findings "
            f"in {len(by_file)} files, {len(report.get('errors', []))} inputs not linted"
        )
        for name in sorted(by_file):
            found = by_file[name]
            is_manifest, how = manifest_verdict(os.path.join(directory, name))
            codes = ",".join(sorted({f["code"] for f in found}))
            tag = "manifest" if is_manifest else "NOT A MANIFEST"
            print(f"  {tag:14} {name}: {len(found)} x {codes} ({how})")
            if not is_manifest:
                bad = True
                for f in found:
                    print(f"      {f['line']}:{f['column']} {f['code']} {f['message'][:160]}")
        for e in report.get("errors", []):
            print(f"  not linted     {e.get('path')}: {e.get('message', '')[:160]}")
    if failed:
        return 2
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
