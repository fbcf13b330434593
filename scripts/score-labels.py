#!/usr/bin/env python3
"""Score GK101 and GK201 against a labeled set of repositories (fixtures/realworld, fixtures/unseen).

Each directory of the set holds a repository's manifests and evidence files at their own paths and
a labels.tsv saying what every container with a limit really runs (see fixtures/README.md). The
score is taken two ways:

- in the tree: `golint-k8s lint` at the set's root, so the repositories' Dockerfiles, go.mod files,
  kustomizations and workflows are there to be read;
- manifests only: the labeled manifest files alone, copied to an empty directory.

Precision counts the findings that fail the default gate (severity error or warning); recall counts
findings of any severity, so a finding the tool reports below the gate still counts as found.
Containers labeled `unknown` (runtime or self-sizing) are left out.

Usage: scripts/score-labels.py [--bin PATH] SET_DIR [--config FILE]
"""

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

GATED = {"error", "warning"}


def read_labels(set_dir):
    labels = []
    for repo in sorted(os.listdir(set_dir)):
        path = os.path.join(set_dir, repo, "labels.tsv")
        if not os.path.isfile(path):
            continue
        with open(path, newline="") as f:
            for row in csv.DictReader(f, delimiter="\t"):
                labels.append({k: (v or "").strip() for k, v in row.items()})
    return labels


def expected(label, code):
    own, limit, sets = (
        ("gomemlimit_self", "memory_limit", "sets_gomemlimit")
        if code == "GK101"
        else ("gomaxprocs_self", "cpu_limit", "sets_gomaxprocs")
    )
    if label["runtime"] == "other":
        return False
    if label["runtime"] != "go":
        return None
    if label[own] == "yes":
        return False
    if label[own] == "no":
        return label[limit] == "yes" and label[sets] != "yes"
    return None


def key(label):
    return (label["file"], label["kind"], label["name"], label["container"])


def lint(binary, cwd, config):
    args = [binary, "lint", "--format", "json", "--select", "GK101,GK201", "."]
    if config:
        args[2:2] = ["--config", config]
    out = subprocess.run(args, cwd=cwd, capture_output=True, stdin=subprocess.DEVNULL)
    if out.returncode == 2:
        sys.exit(f"golint-k8s failed in {cwd}: {out.stderr.decode(errors='replace')}")
    found = {}
    for f in json.loads(out.stdout)["findings"]:
        k = (f["file"], f["object"]["kind"], f["object"]["name"] or "", f["container"] or "")
        found.setdefault(k, {})[f["code"]] = f["severity"]
    return found


def score(labels, found):
    lines = []
    for code in ("GK101", "GK201"):
        tp = fp = fn = gated_tp = 0
        wrong = []
        for label in labels:
            want = expected(label, code)
            severity = found.get(key(label), {}).get(code)
            if want is None:
                continue
            if want and severity:
                tp += 1
            if want and not severity:
                fn += 1
                wrong.append(f"    missed: {key(label)}")
            if severity in GATED:
                if want:
                    gated_tp += 1
                else:
                    fp += 1
                    wrong.append(f"    false, gated: {key(label)} ({label['runtime']}, {label['language']})")
        precision = gated_tp / max(gated_tp + fp, 1)
        recall = tp / max(tp + fn, 1)
        lines.append(
            f"  {code}: precision {precision:.2f} ({gated_tp} of {gated_tp + fp} gated findings), "
            f"recall {recall:.2f} ({tp} of {tp + fn})"
        )
        lines.extend(wrong)
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("set_dir")
    ap.add_argument("--bin", default="target/release/golint-k8s")
    ap.add_argument("--config")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)
    set_dir = os.path.abspath(args.set_dir)
    config = os.path.abspath(args.config) if args.config else None
    labels = read_labels(set_dir)
    repos = {label["file"].split("/")[0] for label in labels}
    print(f"{len(labels)} labeled containers from {len(repos)} repositories in {args.set_dir}")
    print("in the tree:")
    print(score(labels, lint(binary, set_dir, config)))
    with tempfile.TemporaryDirectory() as tmp:
        for f in {label["file"] for label in labels}:
            os.makedirs(os.path.dirname(os.path.join(tmp, f)), exist_ok=True)
            shutil.copyfile(os.path.join(set_dir, f), os.path.join(tmp, f))
        print("manifests only:")
        print(score(labels, lint(binary, tmp, config)))


if __name__ == "__main__":
    main()
