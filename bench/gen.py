#!/usr/bin/env python3
"""Deterministic benchmark corpus for golint-k8s (Python 3 standard library only).

Writes:
  <out>/many/    about DOCS/5 files holding DOCS documents in total (1-10 documents per file)
  <out>/big.yaml DOCS documents in one file, with `# Source:` comments like `helm template` output
  <out>/MANIFEST.txt  seed, document and file counts (read by bench/run.sh)

The mix: Deployments, StatefulSets, DaemonSets, CronJobs, Jobs, Services, ConfigMaps; 1-3 containers;
env lists in block style and sometimes flow style; resources with and without limits; GOMAXPROCS and
GOMEMLIMIT sometimes set, sometimes wrong (quantities like 512Mi, unquoted numbers); comments; files
indented with 2 or 4 spaces. Same seed and --docs give byte-identical output.

With --typed every env value is written as a quoted string (the Go settings can still be wrong, as
strings): kube-score stops at the first document whose env value is a YAML number or boolean, so the
benchmark compares the peers on a --typed corpus too.

Usage: python3 bench/gen.py [--out DIR] [--docs N] [--seed S] [--typed]
"""

import argparse
import os
import random
import shutil
import sys

WORKLOAD_KINDS = [
    # (kind, apiVersion, weight)
    ("Deployment", "apps/v1", 40),
    ("StatefulSet", "apps/v1", 8),
    ("DaemonSet", "apps/v1", 5),
    ("CronJob", "batch/v1", 6),
    ("Job", "batch/v1", 4),
    ("Service", "v1", 25),
    ("ConfigMap", "v1", 12),
]

TEAMS = ["payments", "search", "checkout", "identity", "billing", "catalog", "ledger", "edge", "ml", "infra"]
WORDS = ["api", "worker", "gateway", "indexer", "sync", "cache", "router", "scheduler", "exporter", "proxy",
         "ingest", "notifier", "auth", "store", "batch", "query", "feed", "render", "audit", "relay"]
IMAGES_GO = ["ghcr.io/acme/{n}:{v}", "registry.example.com/{t}/{n}:{v}", "docker.io/acme/{n}:v{v}"]
IMAGES_OTHER = ["nginx:1.27.2", "envoyproxy/envoy:v1.31.0", "redis:7.4", "python:3.12-slim",
                "node:22-alpine", "eclipse-temurin:21-jre", "busybox:1.36"]
CPU = ["100m", "250m", "500m", "750m", "1", "1500m", "2", "4", "0.5"]
MEM = ["64Mi", "128Mi", "256Mi", "512Mi", "768Mi", "1Gi", "2Gi", "1536Mi", "4Gi", "3G"]
COMMENTS = [
    "# TODO: tune after the load test",
    "# owned by the platform team",
    "# do not edit: generated from the service catalog",
    "# see the runbook before changing limits",
    "# bumped after the incident review",
]


class Writer:
    """Builds YAML text with a per-file indent unit and sequence style."""

    def __init__(self, unit, flush_seq):
        self.unit = unit          # 2 or 4 spaces
        self.flush_seq = flush_seq  # "key:\n- item" (flush) instead of "key:\n  - item"
        self.lines = []

    def line(self, col, text):
        """A line indented by `col` spaces."""
        self.lines.append(" " * col + text if text else "")

    def seq_col(self, col):
        """Column of the '- ' items of a sequence whose key is at column `col`."""
        return col if self.flush_seq else col + self.unit

    def text(self):
        return "\n".join(self.lines) + "\n"


def q(rng, s):
    """Quote a string scalar in one of the styles seen in the wild."""
    r = rng.random()
    if r < 0.55:
        return '"%s"' % s
    if r < 0.7:
        return "'%s'" % s
    return s


def go_env(rng, cpu_limit, mem_limit):
    """Go runtime env entries: sometimes right, sometimes missing, sometimes wrong."""
    env = []
    r = rng.random()
    if r < 0.3:
        env.append(("GOMAXPROCS", {"resourceFieldRef": "limits.cpu"}))
    elif r < 0.45:
        env.append(("GOMAXPROCS", rng.choice(['"2"', "2", '"4"', '"1"', "8", '"0"', '"auto"'])))
    r = rng.random()
    if r < 0.25 and mem_limit:
        env.append(("GOMEMLIMIT", {"resourceFieldRef": "limits.memory"}))
    elif r < 0.45:
        env.append(("GOMEMLIMIT", rng.choice(['"900MiB"', '"512Mi"', '"1GiB"', "1073741824", '"2G"',
                                              '"450MiB"', "off", '"3500MiB"'])))
    r = rng.random()
    if r < 0.2:
        env.append(("GOGC", rng.choice(['"100"', "200", '"off"', "off", '"50"'])))
    if rng.random() < 0.08:
        env.append(("GODEBUG", q(rng, rng.choice(["madvdontneed=1", "gctrace=1", "asyncpreemptoff=1"]))))
    return env


def plain_env(rng, app):
    env = [("LOG_LEVEL", q(rng, rng.choice(["info", "debug", "warn"]))),
           ("SERVICE_NAME", q(rng, app))]
    if rng.random() < 0.5:
        env.append(("PORT", rng.choice(['"8080"', "8080", '"9090"'])))
    if rng.random() < 0.3:
        env.append(("POD_NAME", {"fieldRef": "metadata.name"}))
    if rng.random() < 0.2:
        env.append(("DB_PASSWORD", {"secretKeyRef": ("db-credentials", "password")}))
    rng.shuffle(env)
    return env


TYPED = False  # --typed: every env value a quoted string (peers such as kube-score reject others)


def typed(v):
    if TYPED and not v.startswith(('"', "'")):
        return '"%s"' % v
    return v


def write_env(w, rng, depth, env):
    """`env:` at depth; block style mostly, flow style sometimes."""
    env = [(n, v if isinstance(v, dict) else typed(v)) for n, v in env]
    simple = all(not isinstance(v, dict) for _, v in env)
    if simple and rng.random() < 0.15:
        items = ", ".join("{name: %s, value: %s}" % (n, v) for n, v in env)
        w.line(depth, "env: [%s]" % items)
        return
    w.line(depth, "env:")
    d = w.seq_col(depth)
    U = w.unit
    for name, val in env:
        if not isinstance(val, dict):
            if rng.random() < 0.1:
                w.line(d, "- {name: %s, value: %s}" % (name, val))
            else:
                w.line(d, "- name: %s" % name)
                w.line(d + 2, "value: %s" % val)
            continue
        w.line(d, "- name: %s" % name)
        w.line(d + 2, "valueFrom:")
        if "resourceFieldRef" in val:
            w.line(d + 2 + U, "resourceFieldRef:")
            w.line(d + 2 + 2 * U, "resource: %s" % val["resourceFieldRef"])
            if rng.random() < 0.3:
                w.line(d + 2 + 2 * U, "divisor: %s" % ("1" if "cpu" in val["resourceFieldRef"] else "1Mi"))
        elif "fieldRef" in val:
            w.line(d + 2 + U, "fieldRef:")
            w.line(d + 2 + 2 * U, "fieldPath: %s" % val["fieldRef"])
        else:
            sec, key = val["secretKeyRef"]
            w.line(d + 2 + U, "secretKeyRef:")
            w.line(d + 2 + 2 * U, "name: %s" % sec)
            w.line(d + 2 + 2 * U, "key: %s" % key)


def write_container(w, rng, depth, app, idx, is_go):
    """One container as a sequence item whose '- ' is at `depth`."""
    name = app if idx == 0 else rng.choice(["sidecar", "proxy", "metrics", "log-shipper"]) + str(idx)
    if is_go:
        img = rng.choice(IMAGES_GO).format(n=app, t=rng.choice(TEAMS),
                                           v="%d.%d.%d" % (rng.randint(0, 4), rng.randint(0, 30), rng.randint(0, 9)))
    else:
        img = rng.choice(IMAGES_OTHER)
    w.line(depth, "- name: %s" % name)
    d = depth + 2
    U = w.unit
    w.line(d, "image: %s" % img)
    if rng.random() < 0.5:
        w.line(d, "imagePullPolicy: IfNotPresent")
    if rng.random() < 0.4:
        w.line(d, "args: [%s]" % ", ".join('"--%s"' % a for a in rng.sample(
            ["v=2", "port=8080", "metrics", "config=/etc/app/config.yaml", "tls"], rng.randint(1, 3))))
    w.line(d, "ports:")
    pd = w.seq_col(d)
    w.line(pd, "- containerPort: %d" % rng.choice([8080, 8443, 9090, 3000, 50051]))
    if rng.random() < 0.5:
        w.line(pd + 2, "name: %s" % rng.choice(["http", "grpc", "metrics"]))
    # resources: none, requests only, limits only, both
    r = rng.random()
    cpu_req, cpu_lim = rng.choice(CPU), None
    mem_req, mem_lim = rng.choice(MEM), None
    has_req = r < 0.85
    if r < 0.15:
        pass
    elif r < 0.3:
        cpu_lim = None
    else:
        cpu_lim = rng.choice(CPU) if rng.random() < 0.8 else None
        mem_lim = rng.choice(MEM) if rng.random() < 0.9 else None
    env = plain_env(rng, app)
    if is_go:
        env += go_env(rng, cpu_lim, mem_lim)
    if env and rng.random() < 0.93:
        if rng.random() < 0.2:
            w.line(d, rng.choice(COMMENTS))
        write_env(w, rng, d, env)
    if r >= 0.15 and (has_req or cpu_lim or mem_lim):
        w.line(d, "resources:")
        if has_req:
            if rng.random() < 0.2:
                w.line(d + U, "requests: {cpu: %s, memory: %s}" % (cpu_req, mem_req))
            else:
                w.line(d + U, "requests:")
                w.line(d + 2 * U, "cpu: %s" % (q(rng, cpu_req) if rng.random() < 0.2 else cpu_req))
                w.line(d + 2 * U, "memory: %s" % mem_req)
        if cpu_lim or mem_lim:
            w.line(d + U, "limits:" + ("  # keep in sync with GOMEMLIMIT" if rng.random() < 0.1 else ""))
            if cpu_lim:
                w.line(d + 2 * U, "cpu: %s" % cpu_lim)
            if mem_lim:
                w.line(d + 2 * U, "memory: %s" % mem_lim)
    if rng.random() < 0.5:
        w.line(d, "readinessProbe:")
        w.line(d + U, "httpGet: {path: /healthz, port: 8080}")
        w.line(d + U, "periodSeconds: %d" % rng.choice([5, 10, 15]))
    if rng.random() < 0.3:
        w.line(d, "securityContext:")
        w.line(d + U, "runAsNonRoot: true")
        w.line(d + U, "readOnlyRootFilesystem: %s" % rng.choice(["true", "false"]))


def write_metadata(w, rng, depth, name, ns, team, go_version):
    w.line(w.unit * depth, "metadata:")
    w.line(w.unit * (depth + 1), "name: %s" % name)
    w.line(w.unit * (depth + 1), "namespace: %s" % ns)
    w.line(w.unit * (depth + 1), "labels:")
    w.line(w.unit * (depth + 2), "app.kubernetes.io/name: %s" % name)
    w.line(w.unit * (depth + 2), "team: %s" % team)
    if go_version:
        w.line(w.unit * (depth + 1), "annotations:")
        w.line(w.unit * (depth + 2), 'golint-k8s.io/go-version: "%s"' % go_version)


def write_pod_spec(w, rng, depth, app):
    """`spec:` of a pod template at depth (the key itself is written by the caller)."""
    is_go = rng.random() < 0.75
    if rng.random() < 0.2:
        w.line(depth, "serviceAccountName: %s" % app)
    if rng.random() < 0.15:
        w.line(depth, "nodeSelector: {kubernetes.io/os: linux}")
    n = rng.choices([1, 2, 3], weights=[70, 22, 8])[0]
    if rng.random() < 0.1:
        w.line(depth, "initContainers:")
        d = w.seq_col(depth)
        w.line(d, "- name: migrate")
        w.line(d + 2, "image: ghcr.io/acme/%s-migrate:1.0.0" % app)
        w.line(d + 2, "command: [\"/migrate\", \"up\"]")
    w.line(depth, "containers:")
    d = w.seq_col(depth)
    for i in range(n):
        write_container(w, rng, d, app, i, is_go if i == 0 else rng.random() < 0.3)


def write_doc(w, rng, kind, api, name, ns, team):
    if rng.random() < 0.25:
        w.line(0, rng.choice(COMMENTS))
    w.line(0, "apiVersion: %s" % api)
    w.line(0, "kind: %s" % kind)
    gov = rng.choice([None, None, None, "1.22", "1.24", "1.25", "1.26"]) if kind not in ("Service", "ConfigMap") else None
    write_metadata(w, rng, 0, name, ns, team, gov)
    if kind == "Service":
        w.line(0, "spec:")
        w.line(w.unit * 1, "type: %s" % rng.choice(["ClusterIP", "ClusterIP", "NodePort"]))
        w.line(w.unit * 1, "selector:")
        w.line(w.unit * 2, "app.kubernetes.io/name: %s" % name)
        w.line(w.unit * 1, "ports:")
        d = w.seq_col(w.unit)
        w.line(d, "- name: http")
        w.line(d + 2, "port: 80")
        w.line(d + 2, "targetPort: %d" % rng.choice([8080, 9090, 3000]))
        return
    if kind == "ConfigMap":
        w.line(0, "data:")
        w.line(w.unit * 1, "LOG_LEVEL: %s" % q(rng, rng.choice(["info", "debug"])))
        if rng.random() < 0.3:
            w.line(w.unit * 1, 'GOMEMLIMIT: "%s"' % rng.choice(["512MiB", "1Gi", "900MiB"]))
        w.line(w.unit * 1, "config.yaml: |")
        w.line(w.unit * 2, "server:")
        w.line(w.unit * 3, "port: 8080")
        w.line(w.unit * 3, "timeout: %ds" % rng.choice([5, 10, 30]))
        w.line(w.unit * 2, "feature_flags: [%s]" % ", ".join(rng.sample(WORDS, 3)))
        return
    w.line(0, "spec:")
    if kind == "CronJob":
        w.line(w.unit * 1, 'schedule: "%d */%d * * *"' % (rng.randint(0, 59), rng.choice([1, 2, 6, 12])))
        w.line(w.unit * 1, "concurrencyPolicy: Forbid")
        w.line(w.unit * 1, "jobTemplate:")
        w.line(w.unit * 2, "spec:")
        w.line(w.unit * 3, "backoffLimit: %d" % rng.randint(0, 6))
        w.line(w.unit * 3, "template:")
        w.line(w.unit * 4, "spec:")
        w.line(w.unit * 5, "restartPolicy: OnFailure")
        write_pod_spec(w, rng, w.unit * 5, name)
        return
    if kind == "Job":
        w.line(w.unit * 1, "backoffLimit: %d" % rng.randint(0, 6))
        w.line(w.unit * 1, "template:")
        w.line(w.unit * 2, "spec:")
        w.line(w.unit * 3, "restartPolicy: Never")
        write_pod_spec(w, rng, w.unit * 3, name)
        return
    if kind in ("Deployment", "StatefulSet"):
        w.line(w.unit * 1, "replicas: %d" % rng.choice([1, 2, 3, 3, 5, 10]))
    if kind == "StatefulSet":
        w.line(w.unit * 1, "serviceName: %s" % name)
    w.line(w.unit * 1, "selector:")
    w.line(w.unit * 2, "matchLabels:")
    w.line(w.unit * 3, "app.kubernetes.io/name: %s" % name)
    w.line(w.unit * 1, "template:")
    w.line(w.unit * 2, "metadata:")
    w.line(w.unit * 3, "labels:")
    w.line(w.unit * 4, "app.kubernetes.io/name: %s" % name)
    w.line(w.unit * 2, "spec:")
    write_pod_spec(w, rng, w.unit * 3, name)


def pick_kind(rng):
    kinds = [k for k in WORKLOAD_KINDS]
    k = rng.choices(kinds, weights=[x[2] for x in kinds])[0]
    return k[0], k[1]


def gen_docs(rng, count, unit, flush_seq, name_prefix):
    """Yield (kind, name, text) for `count` documents written with one style."""
    for i in range(count):
        kind, api = pick_kind(rng)
        team = rng.choice(TEAMS)
        name = "%s-%s-%s" % (team, rng.choice(WORDS), name_prefix + str(i))
        w = Writer(unit, flush_seq)
        write_doc(w, rng, kind, api, name, team, team)
        yield kind, name, w.text()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="target/bench-corpus")
    ap.add_argument("--docs", type=int, default=10000, help="documents in many/ and in big.yaml (default 10000)")
    ap.add_argument("--seed", type=int, default=20261122)
    ap.add_argument("--typed", action="store_true",
                    help="quote every env value (same corpus otherwise): for peers that stop at a non-string env value")
    a = ap.parse_args()
    global TYPED
    TYPED = a.typed
    if a.docs < 1:
        sys.exit("--docs must be positive")

    out = a.out
    many = os.path.join(out, "many")
    if os.path.isdir(many):
        shutil.rmtree(many)
    os.makedirs(many)

    # many/: files of 1-10 documents (mean ~5 => ~docs/5 files), grouped in team folders.
    rng = random.Random(a.seed)
    left, nfiles, fileno = a.docs, 0, 0
    while left > 0:
        n = min(left, rng.choices(range(1, 11), weights=[14, 10, 10, 10, 12, 10, 10, 8, 8, 8])[0])
        unit = 4 if rng.random() < 0.3 else 2
        flush = rng.random() < 0.4
        team = rng.choice(TEAMS)
        d = os.path.join(many, team)
        os.makedirs(d, exist_ok=True)
        parts = []
        if rng.random() < 0.3:
            parts.append("# %s manifests, %d-space indent\n" % (team, unit))
        docs = [t for _, _, t in gen_docs(rng, n, unit, flush, "f%d-" % fileno)]
        body = "---\n".join(docs)
        if rng.random() < 0.2:
            body = "---\n" + body
        parts.append(body)
        ext = ".yml" if rng.random() < 0.1 else ".yaml"
        with open(os.path.join(d, "svc-%05d%s" % (fileno, ext)), "w", newline="\n") as f:
            f.write("".join(parts))
        left -= n
        nfiles += 1
        fileno += 1

    # big.yaml: one helm-template-like stream with `# Source:` comments.
    rng = random.Random(a.seed + 1)
    with open(os.path.join(out, "big.yaml"), "w", newline="\n") as f:
        for i, (kind, name, text) in enumerate(gen_docs(rng, a.docs, 2, False, "b")):
            f.write("---\n# Source: platform/charts/%s/templates/%s.yaml\n" % (name.split("-")[0], kind.lower()))
            f.write(text)

    with open(os.path.join(out, "MANIFEST.txt"), "w") as f:
        f.write("seed %d\ndocs %d\nmany_files %d\nbig_docs %d\ntyped %d\n" % (a.seed, a.docs, nfiles, a.docs, int(a.typed)))
    print("gen.py: %d documents in %d files under %s, and %d in %s"
          % (a.docs, nfiles, many, a.docs, os.path.join(out, "big.yaml")))


if __name__ == "__main__":
    main()
