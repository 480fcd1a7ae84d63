"""Issue 11, class 2: one writer per store, readers welcome, stale locks recovered.

Every writer here is a real subprocess on a real store; nothing is mocked.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.cli.app import main
from pipeline.settings import Settings
from staging.errors import StoreBusy
from staging.lock import holder, writer_lock

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "messages.jsonl"

# Takes the store's writer lock like a stage does, opens a run, says so, then sleeps.
_HOLDER = """
import sys, time
from staging.lock import writer_lock
from staging import StagingStore
store = sys.argv[1]
with writer_lock(store, "extract", create=True):
    staging = StagingStore.open(store + "/staging.db")
    staging.start_run("extract", {}, "test", "u", "a")
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CONCEPTMEM_LLM_BASE_URL",
                        "CONCEPTMEM_LLM_API_KEY", "CONCEPTMEM_STORE")}
    env["PYTHONPATH"] = str(REPO)
    return env


def _start_holder(store: Path, seconds: float) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER, str(store), str(seconds)],
                            stdout=subprocess.PIPE, text=True, env=_env())
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def _cli(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pipeline", "--store", str(store), *args],
                          capture_output=True, text=True, env=_env(), timeout=300)


def _runs(store: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(store / "staging.db") as conn:
        return conn.execute("SELECT stage, status FROM runs ORDER BY started_at").fetchall()


def _counts(store: Path) -> dict[str, int]:
    counts = {}
    with sqlite3.connect(store / "source.db") as conn:
        counts["messages"] = conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
    with sqlite3.connect(store / "staging.db") as conn:
        for table in ("concepts", "evidence", "segments"):
            counts[table] = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
        counts["without_decision"] = conn.execute(
            "SELECT COUNT(*) FROM concepts c WHERE NOT EXISTS (SELECT 1 FROM mapper_decisions d"
            " WHERE d.concept_id = c.id)").fetchone()[0]
    return counts


def test_a_second_writer_is_refused_with_who_holds_the_store(settings: Settings) -> None:
    store = settings.store
    proc = _start_holder(store, 60)
    try:
        with pytest.raises(StoreBusy) as info, writer_lock(store, "ingest"):
            pass
        assert f"store {store} is busy: extract started by pid {proc.pid} at " in info.value.message
        result = _cli(store, "ingest", str(FIXTURE))
        assert result.returncode == 1 and "Traceback" not in result.stderr
        assert f"is busy: extract started by pid {proc.pid}" in result.stderr
        assert "--wait" in result.stderr
        assert not (store / "source.db").exists()  # the refused ingest wrote nothing
        # readers are welcome while the writer holds the store
        found = holder(store)
        assert found is not None and found.pid == proc.pid and found.stage == "extract"
    finally:
        proc.kill()
        proc.wait()


def test_a_killed_writer_leaves_no_lock_and_its_run_is_marked_interrupted(
    settings: Settings,
) -> None:
    store = settings.store
    proc = _start_holder(store, 60)
    assert _runs(store) == [("extract", "started")]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert main(["--store", str(store), "ingest", str(FIXTURE)]) == 0  # the lock was free
    assert _runs(store) == [("extract", "interrupted")]
    with sqlite3.connect(store / "staging.db") as conn:
        error, finished = conn.execute("SELECT error, finished_at FROM runs").fetchone()
    assert "interrupted" in error and finished is not None


def test_wait_lets_a_writer_queue_behind_the_holder(settings: Settings) -> None:
    store = settings.store
    proc = _start_holder(store, 1.5)
    try:
        result = _cli(store, "--wait", "60", "ingest", str(FIXTURE))
    finally:
        proc.wait()
    assert result.returncode == 0, result.stderr
    assert _counts(store)["messages"] > 0


def test_two_concurrent_extracts_never_duplicate(settings: Settings) -> None:
    """Two real `extract` processes at once: one is refused (or finds nothing left to do);
    the store ends exactly as one serial extract leaves it."""
    store, serial = settings.store, settings.store.parent / "serial"
    for target in (store, serial):
        assert main(["--store", str(target), "ingest", str(FIXTURE)]) == 0
    assert main(["--store", str(serial), "extract", "--offline"]) == 0
    expected = _counts(serial)
    assert expected["concepts"] > 0 and expected["without_decision"] == 0
    command = [sys.executable, "-m", "pipeline", "--store", str(store), "extract", "--offline"]
    procs = [subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=_env())
             for _ in range(2)]
    results = [(p.wait(timeout=300), p.communicate()[1]) for p in procs]
    codes = sorted(code for code, _ in results)
    assert codes in ([0, 0], [0, 1]), results
    for code, err in results:
        assert "Traceback" not in err
        if code == 1:
            assert f"store {store} is busy: extract started by pid" in err
    assert _counts(store) == expected
    stages = json.dumps(_runs(store))
    assert "started" not in stages


def test_the_lock_is_reentrant_in_a_thread_and_exclusive_across_threads(
    settings: Settings,
) -> None:
    import threading

    refused: list[str] = []

    def second_writer() -> None:
        try:
            with writer_lock(settings.store, "ingest"):
                refused.append("acquired")
        except StoreBusy as exc:
            refused.append(exc.message)

    with writer_lock(settings.store, "extract", create=True):
        with writer_lock(settings.store, "ingest"):  # run -> ingest: the same writer
            found = holder(settings.store)
            assert found is not None and (found.stage, found.pid) == ("extract", os.getpid())
        thread = threading.Thread(target=second_writer)
        thread.start()
        thread.join()
    assert len(refused) == 1 and f"busy: extract started by pid {os.getpid()}" in refused[0]
    assert holder(settings.store) is None  # removed on release
    with writer_lock(settings.store, "ingest"):  # free again
        pass
