"""A question-about-the-project pattern is tried only for a question that opens as it can: the
guard changes no reading, it only spares a one-shot process compiling patterns that cannot match."""
import itertools
import json
from pathlib import Path

from loci.query import grammar

ROOT = Path(__file__).resolve().parents[1]
LEADS = ["", "so ", "so, ", "ok ", "okay, ", "hey ", "please ", "and "]
FRAMES = ["what does {s} do", "what is {s}", "what's {s} for", "what are {s} about", "what's in {s}",
          "how do I use {s}", "how to use {s}", "how can we get started with {s}", "getting started with {s}",
          "where do I start with {s}", "show me a quick example of {s}", "some examples for {s}", "quickstart",
          "tutorial", "what's new in {s}", "what's new in the latest version of {s}", "the latest changes in {s}",
          "give me the recent commits of {s}", "what changed recently in {s}", "what's been happening in {s}",
          "what version is {s}", "which version of {s} is this", "what's the current version of {s}",
          "the changelog of {s}", "any new changes in {s}", "tl;dr", "an overview of {s}", "a summary",
          "can you tell me about {s}", "describe {s}", "summarize {s}", "explain what {s} does",
          "why does {s} exist", "how would you describe {s}", "what problems does {s} solve",
          "what can I do with {s}", "what's the point of {s}", "what are the main features of {s}",
          "what was in the last release of {s}", "most recent changes", "current work on {s}",
          "give me an overview of {s}", "give an introduction to {s}", "a description of {s}"]
SUBJECTS = ["this project", "it", "tqdm", "the gizmo library", "this"]


def _unguarded(question: str):
    text = " ".join(question.split()).rstrip(" ?.!")
    words = text.lower().split()
    if not words or len(words) > grammar.ABOUT_MAX_WORDS or words[0].strip(",") not in grammar._ABOUT_LEADS \
            or grammar.is_enumerative(text):
        return None
    for kind, _openers, pattern in grammar._ABOUT_PATTERNS:
        m = pattern.match(text)
        if m:
            found = m.groupdict()
            return kind, found.get("s") or found.get("t") or ""
    return None


def _questions():
    yield from (lead + frame.format(s=s) + end for lead, frame, s, end
                in itertools.product(LEADS, FRAMES, SUBJECTS, ("?", "")))
    yield from (q for _kind, q in grammar.ABOUT_EXAMPLES)
    for path in sorted((ROOT / "bench" / "data").glob("*questions*.jsonl")):
        yield from (json.loads(line)["question"] for line in path.read_text().splitlines() if line.strip())


def test_the_openers_guard_changes_no_reading_of_a_question_about_the_project():
    questions = list(_questions())
    read = [grammar.about_project(q) for q in questions]
    assert read == [_unguarded(q) for q in questions]
    assert sum(r is not None for r in read) > len(FRAMES) * len(LEADS)   # the frames are read as such


def test_a_content_question_compiles_no_pattern_of_the_project_kinds_it_cannot_open_as():
    fresh = [(k, o, type(p)(p.pattern, p.flags)) for k, o, p in grammar._ABOUT_PATTERNS]
    saved, grammar._ABOUT_PATTERNS = grammar._ABOUT_PATTERNS, tuple(fresh)
    try:
        assert grammar.about_project("How do I stream a large response body in chunks?") is None
        compiled = [o for _k, o, p in grammar._ABOUT_PATTERNS if p._compiled is not None]
        assert compiled and all("how" in o for o in compiled) and len(compiled) < len(fresh) // 3
    finally:
        grammar._ABOUT_PATTERNS = saved
