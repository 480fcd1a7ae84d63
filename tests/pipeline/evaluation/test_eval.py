"""The eval harness against recall computed by hand on tiny files written for the test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.cli.app import main
from pipeline.evaluation import load_locomo, ndcg, parse_evidence, score_ranking
from pipeline.settings import Settings

# Our own text in LoCoMo's format. Questions avoid speaker names so BM25 ranks are known.
LOCOMO = [{
    "sample_id": "t-1",
    "conversation": {
        "speaker_a": "Ann", "speaker_b": "Ben",
        "session_1_date_time": "1:00 pm on 3 March, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "Hi Ben, how was your week?"},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "I painted a zebra on the garage door."},
            {"speaker": "Ann", "dia_id": "D1:3", "text": "Lovely. I adopted a kitten, Pickle."},
        ],
        "session_2_date_time": "2:00 pm on 10 April, 2023",
        "session_2": [
            {"speaker": "Ben", "dia_id": "D2:1", "text": "I started learning the cello."},
            {"speaker": "Ann", "dia_id": "D2:2", "text": "My teacher lives in Oslo."},
        ],
    },
    "qa": [
        {"question": "Where was the zebra painted?", "answer": "garage", "evidence": ["D1:2"],
         "category": 1},
        {"question": "Which kitten was adopted?", "answer": "Pickle",
         "evidence": ["D1:3; D:2:2"], "category": 4},
        {"question": "Who plays the trombone?", "answer": 7, "evidence": ["D2:1"],
         "category": 2},
        {"question": "Malformed?", "answer": "x", "evidence": ["D"], "category": 1},
        {"question": "Empty?", "answer": "x", "evidence": [], "category": 1},
        {"question": "Unknown turn?", "answer": "x", "evidence": ["D9:9"], "category": 1},
        {"question": "Where was the zebra painted?", "adversarial_answer": "roof",
         "evidence": ["D1:2"], "category": 5},
    ],
}]


def test_parse_evidence_oddities() -> None:
    assert parse_evidence(["D8:6; D9:17"]) == ["D8:6", "D9:17"]
    assert parse_evidence(["D:11:26", "D", ""]) == ["D11:26"]
    assert parse_evidence([]) == [] and parse_evidence(None) == []


def test_metrics_by_hand() -> None:
    sessions = {"a": "s1", "b": "s1", "c": "s2", "d": "s3"}
    scores = score_ranking(["a", "c", "b", "d"], {"b", "d"}, sessions, {"s1", "s3"}, 2)
    assert (scores.recall_any, scores.recall_all, scores.recall) == (0.0, 0.0, 0.0)
    assert scores.session_recall == 0.5  # sessions by best turn: s1, s2
    scores = score_ranking(["a", "c", "b", "d"], {"b", "d"}, sessions, {"s1", "s3"}, 4)
    assert (scores.recall_any, scores.recall_all, scores.recall) == (1.0, 1.0, 1.0)
    assert scores.session_recall == 1.0
    assert ndcg(["x", "b"], {"b"}, 2) == pytest.approx(1 / 1.5849625, rel=1e-6)


def test_locomo_loader_counts_what_it_drops(tmp_path: Path) -> None:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(LOCOMO))
    data = load_locomo(path)
    assert [q.evidence for q in data.questions] == [("D1:2",), ("D1:3", "D2:2"), ("D2:1",),
                                                    ("D1:2",)]
    assert data.skipped["no usable evidence"] == 3 and data.dropped_ids == 1


def test_eval_locomo_cli_gives_hand_computed_recall(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("CONCEPTMEM_EMBEDDER", "hashing")
    path, out = tmp_path / "tiny.json", tmp_path / "eval.json"
    path.write_text(json.dumps(LOCOMO))
    assert main(["--store", str(settings.store), "eval", "locomo", str(path), "--k", "1,5",
                 "--json", str(out), "--route", "flat_bm25", "--route", "memory"]) == 0
    assert "flat_bm25" in capsys.readouterr().out
    report = json.loads(out.read_text())
    assert report["questions"] == 3  # category 5 apart; three items without usable evidence
    bm25 = report["routes"]["flat_bm25"]
    # by hand: q1 zebra -> D1:2 first (hit); q2 kitten -> D1:3 first (one of two gold);
    # q3 "plays trombone" matches no turn.
    assert bm25["recall_any"] == {"1": 0.6667, "5": 0.6667}
    assert bm25["recall_all"] == {"1": 0.3333, "5": 0.3333}
    assert bm25["recall"]["1"] == 0.5
    assert bm25["session_recall"]["1"] == 0.5  # q1 1, q2 1 of 2 sessions, q3 0
    assert bm25["by_category"] == {"1": {"1": 1.0, "5": 1.0}, "2": {"1": 0.0, "5": 0.0},
                                   "4": {"1": 1.0, "5": 1.0}, "5": {"1": 1.0, "5": 1.0}}
    assert set(report["routes"]) == {"flat_bm25", "memory"}
    assert report["notes"]["skipped_questions"] == {"no usable evidence": 3}


LONGMEM = [
    {"question_id": "q1", "question_type": "single-session-user",
     "question": "Where is the bike kept?", "answer": "blue shed",
     "haystack_session_ids": ["s1", "s2"],
     "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/21 (Sun) 10:00"],
     "haystack_sessions": [
         [{"role": "user", "content": "I love soup."},
          {"role": "assistant", "content": "Soup is great in winter."}],
         [{"role": "user", "content": "My bike stays in the blue shed.", "has_answer": True},
          {"role": "assistant", "content": "Sheds keep rain off."}]],
     "answer_session_ids": ["s2"]},
    {"question_id": "q2", "question_type": "multi-session",
     "question": "Which instrument do I practise?", "answer": "cello",
     "haystack_session_ids": ["s1", "s3"], "haystack_dates": ["2023/05/20 (Sat) 02:21",
                                                             "2023/06/01 (Thu) 09:00"],
     "haystack_sessions": [
         [{"role": "user", "content": "I love soup."},
          {"role": "assistant", "content": "Soup is great in winter."}],
         [{"role": "user", "content": "Cello lessons on Monday.", "has_answer": True}]],
     "answer_session_ids": ["s3"]},
    {"question_id": "q3_abs", "question_type": "single-session-user",
     "question": "Where is my boat?", "answer": "n/a", "haystack_session_ids": ["s1"],
     "haystack_dates": ["2023/05/20 (Sat) 02:21"],
     "haystack_sessions": [[{"role": "user", "content": "I love soup."},
                            {"role": "assistant", "content": "Soup is great in winter."}]],
     "answer_session_ids": []},
]


def test_eval_longmemeval_turn_and_session_recall(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CONCEPTMEM_EMBEDDER", "hashing")
    path, out = tmp_path / "lme.json", tmp_path / "eval.json"
    path.write_text(json.dumps(LONGMEM))
    assert main(["--store", str(settings.store), "eval", "longmemeval", str(path), "--k", "1",
                 "--json", str(out), "--route", "flat_bm25"]) == 0
    report = json.loads(out.read_text())
    assert report["questions"] == 2 and report["notes"]["skipped_abstention"] == 1
    bm25 = report["routes"]["flat_bm25"]
    # q1: "bike" matches only the gold turn; q2: "instrument", "practise" match nothing.
    assert bm25["recall_any"]["1"] == 0.5 and bm25["ndcg"]["1"] == 0.5
    assert bm25["session_recall"]["1"] == 0.5 and bm25["session_ndcg"]["1"] == 0.5
    assert set(bm25["by_category"]) == {"single-session-user", "multi-session"}


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"a": 1}', "not json"])
def test_benchmark_loaders_name_the_file_for_unreadable_input(tmp_path: Path, text: str) -> None:
    from pipeline.errors import InputFileError
    from pipeline.evaluation.longmemeval import load_longmemeval

    path = tmp_path / "bench.json"
    path.write_text(text)
    for load in (load_locomo, load_longmemeval):
        with pytest.raises(InputFileError) as caught:
            load(path)
        assert str(path) in str(caught.value.message)
