#!/usr/bin/env python3
"""golint-k8s against its peers, on the same files, in one run (Python 3 standard library only).

    python3 bench/run.py               # install peers, build, generate, time, print the table
    python3 bench/run.py --quick       # 3 runs each, no Checkov, no 100,000-document corpus
    python3 bench/run.py --baseline B  # also time the golint-k8s binary B (say, the last release's),
                                       # its runs taken in turn with golint-k8s lint's

Steps: bench/install-peers.sh installs the pinned peers into target/bench-tools/; `cargo build
--release` builds golint-k8s; bench/gen.py writes the deterministic corpus into target/bench-corpus/
(10,000 documents in about 2,000 files, the same count in one helm-template-like file, and 100,000
documents for the scale target); ../shared/corpus is used when it is beside the checkout.

Every command runs once to warm up and then several times (three times as many when it takes under
half a second; Checkov once: it takes minutes); the table shows the median wall
time, the peak RSS of the slowest-memory run (from wait4), and the ratio to `golint-k8s lint` on the
same input. golint-k8s's own rows whose note says so have their ratio to the lint timed in turn
with it (ABBA), so that the machine's drift between two stretches of the run does not land in the
ratio; the peers are timed on their own. Exit codes are not judged: linters exit non-zero when
they find something.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOLS = os.path.join(ROOT, "target", "bench-tools")
CORPUS = os.path.join(ROOT, "target", "bench-corpus")
SHARED = os.path.normpath(os.path.join(ROOT, "..", "shared", "corpus"))
GOLINT = os.path.join(ROOT, "target", "release", "golint-k8s")
K8S = "1.36.3"
# The note of a row whose ratio is to the lint timed in turn with it (see `against`).
IN_TURN = "ratio to the lint sampled in turn"


def say(msg):
    print("bench: " + msg, file=sys.stderr, flush=True)


def measure(argv, cwd=ROOT):
    """Run argv once with output discarded; return (seconds, peak RSS in MB, exit code)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    took = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    return took, usage.ru_maxrss / 1024.0, code


def linted_nothing(name, argv):
    """A note when a peer's run read no objects: its time is then no comparison. (kube-linter drops
    a file whose documents it cannot all decode, and says so.)"""
    if name != "kube-linter":
        return ""
    out = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, errors="replace")
    if "no valid objects found" in out.stdout + out.stderr:
        return "; read no objects (\"no valid objects found\"): not comparable"
    return ""


def timed(argv, runs):
    # One discarded warm-up run, as hyperfine's --warmup: the first run after the corpus is written
    # pays for the page cache and the disk flush, which no later run sees.
    if runs > 1:
        warm = measure(argv)[0]
        # A command that takes well under a second is sampled three times as often: on a shared
        # 2-core machine one slow sample in five moves the median of a 60 ms run by 10%.
        if warm < 0.5:
            runs *= 3
    samples = [measure(argv) for _ in range(runs)]
    return statistics.median(s[0] for s in samples), max(s[1] for s in samples), samples[-1][2]


def timed_pair(first, second, runs):
    """Two commands sampled in turn (ABBA order, so neither always runs after the other), for a
    before/after comparison: on a shared machine, timing one command's runs and then the other's
    lets a slow minute land on one side only."""
    warm = [measure(first)[0], measure(second)[0]]
    if max(warm) < 0.5:
        runs *= 3
    samples = ([], [])
    for i in range(runs):
        order = (0, 1) if i % 2 == 0 else (1, 0)
        for k in order:
            samples[k].append(measure((first, second)[k]))
    return [(statistics.median(s[0] for s in ss), max(s[1] for s in ss), ss[-1][2]) for ss in samples]


def against(lint, argv, runs):
    """argv timed in turn with the lint its ratio is to: (its median, its peak RSS, its exit code,
    its median over the lint's median of the same stretch). Timing the lint once for every row
    let the machine's drift between that stretch and a row's own land in the ratio: the same
    build's warm image cache read 1.14x in one run and 1.22x in the next."""
    (t_lint, _, _), (t, rss, code) = timed_pair(lint, argv, runs)
    return t, rss, code, t / t_lint


def timed_fix_fresh(path, lint, runs):
    """`golint-k8s fix` on a fresh copy of the directory `path` for every run, one warm-up first: a
    run on a copy already fixed writes nothing. The copies are all made and flushed to disk
    untimed, before the first run, and removed after the last: a copy removed right before a timed
    run would time the file system instead (ext4 without a journal skips over the inodes deleted
    in the last seconds when it allocates one, so every temporary file `fix` creates would pay for
    the removed copy). The lint runs in turn with the fixes, for the ratio (as `against`)."""
    base = os.path.join(ROOT, "target", "bench-fix-fresh")
    shutil.rmtree(base, ignore_errors=True)
    copies = [os.path.join(base, str(i)) for i in range(runs + 1)]
    for copy in copies:
        shutil.copytree(path, copy)
    os.sync()
    samples, lints = [], []
    for i, copy in enumerate(copies):
        # In turn, ABBA, as `timed_pair`.
        fix = [GOLINT, "fix", "--format", "json", copy]
        if i % 2 == 0:
            lints.append(measure(lint)[0])
            samples.append(measure(fix))
        else:
            samples.append(measure(fix))
            lints.append(measure(lint)[0])
    shutil.rmtree(base, ignore_errors=True)
    samples, lints = samples[1:], lints[1:]
    t = statistics.median(s[0] for s in samples)
    return t, max(s[1] for s in samples), samples[-1][2], t / statistics.median(lints)


def count_docs(path):
    """Documents as golint-k8s counts them (its parse-only pass), in a path, or in what a list of
    arguments (files, options) names."""
    args = path if isinstance(path, list) else [path]
    out = subprocess.run([GOLINT, "lint", "--parse-only"] + args, capture_output=True, text=True)
    words = out.stdout.split()
    return int(words[3]) if len(words) > 3 else 0


def yaml_files(path):
    if os.path.isfile(path):
        return [path]
    found = []
    for d, _, names in os.walk(path):
        found += [os.path.join(d, n) for n in names if n.endswith((".yaml", ".yml"))]
    return sorted(found)


def tool(name):
    p = os.path.join(TOOLS, "bin", name)
    if os.path.exists(p):
        return p
    return shutil.which(name)


def status(name):
    try:
        with open(os.path.join(TOOLS, "status", name)) as f:
            return f.read().strip()
    except OSError:
        return "not installed (bench/install-peers.sh)"


def refused_by_kube_score(ks, files):
    """The files kube-score will not parse. It reads every file before it scores one, and stops at
    the first it cannot parse ("Failed to score files"), having scored nothing: a duplicate key, a
    merge key, a document without a kind (9 of the shared corpus's files). Timed on all of them it
    would be timed failing; it is timed on the files it reads instead. Each file is tried on its
    own only when the whole set fails."""
    def fails(args):
        out = subprocess.run([ks, "score", "--output-format", "ci"] + args, cwd=ROOT,
                             capture_output=True, text=True, errors="replace")
        return "Failed to score files" in out.stderr
    if not fails(files):
        return []
    return [f for f in files if fails([f])]


def peers(path, with_checkov):
    """(name, argv or None, note, files) for each peer on `path` (a file or a directory); `files`
    is None when the peer reads all of `path`, else the files it was given (those it accepts)."""
    files = yaml_files(path)
    out = []
    ks = tool("kube-score")
    if ks:
        refused = set(refused_by_kube_score(ks, files))
        accepted = [f for f in files if f not in refused]
        note = ""
        if refused:
            note = ("stops at any of %d of the %d files, scoring nothing: given the other %d"
                    % (len(refused), len(files), len(accepted)))
        out.append(("kube-score", [ks, "score", "--output-format", "ci"] + accepted, note,
                    accepted if refused else None))
    else:
        out.append(("kube-score", None, status("kube-score"), None))
    kc = tool("kubeconform")
    schemas = os.path.join(TOOLS, "kubeconform-schemas")
    if kc and status("kubeconform-schemas").startswith("ok"):
        template = os.path.join(schemas, "v%s-standalone-strict" % K8S,
                                "{{ .ResourceKind }}{{ .KindSuffix }}.json")
        out.append(("kubeconform", [kc, "-strict", "-summary", "-ignore-missing-schemas",
                                    "-schema-location", template, path], "", None))
    else:
        out.append(("kubeconform", None,
                    "needs kubeconform and its offline schemas: " + status("kubeconform-schemas"), None))
    kl = tool("kube-linter")
    out.append(("kube-linter", kl and [kl, "lint", path],
                "" if kl else "not built from ../shared/peers, and not on PATH: " + status("kube-linter"),
                None))
    po = shutil.which("polaris")
    out.append(("polaris", po and [po, "audit", "--audit-path", path, "--format", "score"],
                "" if po else "not on PATH, and its module path is refused by the Go module proxy here",
                None))
    ck = os.path.join(TOOLS, "checkov-venv", "bin", "checkov")
    if with_checkov and os.path.exists(ck):
        arg = ["-f", path] if os.path.isfile(path) else ["-d", path]
        out.append(("checkov (1 run)", [ck, "--framework", "kubernetes", "--quiet", "--compact",
                                        "--skip-download"] + arg, "", None))
    else:
        out.append(("checkov", None, "not requested" if not with_checkov else status("checkov"), None))
    return out


def stream_rows(corpus, label, runs):
    """One stream of all documents beside the same documents as separate files (issue 44: a
    stream is linted a group of documents at a time, its peak RSS bounded by the group, and within
    1.3x the time of the separate files). Ratios here are to the separate files."""
    rows = []
    many = [GOLINT, "lint", "--format", "json", os.path.join(corpus, "many")]
    one = [GOLINT, "lint", "--format", "json", os.path.join(corpus, "big.yaml")]
    (t_many, rss_many, _), (t_one, rss_one, _) = timed_pair(many, one, runs)
    docs = count_docs(os.path.join(corpus, "many"))  # the same documents, without parsing one tree
    rows.append(("%s docs, separate files" % label, "golint-k8s lint", docs, t_many, rss_many, 1.0,
                 "sampled in turn with the row below"))
    rows.append(("%s docs, 1 file (stream)" % label, "golint-k8s lint", docs, t_one, rss_one,
                 t_one / t_many, "ratio to the same documents as separate files"))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="3 runs, no Checkov, no 100,000-document corpus")
    ap.add_argument("--no-install", action="store_true", help="use the peers already in target/bench-tools")
    ap.add_argument("--baseline", metavar="BIN",
                    help="another golint-k8s binary (an earlier commit's) timed beside this one")
    a = ap.parse_args()
    runs = 3 if a.quick else a.runs

    if not a.no_install:
        say("installing peers (bench/install-peers.sh)")
        subprocess.run(["bash", os.path.join(ROOT, "bench", "install-peers.sh")]
                       + (["--no-checkov"] if a.quick else []), cwd=ROOT, stdout=sys.stderr)
    say("building golint-k8s (cargo build --release)")
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet"], cwd=ROOT, check=True)

    say("generating the corpus (bench/gen.py)")
    # --typed quotes every env value: kube-score stops at the first file whose env value is a YAML
    # number, so every tool gets the quoted corpus (its Go settings are still wrong as strings).
    subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen.py"), "--out", CORPUS, "--typed"],
                   cwd=ROOT, check=True, stdout=sys.stderr)
    big100k = os.path.join(ROOT, "target", "bench-corpus-100k")
    if not a.quick:
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen.py"), "--out", big100k,
                        "--docs", "100000", "--typed"], cwd=ROOT, check=True, stdout=sys.stderr)

    os.sync()  # the freshly written corpus is flushed before anything is timed
    inputs = [("10k docs, ~2k files", os.path.join(CORPUS, "many")),
              ("10k docs, 1 file", os.path.join(CORPUS, "big.yaml"))]
    if os.path.isdir(SHARED):
        inputs.append(("shared corpus", SHARED))
    else:
        say("../shared/corpus is not beside this checkout: that input was not run")

    rows = []
    for label, path in inputs:
        docs = count_docs(path)
        lint = [GOLINT, "lint", "--format", "json", path]
        if a.baseline:
            (base, base_rss, _), (t, rss, _) = timed_pair(
                lint, [a.baseline, "lint", "--format", "json", path], runs)
            rows.append((label, "golint-k8s lint", docs, base, base_rss, 1.0, ""))
            rows.append((label, "golint-k8s lint (baseline)", docs, t, rss, t / base,
                         a.baseline + "; sampled in turn with the row above"))
        else:
            base, base_rss, _ = timed(lint, runs)
            rows.append((label, "golint-k8s lint", docs, base, base_rss, 1.0, ""))
        # The peers read the files as they are; golint-k8s also builds each Kustomize root it
        # meets (a process per root), and its walk passes over `testdata` and `vendor`
        # directories. `--exclude` in place of the config's (there is none) enters those, and
        # excluding the kustomization files lints the same objects the peers do, the ratio the
        # peers are held to.
        as_files = None
        if any(f.endswith(("/kustomization.yaml", "/kustomization.yml")) for f in yaml_files(path)):
            peers_read = ["--exclude", "**/kustomization.y*ml", path]
            as_files, rss, _ = timed(lint[:-1] + peers_read, runs)
            rows.append((label, "golint-k8s lint, Kustomize roots not built", count_docs(peers_read),
                         as_files, rss, as_files / base,
                         "the same files as the peers read (test data entered)"))
        t, rss, _ = timed([GOLINT, "lint", "--parse-only", path], runs)
        rows.append((label, "golint-k8s --parse-only", docs, t, rss, t / base, ""))
        # The first pass of every lint (LimitRanges and VPAs for the other files), on its own:
        # the walk and the reads, a substring search per file, a parse of the files that match.
        t, rss, _ = timed([GOLINT, "lint", "--index-only", path], runs)
        rows.append((label, "golint-k8s --index-only", docs, t, rss, t / base,
                     "the cross-file pass alone; lint includes it"))
        # The other two output formats users run: SARIF for code scanning, human by default.
        for fmt in ("sarif", "human"):
            t, rss, _, ratio = against(lint, [GOLINT, "lint", "--format", fmt, path], runs)
            rows.append((label, "golint-k8s lint --format " + fmt, docs, t, rss, ratio, IN_TURN))
        # --inspect-images with a warm cache: the hidden --warm-image-cache first writes made-up
        # facts for every image through the cache's own writer (no registry needed), then the
        # cache alone answers.
        cache = os.path.join(ROOT, "target", "bench-image-cache")
        shutil.rmtree(cache, ignore_errors=True)
        with_cache = ["env", "GOLINT_K8S_CACHE=" + cache, GOLINT, "lint", "--inspect-images", "--offline"]
        subprocess.run(with_cache + ["--warm-image-cache", "--format", "json", path],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # An offline run keeps a snapshot of the entries, but not of a cache written in the last
        # 2 s (a writer may still be at work): one run after that, as a user's next run would be.
        time.sleep(2.5)
        subprocess.run(with_cache + ["--format", "json", path],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t, rss, _, ratio = against(lint, with_cache + ["--format", "json", path], runs)
        rows.append((label, "golint-k8s lint --inspect-images --offline", docs, t, rss, ratio,
                     "warm cache; " + IN_TURN))
        shutil.rmtree(cache, ignore_errors=True)
        t, rss, _ = timed([GOLINT, "fix", "--diff", "--unsafe-fixes", path], runs)
        rows.append((label, "golint-k8s fix --diff", docs, t, rss, t / base, ""))
        if os.path.isdir(path):
            fixed = os.path.join(ROOT, "target", "bench-fixed")
            shutil.rmtree(fixed, ignore_errors=True)
            shutil.copytree(path, fixed)
            subprocess.run([GOLINT, "fix", "--unsafe-fixes", "--quiet", fixed],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            t, rss, _ = timed([GOLINT, "fix", "--unsafe-fixes", fixed], runs)
            rows.append((label, "golint-k8s fix (nothing to fix)", docs, t, rss, t / base, ""))
            t, rss, _, ratio = timed_fix_fresh(path, lint, runs)
            rows.append((label, "golint-k8s fix (fresh copy, writes)", docs, t, rss, ratio,
                         "JSON output as the lint row; each run on a new copy; target within 3× of "
                         "the lint; " + IN_TURN))
        for name, argv, note, given in peers(path, with_checkov=not a.quick and label.startswith("10k docs, ~2k")):
            if argv is None:
                rows.append((label, name, docs, None, None, None, "skipped: " + note))
                continue
            if given is not None:
                # A peer given only some of the files is held to golint-k8s on those same files
                # (Kustomize roots not built, as the row above), timed just before it.
                same = [f for f in given if not f.endswith(("/kustomization.yaml", "/kustomization.yml"))]
                as_files, rss, _ = timed([GOLINT, "lint", "--format", "json"] + same, runs)
                given_docs = count_docs(same)
                rows.append((label, "golint-k8s lint, the files %s reads" % name, given_docs,
                             as_files, rss, as_files / base, "%d files" % len(same)))
            # A peer is timed on its own, as before. Timed in turn with the lint, one run had the
            # peers' ratios a third lower than the runs before (kubeconform 13.4x against 19.9x);
            # what a peer's run of hundreds of megabytes does to the lint run after it is not yet
            # told apart from the machine's drift.
            n = 1 if name.startswith("checkov") else runs
            t, rss, code = timed(argv, n)
            note = "; ".join(x for x in ("exit %d" % code + linted_nothing(name, argv), note) if x)
            if given is not None:
                note += "; %.1f× golint-k8s on the same files" % (t / as_files)
            elif as_files:
                note += "; %.1f× the row with Kustomize roots not built" % (t / as_files)
            rows.append((label, name, docs if given is None else given_docs, t, rss, t / base, note))
    if not a.quick:
        big60k = os.path.join(ROOT, "target", "bench-corpus-60k")
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen.py"), "--out", big60k,
                        "--docs", "60000", "--typed"], cwd=ROOT, check=True, stdout=sys.stderr)
        rows.extend(stream_rows(big60k, "60k", runs))
        path = os.path.join(big100k, "many")
        docs = count_docs(path)
        t, rss, _ = timed([GOLINT, "lint", "--format", "json", path], runs)
        rows.append(("100k docs, ~20k files", "golint-k8s lint", docs, t, rss, 1.0, ""))
        t2, rss2, _ = timed([GOLINT, "lint", "--parse-only", path], runs)
        rows.append(("100k docs, ~20k files", "golint-k8s --parse-only", docs, t2, rss2, t2 / t, ""))
        rows.extend(stream_rows(big100k, "100k", runs))

    print("| input | tool | documents | median wall | peak RSS | ratio to golint-k8s lint | note |")
    print("|---|---|---:|---:|---:|---:|---|")
    for label, name, docs, t, rss, ratio, note in rows:
        if t is None:
            print("| %s | %s | %d | – | – | – | %s |" % (label, name, docs, note))
        else:
            print("| %s | %s | %d | %.3f s | %.0f MB | %.2f× | %s |" % (label, name, docs, t, rss, ratio, note))
    print("\n%d runs per command (%d under half a second, Checkov 1); %s; %d CPUs."
          % (runs, 3 * runs, time.strftime("%Y-%m-%d"), os.cpu_count()))


if __name__ == "__main__":
    main()
