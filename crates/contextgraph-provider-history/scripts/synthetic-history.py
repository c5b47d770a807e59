#!/usr/bin/env python3
"""Write a large synthetic git history for the history index's scale bench.

Usage: synthetic-history.py OUT_DIR [COMMITS] [SUBJECT_SOURCE_REPO ...]

Makes a git repository at OUT_DIR with COMMITS (default 100,000) linear
commits, made with `git fast-import` (seconds, not hours). Each commit
changes 1-6 files of a tree of 4,000 paths (a few files are hot, most are
cold, as in real projects), with a subject drawn from the real subjects of
the given repositories (recombined, so the vocabulary and lengths are real),
a body on a third of the commits, and a handful of sweeping commits that
touch hundreds of files. Deterministic (seeded): the same arguments give
the same commit ids.
"""
import os
import random
import subprocess
import sys


def real_subjects(repos):
    subjects = []
    for repo in repos:
        out = subprocess.run(
            ["git", "-C", repo, "log", "--format=%s"],
            check=True, capture_output=True, text=True,
        ).stdout
        subjects.extend(s for s in out.splitlines() if s.strip())
    return subjects or ["fix the parser", "add a config option", "update docs"]


def main():
    out = sys.argv[1]
    commits = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    subjects = real_subjects(sys.argv[3:])
    words = [w for s in subjects for w in s.split()]
    rng = random.Random(27)
    dirs = ["src", "src/core", "src/net", "src/ui", "lib", "lib/util", "tests", "docs", "tools", "cmd"]
    exts = [".rs", ".py", ".go", ".ts", ".js", ".c", ".md"]
    paths = [f"{rng.choice(dirs)}/mod{i}{rng.choice(exts)}" for i in range(4000)]
    # Zipf-like popularity: a few files change all the time.
    weights = [1.0 / (i + 1) ** 0.8 for i in range(len(paths))]
    subprocess.run(["git", "init", "-q", "-b", "main", out], check=True)
    fi = subprocess.Popen(["git", "-C", out, "fast-import", "--quiet"], stdin=subprocess.PIPE)
    w = fi.stdin.write
    t = 1_500_000_000
    for n in range(1, commits + 1):
        t += rng.randint(60, 3600)
        if rng.random() < 0.6:
            subject = rng.choice(subjects)
        else:
            subject = " ".join(rng.choice(words) for _ in range(rng.randint(3, 9)))
        message = subject
        if rng.random() < 0.33:
            body = " ".join(rng.choice(words) for _ in range(rng.randint(8, 60)))
            message += "\n\n" + body
        message = message.encode("utf-8", "replace") + b"\n"
        touched = 300 if n % 20_000 == 0 else rng.randint(1, 6)
        changed = set(rng.choices(paths, weights=weights, k=touched))
        author = f"Dev {rng.randint(1, 200)} <dev{rng.randint(1, 200)}@example.org>"
        w(b"commit refs/heads/main\n")
        w(f"author {author} {t} +0000\ncommitter {author} {t} +0000\n".encode())
        w(b"data %d\n" % len(message) + message)
        if n == 1:
            changed = set(paths)
        for p in sorted(changed):
            blob = f"// {p} at change {n}\nfn item_{n}() {{}}\n".encode()
            w(f"M 100644 inline {p}\n".encode())
            w(b"data %d\n" % len(blob) + blob)
        w(b"\n")
    fi.stdin.close()
    if fi.wait() != 0:
        sys.exit("git fast-import failed")
    subprocess.run(["git", "-C", out, "checkout", "-q", "main"], check=True)


if __name__ == "__main__":
    main()
