#!/usr/bin/env python3
"""Whether flushing many replaced files as a group would make `fix` cheaper on this disk.

`fix` writes each fixed file to a temporary file, flushes it (`fsync`), and renames it over the
original, on 16 threads (`fix::write`). This script does the same with plain files, outside the
tool, so that the disk's share can be seen alone: 1,293 files of 12 KB in 10 directories (as
many as `fix` rewrites in the bench's 10,000 files), each way on a fresh tree:

    fsync   one fsync per temporary file, 16 threads, then rename (what `fix` does)
    N       the temporary files of N files written unflushed on 16 threads, one syncfs(2) for
            them, then their renames (a group flush; N = all files is one syncfs)

Every way ends with one fsync per directory, as `fix` does. Linux only (syncfs).

    python3 bench/flushes.py [DIR] [ROUNDS]

DIR (default target) must be on the disk to measure; the files go into a new directory inside
it, removed afterwards.
"""
import ctypes
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

FILES, DIRS, THREADS = 1293, 10, 16
TEXT = b"x" * 12000
libc = ctypes.CDLL("libc.so.6", use_errno=True)


def tree(base):
    shutil.rmtree(base, ignore_errors=True)
    for d in range(DIRS):
        os.makedirs(os.path.join(base, "d%d" % d))
    for i in range(FILES):
        with open(target(base, i), "wb") as f:
            f.write(TEXT)
    os.sync()
    time.sleep(1)


def target(base, i):
    return os.path.join(base, "d%d" % (i % DIRS), "f%d.yaml" % i)


def temporary(base, i, flush):
    path = os.path.join(base, "d%d" % (i % DIRS), ".tmp%d" % i)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    os.write(fd, TEXT + b"y")
    if flush:
        os.fsync(fd)
    return fd, path


def one_way(base, way):
    tree(base)
    start = time.perf_counter()
    if way == "fsync":
        def job(i):
            fd, path = temporary(base, i, True)
            os.close(fd)
            os.rename(path, target(base, i))
        with ThreadPoolExecutor(THREADS) as pool:
            list(pool.map(job, range(FILES)))
    else:
        group = int(way)
        for first in range(0, FILES, group):
            files = range(first, min(FILES, first + group))
            with ThreadPoolExecutor(THREADS) as pool:
                written = list(pool.map(lambda i: temporary(base, i, False), files))
            if libc.syncfs(written[0][0]) != 0:
                sys.exit("syncfs failed: errno %d" % ctypes.get_errno())
            for i, (fd, path) in zip(files, written):
                os.close(fd)
                os.rename(path, target(base, i))
    for d in range(DIRS):
        fd = os.open(os.path.join(base, "d%d" % d), os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)
    return time.perf_counter() - start


def main():
    parent = sys.argv[1] if len(sys.argv) > 1 else "target"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    ways = ["fsync", "128", str(FILES)]
    times = {w: [] for w in ways}
    # A directory of its own, so that nothing the caller had in DIR is touched.
    own = tempfile.mkdtemp(prefix="flushes-", dir=parent)
    base = os.path.join(own, "tree")
    try:
        for _ in range(rounds):
            for w in ways:
                times[w].append(one_way(base, w))
    finally:
        shutil.rmtree(own, ignore_errors=True)
    for w in ways:
        shown = ", ".join("%.3f s" % t for t in times[w])
        print("%-6s %s" % (w, shown))


if __name__ == "__main__":
    main()
