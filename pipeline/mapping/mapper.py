"""The semantic mapper: verified mentions to concepts, deterministically.

For each mention of one extraction, in order: decide (pure rules in ``decide``) then apply the
decision through ``ConceptRepo`` (concept row, evidence, revision snapshot, decision row), then
resolve the extraction's relations by title. The caller wraps one extraction in one transaction.

Tentative mentions (confidence below ``mapper_weak_below``) attach where a concept fits: one
whose name they repeat lends them its type. When none fits they create a ``weak`` concept (a
hypothesis with one piece of evidence), which becomes ``active`` once evidence from
``mapper_confirm_messages`` distinct messages supports it (a lone lowercase word such as
"community" stays weak: it names too little alone); so coverage grows without adding an active
concept per sentence.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import datetime

import numpy as np

from ontology import Embedder, RawMention, normalize_name, stable_id
from pipeline.evidence import Verification
from pipeline.mapping.decide import (
    Decision,
    NameCheck,
    Thresholds,
    choose,
    refinement_for,
    scores_of,
)
from pipeline.mapping.index import ConceptIndex, FloatMatrix
from pipeline.settings import Settings
from staging.concept_repo import (
    ConceptRepo,
    ConceptRow,
    DecisionRow,
    EvidenceRow,
    RelationRow,
    evidence_id,
)
from staging.staging_store import Provenance

__all__ = ["MappingInput", "MappingTally", "SemanticMapper"]


@dataclass(frozen=True)
class MappingInput:
    """One mention after evidence verification, with what the mapper needs of its message."""

    mention_id: str
    mention: RawMention
    verification: Verification
    source_id: str | None
    message_time: datetime | None


@dataclass
class MappingTally:
    actions: Counter[str] = field(default_factory=Counter)
    reject_reasons: Counter[str] = field(default_factory=Counter)
    evidence: int = 0
    relations: int = 0

    def add(self, other: MappingTally) -> None:
        self.actions.update(other.actions)
        self.reject_reasons.update(other.reject_reasons)
        self.evidence += other.evidence
        self.relations += other.relations


class SemanticMapper:
    """Holds the candidate index of live concepts and keeps it in step with its own writes."""

    def __init__(self, repo: ConceptRepo, embedder: Embedder, settings: Settings) -> None:
        self.repo = repo
        self.settings = settings
        self.limits = Thresholds(
            alias=settings.mapper_alias_threshold, fuzzy=settings.mapper_fuzzy_threshold,
            cosine=settings.mapper_embedding_threshold,
            cosine_min_fuzzy=settings.mapper_embedding_min_fuzzy,
        )
        self.embedder = embedder
        self._indexes: dict[tuple[str, str], ConceptIndex] = {}
        self.scope = (settings.user_scope, settings.assistant_scope)
        self.index = self._index_for(self.scope)

    def _index_for(self, scope: tuple[str, str]) -> ConceptIndex:
        """One candidate index per (user_scope, assistant_scope): scopes never share concepts."""
        if scope not in self._indexes:
            self._indexes[scope] = ConceptIndex.build(self.embedder, self.repo.rows(scope=scope))
        return self._indexes[scope]

    def map_extraction(
        self, inputs: list[MappingInput], prov: Provenance, scope: tuple[str, str] | None = None
    ) -> MappingTally:
        """Map one extraction's mentions within ``scope`` (default: the settings' scope)."""
        self.scope = scope or (self.settings.user_scope, self.settings.assistant_scope)
        self.index = self._index_for(self.scope)
        prov = replace(prov, user_scope=self.scope[0], assistant_scope=self.scope[1])
        tally = MappingTally()
        vectors, sure = self._vectors(inputs)
        cosines = np.zeros((len(self.index.names), len(inputs)), dtype=np.float32)
        if sure:  # one matrix product for the confident mentions of the whole extraction
            cosines[:, sure] = self.index.cosines(vectors[sure])
        mapped: list[tuple[str, MappingInput]] = []
        for column, (given, vector) in enumerate(zip(inputs, vectors, strict=True)):
            item = self._fitted(given)
            decision = self.decide(item, vector, cosines[:, column])
            self.apply(decision, item, prov, tally)
            if decision.concept_id in self.index.concepts and item.verification.verified:
                mapped.append((decision.concept_id, item))
        by_title: dict[str, str] = {}
        for concept_id, item in mapped:  # a title names the concept its first mention got
            by_title.setdefault(normalize_name(item.mention.title), concept_id)
        for concept_id, item in mapped:
            tally.relations += self._relate(concept_id, item, by_title, prov)
        return tally

    def _vectors(self, inputs: list[MappingInput]) -> tuple[FloatMatrix, list[int]]:
        """Name vectors of confident mentions (and their columns); tentative ones match by
        name only (zeros)."""
        sure = [i for i, item in enumerate(inputs)
                if item.mention.confidence >= self.settings.mapper_weak_below]
        out = np.zeros((len(inputs), self.embedder.dim), dtype=np.float32)
        if sure:
            names = [normalize_name(inputs[i].mention.title) for i in sure]
            out[sure] = self.index.embed_names(names)
        return out, sure

    # -- deciding ------------------------------------------------------------------------------
    def _fitted(self, item: MappingInput) -> MappingInput:
        """A tentative mention takes the type of the live concept its name already names."""
        mention = item.mention
        if mention.confidence >= self.settings.mapper_weak_below:
            return item
        owners = sorted(
            (self.index.concepts[cid].state != "active", cid)
            for cid in self.index.alias.get(normalize_name(mention.title), [])
            if cid in self.index.concepts
        )
        if not owners:
            return item
        kind = self.index.concepts[owners[0][1]].type
        if kind == mention.type:
            return item
        return replace(item, mention=mention.model_copy(update={"type": kind}))

    def decide(
        self, item: MappingInput, vector: FloatMatrix, cosines: FloatMatrix | None = None
    ) -> Decision:
        mention, check = item.mention, item.verification
        if not check.verified:
            return Decision("reject", None, f"unverified_evidence:{check.reason}", {})
        name = normalize_name(mention.title)
        if not name:
            return Decision("reject", None, "empty_title", {})
        candidates = self.index.candidates(name, vector, cosines)
        rows = {c.concept_id: self.index.concepts[c.concept_id] for c in candidates}
        types = {concept_id: row.type for concept_id, row in rows.items()}
        names = NameCheck(mention.title, {k: (r.title, r.aliases) for k, r in rows.items()})
        matched, via, best = choose(candidates, mention.type, types, self.limits, names)
        scores = {**scores_of(best, mention.type, types), "via": via}
        if matched is not None:
            return self._join(matched.concept_id, item, scores, f"match:{via}")
        concept_id = stable_id(
            "c", self.scope[0], self.scope[1], mention.type, name
        )
        if concept_id in self.index.concepts:  # unreachable unless the index lags; stay safe
            return self._join(concept_id, item, scores, "match:id")
        retired = self._retired_target(concept_id)
        if retired is not None:
            target, reason, archived = retired
            if target is None:
                return Decision("reject", concept_id, reason, scores)
            return self._join(target, item, scores, reason, archived)
        blocked = best is not None and scores["type_compat"] == 0.0 and (
            best.alias_hit or best.fuzzy >= self.limits.fuzzy
        )
        reason = f"type_incompatible:{best.concept_id}" if blocked and best else "no_match"
        return Decision("create", concept_id, reason, scores)

    def _join(
        self, concept_id: str, item: MappingInput, scores: dict[str, object], reason: str,
        archived: ConceptRow | None = None,
    ) -> Decision:
        check = item.verification
        assert check.message_id is not None and check.start is not None and check.end is not None
        if self.repo.has_evidence(evidence_id(concept_id, check.message_id, check.start,
                                              check.end)):
            return Decision("reject", concept_id, "duplicate_evidence", dict(scores))
        row = archived or self.index.concepts[concept_id]
        refinement = refinement_for(row, item.mention, self.limits)
        if archived is not None or self._confirms(row, check.message_id, item.message_time):
            refinement = replace(refinement, state="active")
        if refinement:
            return Decision("refine", concept_id, f"{reason}; {refinement.summary()}",
                            dict(scores), refinement)
        return Decision("attach", concept_id, reason, dict(scores))

    def _confirms(self, row: ConceptRow, message_id: str, at: datetime | None) -> bool:
        """A weak concept recurs: evidence from ``mapper_confirm_messages`` distinct messages
        over ``mapper_confirm_days`` (times unknown: the message count alone decides)."""
        if row.state != "weak" or _lone_common_noun(row.title):
            return False
        times = [datetime.fromisoformat(t) for t in (row.first_seen, row.last_seen) if t]
        times += [at] if at is not None else []
        if times and (max(times) - min(times)).total_seconds() < (
            86400 * self.settings.mapper_confirm_days
        ):
            return False
        seen = {span.message_id for span in self.repo.evidence_for(row.id)} | {message_id}
        return len(seen) >= self.settings.mapper_confirm_messages

    def _retired_target(
        self, concept_id: str
    ) -> tuple[str | None, str, ConceptRow | None] | None:
        """A concept id that exists but is not live: follow merges; new evidence revives an
        archived concept; a split one (replaced by its parts) is not revived."""
        row = self.repo.row(concept_id)
        seen: set[str] = set()
        while row is not None and row.merged_into and row.id not in seen:
            seen.add(row.id)
            if row.merged_into in self.index.concepts:
                return row.merged_into, f"merged_into:{row.merged_into}", None
            row = self.repo.row(row.merged_into)
        if row is None and not seen:
            return None
        if row is not None and row.state == "archived":
            return row.id, "revived:archived", row
        state = row.state if row is not None else "missing"
        return None, f"concept_retired:{state}", None

    # -- applying ------------------------------------------------------------------------------
    def apply(
        self, decision: Decision, item: MappingInput, prov: Provenance, tally: MappingTally
    ) -> None:
        tally.actions[decision.action] += 1
        if decision.action == "reject":
            tally.reject_reasons[decision.reason.split(":")[0]] += 1
        elif decision.action == "create":
            self._create(decision, item, prov)
        else:
            self._update(decision, item, prov)
        if decision.action != "reject":
            tally.evidence += int(self._add_evidence(decision, item, prov))
        if decision.action in ("create", "refine"):
            assert decision.concept_id is not None
            self.repo.record_revision(decision.concept_id, decision.action, decision.reason, prov)
        check = item.verification
        self.repo.add_decision(
            DecisionRow(
                mention_id=item.mention_id, action=decision.action,
                concept_id=decision.concept_id, scores=decision.scores, reason=decision.reason,
                source_message_ids=[check.message_id] if check.message_id else [],
            ),
            prov,
        )

    def _create(self, decision: Decision, item: MappingInput, prov: Provenance) -> None:
        assert decision.concept_id is not None
        seen = _iso(item.message_time)
        mention = item.mention
        row = ConceptRow(
            id=decision.concept_id, title=mention.title.strip(), type=mention.type,
            description=mention.description.strip(),
            state="weak" if mention.confidence < self.settings.mapper_weak_below else "active",
            confidence=mention.confidence, aliases=[], revision_count=0,
            first_seen=seen, last_seen=seen,
        )
        self.repo.save_concept(row, prov)
        self.index.add(row)

    def _update(self, decision: Decision, item: MappingInput, prov: Provenance) -> None:
        assert decision.concept_id is not None
        row = self.index.concepts.get(decision.concept_id) or self.repo.row(decision.concept_id)
        assert row is not None
        refinement = decision.refinement
        if refinement and refinement.state:
            row.state = refinement.state
            self.index.add(row)
        if refinement:
            if refinement.alias:
                row.aliases.append(refinement.alias)
            if refinement.description:
                row.description = refinement.description
            if refinement.confidence is not None:
                row.confidence = refinement.confidence
            row.revision_count += 1
        row.first_seen = _earliest(row.first_seen, item.message_time)
        row.last_seen = _latest(row.last_seen, item.message_time)
        self.repo.save_concept(row, prov)
        if refinement and refinement.alias:
            self.index.add(row)

    def _add_evidence(self, decision: Decision, item: MappingInput, prov: Provenance) -> bool:
        check = item.verification
        assert decision.concept_id and check.message_id is not None
        assert check.start is not None and check.end is not None
        return self.repo.add_evidence(
            EvidenceRow(
                concept_id=decision.concept_id, message_id=check.message_id,
                source_id=item.source_id or "", quote=item.mention.quote.strip(),
                start=check.start, end=check.end, confidence=item.mention.confidence,
                mention_id=item.mention_id,
            ),
            prov,
        )

    def _relate(
        self, concept_id: str, item: MappingInput,
        by_title: dict[str, str], prov: Provenance,
    ) -> int:
        added = 0
        for relation in item.mention.relations:
            target = by_title.get(normalize_name(relation.target_title))
            if target is None or target == concept_id:
                continue
            added += self.repo.add_relation(
                RelationRow(
                    source_concept_id=concept_id, target_concept_id=target,
                    relation=relation.relation, confidence=relation.confidence,
                    valid_at=_iso(item.message_time),
                    evidence_message_id=item.verification.message_id,
                ),
                prov,
            )
        return added


def _lone_common_noun(title: str) -> bool:
    """"community", "joy": recurring, but too little to stand as an active concept alone."""
    return " " not in title.strip() and title.islower()


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _earliest(current: str | None, new: datetime | None) -> str | None:
    if new is None:
        return current
    if current is None or new < datetime.fromisoformat(current):
        return new.isoformat()
    return current


def _latest(current: str | None, new: datetime | None) -> str | None:
    if new is None:
        return current
    if current is None or new > datetime.fromisoformat(current):
        return new.isoformat()
    return current

