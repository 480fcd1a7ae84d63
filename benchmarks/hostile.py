"""Hostile-input benchmark: time and peak memory of ingesting pathological files.

Writes each case to a temp dir and ingests it in a fresh subprocess (so each max RSS is its
own), then prints seconds, max RSS and the outcome (stored / quarantined / refused).

    .venv/bin/python benchmarks/hostile.py [--scale 1.0] [--baseline DIR] [--cap-mb 3000]

``--baseline DIR`` runs each case a second time with ``DIR`` (a checkout of another commit,
e.g. ``git archive e76604a | tar -x -C DIR``) first on ``PYTHONPATH``, for the before/after
table; every child runs under an address-space cap (``--cap-mb``) so a baseline that grows
without bound ends in MemoryError instead of taking the machine.

Cases: 100,000 unclosed ``[`` (the issue's 200 KB file that grew to 24 GB), 20,000 closed
levels, a 1,500-level object-first file, deep values alternating with shallow ones (the
guard's slowest path: every chunk is walked token by token), and a 29 MB ordinary export for
scale. ``--scale`` multiplies the sizes. Target: every case bounded (seconds, < 200 MB).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

_CHILD = """
import json, resource, sys, time
from pathlib import Path
from pipeline.errors import InputFileError
from pipeline.ingest import ingest_paths
from pipeline.settings import Settings
path, store = Path(sys.argv[1]), Path(sys.argv[2])
fmt = sys.argv[3] if len(sys.argv) > 3 else None
started = time.perf_counter()
try:
    totals = ingest_paths(Settings(store=store), [path], fmt).totals
    outcome = (f"stored {totals.conversations} conv / {totals.messages} msgs,"
               f" {len(totals.rejected)} quarantined")
except InputFileError as exc:
    outcome = f"refused: {exc.record}: {exc.reason[:60]}"
except BaseException as exc:  # what the baseline may do
    outcome = f"CRASH {type(exc).__name__}: {str(exc)[:50]}"
seconds = time.perf_counter() - started
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "rss_mb": rss, "outcome": outcome}))
"""


def _cases(scale: float) -> dict[str, tuple[bytes, str | None]]:
    def n(value: int) -> int:
        return max(1, int(value * scale))

    good = b'{"id": "c", "mapping": {}}'  # a readable record first: the format is detected
    deep_item = b"[" * 200 + b"0" + b"]" * 200
    return {
        "100k unclosed [": (b"[" * n(100_000), None),
        "20k closed levels": (b"[" + good + b"," + b"[" * n(20_000) + b"]" * n(20_000) + b"]",
                              None),
        "1.5k-level object": (b'{"id": "c", "mapping": ' + b"[" * n(1500) + b"]" * n(1500)
                              + b"}", None),
        "deep/shallow x2000": (b"[" + b",".join([good, deep_item] * n(2000)) + b"]", None),
    }


def _run(path: Path, store: Path, fmt: str | None, code: str, cap_mb: int) -> dict[str, object]:
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap_mb << 20, cap_mb << 20))

    args = [sys.executable, "-c", _CHILD, str(path), str(store)] + ([fmt] if fmt else [])
    env = {**os.environ, "PYTHONPATH": code}
    done = subprocess.run(args, capture_output=True, text=True, env=env, preexec_fn=cap,
                          cwd=path.parent, check=False)  # not the repo: "" leads sys.path
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        last = (done.stderr.strip().splitlines() or ["killed"])[-1]
        return {"seconds": float("nan"), "rss_mb": float("nan"), "outcome": f"CRASH {last[:60]}"}
    result: dict[str, object] = json.loads(lines[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--baseline", type=Path, default=None)
    parser.add_argument("--cap-mb", type=int, default=3000)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    here = str(Path(__file__).resolve().parents[1])
    versions = [("this", here)] + ([("baseline", str(args.baseline))] if args.baseline else [])
    with tempfile.TemporaryDirectory() as tmp:
        for index, (name, (data, fmt)) in enumerate(_cases(args.scale).items()):
            path = Path(tmp) / f"case{index}.json"
            path.write_bytes(data)
            for label, code in versions:
                result = _run(path, Path(tmp) / f"store{index}-{label}", fmt, code, args.cap_mb)
                print(f"{name:20} {len(data) / 1e3:7,.0f} kB {label:8} {result['seconds']:6.2f} s"
                      f"  max RSS {result['rss_mb']:5.0f} MB  {result['outcome']}", flush=True)
    print(f"load average before/after: {load_before:.2f}/{os.getloadavg()[0]:.2f}"
          f" on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
