#!/usr/bin/env python3
"""`lint --inspect-images` over 20 images on a loopback registry: cold, then cached.

    python3 bench/images.py            # needs go; installs crane through scripts/test-tools.sh

A `crane registry serve` on loopback holds 20 images, each a small Go program (compiled here,
different per image, so no two share a layer) under a 1 MiB layer of random bytes that the lint
must not read. One Deployment names all 20. The lint runs with an empty cache (cold), then again
with that cache (cached), a few times each; the registry's log counts the blob requests of each
run, and the cache's facts give the bytes read per image against its size.
(Python 3 standard library only.)
"""

import io
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CRANE = os.path.join(ROOT, "target", "test-tools", "go", "bin", "crane")
GOLINT = os.path.join(ROOT, "target", "release", "golint-k8s")
IMAGES = 20
RUNS = 5


def say(msg):
    print("images: " + msg, file=sys.stderr, flush=True)


def run(argv, **kw):
    return subprocess.run(argv, check=True, capture_output=True, text=True, **kw).stdout


def layer(path, entries):
    with tarfile.open(path, "w:gz") as t:
        for name, data in entries:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o755
            t.addfile(info, io.BytesIO(data))


def main():
    run(["bash", os.path.join(ROOT, "scripts", "test-tools.sh")])
    run(["cargo", "build", "--release", "--locked", "--quiet"], cwd=ROOT)
    work = tempfile.mkdtemp(prefix="golint-images-")
    try:
        bench(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def bench(work):
    log = open(os.path.join(work, "registry.log"), "w+")
    registry = subprocess.Popen(
        [CRANE, "registry", "serve", "--address", "127.0.0.1:0"],
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    try:
        port = None
        for _ in range(200):
            log.seek(0)
            m = re.search(r"serving on port (\d+)", log.read())
            if m:
                port = m.group(1)
                break
            time.sleep(0.05)
        if port is None:
            sys.exit("images: the registry did not start")
        reg = "127.0.0.1:" + port
        src = os.path.join(work, "prog")
        os.makedirs(src)
        with open(os.path.join(src, "go.mod"), "w") as f:
            f.write("module example.com/prog\n\ngo 1.24\n")
        refs = []
        for i in range(IMAGES):
            with open(os.path.join(src, "main.go"), "w") as f:
                f.write('package main\n\nimport "fmt"\n\nfunc main() { fmt.Println(%d) }\n' % i)
            binary = os.path.join(work, "server")
            env = dict(os.environ, CGO_ENABLED="0", GOTOOLCHAIN="local", GOWORK="off")
            run(["go", "build", "-o", binary, "."], cwd=src, env=env)
            low = os.path.join(work, "low-%d.tgz" % i)
            top = os.path.join(work, "top-%d.tgz" % i)
            layer(low, [("data/blob", os.urandom(1 << 20))])
            layer(top, [("app/server", open(binary, "rb").read())])
            base = "%s/app%02d:base" % (reg, i)
            tag = "%s/app%02d:v1" % (reg, i)
            run([CRANE, "append", "-t", base, "-f", low, "-f", top])
            run([CRANE, "mutate", base, "-t", tag, "--entrypoint", "/app/server"])
            refs.append(tag)
        manifest = os.path.join(work, "deploy.yaml")
        with open(manifest, "w") as f:
            f.write("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n"
                    "  template:\n    spec:\n      containers:\n")
            for i, ref in enumerate(refs):
                f.write("      - name: c%02d\n        image: %s\n" % (i, ref))

        def lint(cache):
            log.seek(0, os.SEEK_END)
            start_log = log.tell()
            t0 = time.perf_counter()
            subprocess.run(
                # A loopback registry is read only when named (docs/images.md).
                [GOLINT, "lint", "--inspect-images", "--insecure-registry", reg, manifest],
                env=dict(os.environ, GOLINT_K8S_CACHE=cache, DOCKER_CONFIG=work),
                capture_output=True,
            )
            took = time.perf_counter() - t0
            log.seek(start_log)
            blobs = len(re.findall(r"GET /v2/[^ ]*/blobs/", log.read()))
            return took, blobs

        cold, cached = [], []
        for r in range(RUNS):
            cache = os.path.join(work, "cache-%d" % r)
            cold.append(lint(cache))
            cached.append(lint(cache))
        facts_dir = os.path.join(work, "cache-0", "images", "facts")
        read = size = 0
        for name in os.listdir(facts_dir):
            facts = json.load(open(os.path.join(facts_dir, name)))
            read += facts["bytes_read"]
            size += facts["image_size"]
        per = lambda xs: "median %.3f s (%.3f–%.3f), %d blob requests" % (
            statistics.median(t for t, _ in xs),
            min(t for t, _ in xs),
            max(t for t, _ in xs),
            xs[0][1],
        )
        print("%d images, %d runs each" % (IMAGES, RUNS))
        print("cold:   " + per(cold))
        print("cached: " + per(cached))
        print("bytes read: %d of %d compressed layer bytes (%.1f%%), %d per image on average"
              % (read, size, 100.0 * read / size, read // IMAGES))
    finally:
        registry.kill()
        registry.wait()


if __name__ == "__main__":
    main()
