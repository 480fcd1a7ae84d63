"""Hostile-input benchmark: time and peak memory of ingesting pathological files.

Writes each case to a temp dir and ingests it in a fresh subprocess (so each max RSS is its
own), then prints seconds, max RSS and the outcome (stored / quarantined / refused).

    .venv/bin/python benchmarks/hostile.py [--scale 1.0]

Cases: 100,000 unclosed ``[`` (the issue's 200 KB file that grew to 24 GB), 20,000 closed
levels, a 1,500-level object-first file, deep values alternating with shallow ones (the
guard's slowest path: every chunk is walked token by token), and a 29 MB ordinary export for
scale. ``--scale`` multiplies the sizes. Target: every case bounded (seconds, < 200 MB).
"""

from __future__ import annotations

import argparse
import json
import os
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
    outcome = f"stored {totals.messages} msgs, {len(totals.rejected)} quarantined"
except InputFileError as exc:
    outcome = f"refused: {exc.record}: {exc.reason[:60]}"
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


def _run(path: Path, store: Path, fmt: str | None) -> dict[str, object]:
    args = [sys.executable, "-c", _CHILD, str(path), str(store)] + ([fmt] if fmt else [])
    done = subprocess.run(args, capture_output=True, text=True, check=True)
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        for index, (name, (data, fmt)) in enumerate(_cases(args.scale).items()):
            path = Path(tmp) / f"case{index}.json"
            path.write_bytes(data)
            result = _run(path, Path(tmp) / f"store{index}", fmt)
            print(f"{name:22} {len(data) / 1e3:9,.0f} kB  {result['seconds']:6.2f} s"
                  f"  max RSS {result['rss_mb']:5.0f} MB  {result['outcome']}")
    print(f"load average before/after: {load_before:.2f}/{os.getloadavg()[0]:.2f}"
          f" on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
