"""Open WebUI importer: message tree, currentId, reasoning and tool output as parts."""

from __future__ import annotations

import json
from pathlib import Path

from ontology import Message
from pipeline.importers.openwebui import split_details
from pipeline.ingest import ingest_paths
from pipeline.settings import Settings
from staging import SourceStore

SAMPLE = Path(__file__).parent / "fixtures" / "handwritten_librechat_openwebui-export.json"


def _messages(settings: Settings) -> dict[str, Message]:
    store = SourceStore.open(settings.source_db)
    try:
        return {m.external_id: m for m in store.messages()}
    finally:
        store.close()


def test_sample(settings: Settings) -> None:
    report = ingest_paths(settings, [SAMPLE])
    assert report.files[0].format == "openwebui"
    assert (report.totals.conversations, report.totals.messages) == (3, 6)
    m = _messages(settings)
    assert m["ra2"].text == "255"
    assert [p.kind for p in m["ra2"].parts] == ["thinking"]
    assert "150 + 105" in m["ra2"].parts[0].text
    assert m["ta2"].text == "The weather in Paris is 18C with rain."
    assert [p.kind for p in m["ta2"].parts] == ["tool_use", "tool_result"]
    assert m["ta2"].parts[1].text == "Paris: 18C, rain"
    assert m["sa2"].parent_id == m["sa1"].id and m["sa2"].author == "llama3.1:latest"
    assert all(x.on_current_branch for x in m.values())


def test_details_blocks_are_cut_out_of_the_text() -> None:
    text, parts = split_details(
        '<details type="reasoning" done="true"><summary>Thought</summary>&gt; hmm</details>Hi'
    )
    assert text == "Hi"
    assert [(p.kind, p.text) for p in parts] == [("thinking", "> hmm")]


def test_branches_follow_current_id(settings: Settings, tmp_path: Path) -> None:
    chats = json.loads(SAMPLE.read_text())
    history = chats[2]["chat"]["history"]
    history["messages"]["sa1"]["childrenIds"].append("sa3")
    history["messages"]["sa3"] = {"id": "sa3", "parentId": "sa1", "childrenIds": [],
                                  "role": "assistant", "content": "Hello again!",
                                  "timestamp": 1700002009}
    history["currentId"] = "sa2"  # the older answer stays current
    chats.append({"id": "broken", "title": "no chat"})
    path = tmp_path / "export.json"
    path.write_text(json.dumps(chats))
    report = ingest_paths(settings, [path])
    assert report.totals.messages == 7
    assert [r.reason for r in report.totals.rejected] == ["chat is not an object"]
    m = _messages(settings)
    assert m["sa2"].on_current_branch and not m["sa3"].on_current_branch
    assert m["sa3"].parent_id == m["sa1"].id
