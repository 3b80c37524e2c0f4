"""Closed word classes the router reads grammatically: enumeration, deixis, exclusion, naming.

No thresholds here: a question either carries one of these markers or not.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from loci.kernel.lazyre import LazyPattern
from loci.kernel.tokens import is_cjk, spaced, tokenize

# questions that ask for a SET of projects
_ENUM = LazyPattern(
    r"\b(which|what|any|all|how many)\s+(of\s+)?(my|our|the|these|those)?\s*"
    r"((?!(?:this|that|its)\b)[\w-]+\s+){0,2}?(projects?|repos?|repositories|codebases?|packages?|libraries|scopes?|tools?)\b"
    # the asker's own projects by another noun: "which of my CLIs", "which of our services"
    r"|\b(which|how\s+many)\s+of\s+(my|our)\s+([\w-]+\s+){0,2}?"
    r"(apps|applications|services|crates|clis|programs|modules|frameworks)\b"
    r"|\bwhere\s+else\b|\bwhere\s+do\s+(i|we)\s+have\b|\bhave\s+(i|we)\s+ever\b|\bdid\s+(i|we)\s+ever\b|\bin\s+any\s+(of\s+)?(my|our)\b"
    r"|\bacross\s+(all\s+)?(my|our)\b|\bany\s+of\s+(my|our)\b|\bwhich\s+ones\b|\bother\s+(projects|repos)\b",
    re.I,
)
# the scaffolding words of an enumerative question; stripped before vocabulary evidence
_FRAME_WORDS = """project projects repo repos repository repositories codebase codebases package
    packages library libraries scope scopes tool tools my our which ones any all else ever other
    beside besides except excluding counting apart aside ignoring workspace""".split()
# compared with question tokens, so the words and their stems ("librari", "repositori")
ENUM_FRAME = frozenset(_FRAME_WORDS) | frozenset(t for w in _FRAME_WORDS for t in tokenize(w))

# pointing words: the question refers to a subject it never names
# the nouns a question calls a project by ("the app", "this repo")
PROJECT_NOUNS = ("app", "application", "project", "repo", "repository", "codebase", "package", "library", "tool",
                 "cli", "crate", "module", "service", "program")
_DEICTIC_STRONG = LazyPattern(
    r"\b(this|these|here)\b|\bthe\s+(" + "|".join(PROJECT_NOUNS) + r"|code\s*base"
    r")\b(?=\s*(?:[?.!,;:)]|$|(?:is|was|does|do|has|"
    r"have|uses?|in|on|for|with|under|and|or|locally|builds?|runs?|needs?|support|supports)\b))",
    re.I,
)
# "my app", "our project": the asker's own code, which uses the library the question is about
_DEICTIC_OWN = LazyPattern(
    r"\b(our|my)\s+(app|application|project|repo|repository|codebase|package|library|tool|cli|crate|service)\b",
    re.I)
_DEICTIC_WEAK = LazyPattern(r"\b(it|its|it's)\b"
                            # a follow-up that leans on the question before it: "and for async?", "what about Windows?"
                            r"|^\W*(?:and|but|also|what\s+about|how\s+about)\b", re.I)
# "is there a library that does this?": after a verb of doing, "this" is the task just described
_THIS_AS_TASK = LazyPattern(
    r"\b(?:do|does|did|doing|done|achieve|accomplish|handle|handles)\s+(?:this|that)\b(?=\s*[?.!,;:)]|\s*$)", re.I)
# "this error", "these warnings": what the asker sees (often pasted below), not a project
_THIS_AS_SEEN = LazyPattern(
    r"\b(?:this|these)\s+(?:errors?|warnings?|exceptions?|tracebacks?|stack\s*traces?|messages?|"
    r"crash(?:es)?|failures?|panics?)\b", re.I)

# "besides X", "not counting X", "other than X", "except X", "apart from X", "excluding X"
EXCLUDE_MARKERS = (r"besides", r"not\s+counting", r"other\s+than", r"except(?:\s+for)?",
                   r"apart\s+from", r"excluding", r"aside\s+from", r"but\s+not", r"ignoring")

NAME_FOLLOWERS = ("library", "package", "project", "module", "crate", "repo", "repository",
                  "framework", "codebase", "cli", "docs", "documentation", "source", "api",
                  # "the latest attrs release", "the flask version", "black's changelog"
                  "release", "releases", "version", "versions", "changelog")
# a word a project's name follows as a name: a preposition ("in click", "with fd"), or an auxiliary
# verb or subordinator whose subject it is ("can fd print", "does click support", "when fd lists")
NAME_PREFIXES = ("in", "with", "using", "use", "from", "for", "via", "into", "about", "of",
                 "can", "does", "do", "did", "will", "would", "should", "could", "when", "if", "is",
                 # the same prepositions in the languages questions come in most (fr, de, es, pt, it):
                 # without the multilingual extra only the name tells where "avec fd" belongs
                 "avec", "dans", "pour", "sur", "mit", "bei", "für", "con", "en", "para", "com", "em",
                 "usando", "utilisant", "mediante", "tramite")


def is_enumerative(question: str) -> bool:
    return bool(_ENUM.search(question))


def deixis(question: str) -> str | None:
    """'strong' for this/here/the project..., 'own' for my/our app..., 'weak' for a bare it/its or a
    follow-up leaning on an earlier question ("and for async?"),
    else None ("does this", "this error": a task or what the asker sees, no project). A strong
    pointer abstains unless a name or the cwd says which project; "my app"
    is the asker's own code (a content question about the library it uses routes on its
    content, and asked from inside a project it points there); "it" is usually anaphora."""
    if _DEICTIC_STRONG.search(_THIS_AS_SEEN.sub(" ", _THIS_AS_TASK.sub(" ", question))):
        return "strong"
    if _DEICTIC_OWN.search(question):
        return "own"
    if _DEICTIC_WEAK.search(question):
        return "weak"
    return None


def _alias_pattern(alias: str) -> str:
    """A use of ``alias`` as a word; searched in ``tokens.spaced`` text, where a name written against
    CJK text ("clickで") is a word of its own."""
    return r"(?<![\w@/.-])" + re.escape(alias) + r"(?![\w-]|\.\w)"


_INSTRUMENT = ("with", "by", "using", "via", "through")


def instrument_only(question: str, *aliases: str) -> bool:
    """Is every use of the names ``aliases`` the instrument of what the question asks ("packing my
    objects with msgpack", "a lock backed by Redis", "using click"), not its subject ("Why does
    Starlette ...", "In flask, ...", "the requests library")? False when none is used."""
    question = spaced(question)
    uses = [question[:m.start()] for alias in aliases if len(alias) >= 2
            for m in re.finditer(_alias_pattern(alias), question, re.I)]
    return bool(uses) and all(
        (re.findall(r"[\w']+", before.lower())[-1:] or [""])[0] in _INSTRUMENT for before in uses)


# what joins the names of a list: "click and jinja", "jinja, click or black", "click & jinja"
_JOINER = r"\s*(?:,\s*(?:and\s+|or\s+|&\s*)?|\s(?:and|or|&)\s+)\s*"
_QUOTE = r"['\"`]?"
# a list's determiner after the word that makes its first item a name: "use both click and jinja"
_LIST_DETERMINER = frozenset({"both", "either"})
# a verb of use, whose object is a project's name as after "with" ("depend on walkdir", "requires attrs")
_USE_OBJECT = LazyPattern(r"\b(?:uses|used|requir(?:e|es|ed|ing)|import(?:s|ed|ing)?|(?:depend(?:s|ed|ing)?|built|"
                          r"based|rel(?:y|ies|ying|ied))\s+(?:on|upon))\s+(?:(?:both|either)\s+)?$", re.I)


def _joined_to(before: str, after: str, joined: Mapping[str, str]) -> str | None:
    """How the name a use of an alias is listed with reads (``joined``: a name -> "named",
    "marked" or "excluded"), when the use is joined to it by "and", "or", "&" or a comma ("click and
    jinja", "jinja, click or black"); None when it is listed with no name. Marked or excluded wins."""
    found = set()
    for name, reading in joined.items():
        other = r"(?<![\w@/.-])" + re.escape(name) + r"(?![\w-]|\.\w)"
        if re.search(other + _QUOTE + _JOINER + _QUOTE + "$", before, re.I) \
                or re.match(_QUOTE + _JOINER + _QUOTE + other, after, re.I):
            found.add(reading)
    return next((r for r in ("excluded", "marked", "named") if r in found), None)


def listed_as_alternatives(question: str, names) -> bool:
    """Is a name of ``names`` listed with "or" ("click or jinja", "jinja, click or attrs", "either
    click or jinja")? Then any of the list will do; listed with "and" or commas alone, every one is asked."""
    question = spaced(question)
    for name in names:
        for m in re.finditer(_alias_pattern(name), question, re.I):
            joins = (re.search(r"[\w'\"`]" + _QUOTE + "(" + _JOINER + ")" + _QUOTE + "$", question[:m.start()]),
                     re.match(_QUOTE + "(" + _JOINER + r")" + _QUOTE + r"[\w'\"`]", question[m.end():]))
            if any(j and re.search(r"\bor\b", j.group(1), re.I) for j in joins):
                return True
    return False


def name_uses(question: str, alias: str, joined: Mapping[str, str] | None = None) -> tuple[int, int, bool, int]:
    """Count (strong, bare, excluded, marked) uses of ``alias`` in ``question``.

    A use is strong when it reads as a name: code-formatted or quoted, capitalised
    (not in capitals: "CLI" is an acronym) against a lower-case alias, at the head of the question followed by ':' or ',',
    after 'in/with/using/for...' (also past "both" or "either": "use both click and ..."), before
    'library/package/...', or as "X's".
    ``excluded`` is True when the name follows 'besides', 'not counting', ...
    ``marked``: the strong uses that read as a name by more than a preposition before them
    ("with backoff" may mean backoff, "the requests library" cannot mean anything else).
    ``joined``: other names the question is known to use as names, each with how it reads
    ("named", "marked" or "excluded"): a use listed with one of them by "and", "or" or a comma
    reads as that one does ("use click and jinja": jinja is a name as click is; "besides flask and
    starlette": both are set aside).
    """
    strong = bare = marked = 0
    excluded = False
    question = spaced(question)
    pat = re.compile(_alias_pattern(alias), re.I)
    for m in pat.finditer(question):
        a, b = m.span()
        before = question[:a]
        after = question[b:]
        surface = m.group(0)
        prev_words = re.findall(r"[\w']+", before.lower())[-3:]
        if prev_words[-1:] and prev_words[-1] in _LIST_DETERMINER:
            prev_words = prev_words[:-1]
        prev = prev_words[-1] if prev_words else ""
        nxt = re.match(r"\s*([\w']+)", after)
        nxt_word = nxt.group(1).lower() if nxt else ""
        listed = _joined_to(before, after, joined) if joined else None
        if listed == "excluded" or re.search(r"(?:" + "|".join(EXCLUDE_MARKERS) + r")\s+(?:the\s+)?['\"`]?$",
                                               before, re.I):
            excluded = True
            continue
        quoted = before[-1:] in "`'\"" and after[:1] in "`'\""
        # "Click" against the alias "click" is a name; "CLI" or "FD" in capitals is an acronym
        capitalised = (surface != alias.lower() and alias == alias.lower() and surface[:1].isupper()
                       and not (surface.isupper() and len(surface) > 1))
        at_head = not before.strip() and after[:1] in (":", ",")
        possessive = after[:2] in ("'s", "’s")
        prefix = (prev in NAME_PREFIXES and (before.rstrip()[-1:].isalpha() or before.rstrip().endswith("the"))
                  or bool(_USE_OBJECT.search(before)))
        follower = nxt_word in NAME_FOLLOWERS
        sentence_start = not before.strip() or before.rstrip()[-1:] in ".?!"
        unmistakable = quoted or possessive or follower or at_head or (capitalised and not sentence_start)
        # in Chinese, Japanese or Korean prose a word in Latin letters is a name ("clickで": with click)
        among_cjk = is_cjk(before.rstrip()[-1:]) or is_cjk(after.lstrip()[:1])
        if unmistakable or prefix or listed or among_cjk:
            strong += 1
            marked += unmistakable or listed == "marked"
        else:
            bare += 1
    return strong, bare, excluded, marked


_NEGATION = LazyPattern(
    r"\b(?:aren't|are\s+not|isn't|is\s+not|not|don't|do\s+not|doesn't|does\s+not|never|without|"
    r"no\s+longer)\s+(?:(?:written|built|made|implemented|based|coded|using|use|uses|in|on|with|"
    r"depend|depending|rely|relying|a|an|the)\s+){0,3}([\w.+#-]+)", re.I)


# a declared dependency is asked about with a verb of use: "built on click", "pull in click",
# "depend on", "use", "import", "as a dependency"; without one, a library's name is a topic
_USE_FRAME = LazyPattern(
    r"\b(us(e|es|ed|ing)|depend(s|ed|ing)?|dependenc(y|ies)|built\s+(on|with|upon)|based\s+on|"
    r"pull(s|ed|ing)?\s+in|requir(e|es|ed|ing)|import(s|ed|ing)?|rel(y|ies|ying)\s+on|on\s+top\s+of)\b", re.I)


def asks_about_use(question: str) -> bool:
    return bool(_USE_FRAME.search(question))


_NO_DEPENDENCIES = LazyPattern(
    r"\b(zero|no|without(\s+any)?|free\s+of)\s+([\w-]+\s+){0,3}?dependenc(y|ies)\b|\bdependency[\s-]free\b", re.I)


def asks_for_no_dependencies(question: str) -> bool:
    """ "with zero runtime dependencies", "without any dependencies", "dependency-free"."""
    return bool(_NO_DEPENDENCIES.search(question))


def negated_words(question: str) -> list[str]:
    """Words a question asks to be absent: "aren't written in Python" -> ["Python"]."""
    return [m.group(1) for m in _NEGATION.finditer(question)]


_ASKS_WHY = LazyPattern(r"\b(?:why|how\s+come|what\s+(?:was|is)\s+the\s+(?:reason|rationale|motivation))\b", re.I)


def asks_why(question: str) -> bool:
    """Does the question ask for a reason ("why did X stop ...", "what was the rationale for ...")?"""
    return bool(_ASKS_WHY.search(question))


# a question about a change: what changed, since when, in which version, what was added, removed,
# deprecated or broken, how to upgrade (a changelog's own subject)
_ASKS_CHANGE = LazyPattern(
    r"\b(?:chang(?:e|ed|es|ing|elog)|releas(?:e|ed|es)|version(?:s|ed)?|deprecat\w*|remov(?:ed|al)|renamed|"
    r"upgrad\w*|migrat\w*|breaking|regressions?|since|added|introduced|dropped|history|what's\s+new|"
    r"v?\d+\.\d+(?:\.\d+)*)\b", re.I)


def asks_about_change(question: str) -> bool:
    """Does the question ask about a change (what changed, since which version, what was removed,
    how to upgrade)? A changelog answers it; otherwise the docs say how things work now."""
    return bool(_ASKS_CHANGE.search(question))


# "what is this project?", "what does fd do?", "how do I use this?": the question asks what a
# project is or how it is used, and its subject is the whole rest of the question (a name, a
# pointer, or nothing: "show me a quick example" asked inside a project)
_SUBJECT = r"(?P<s>[\w@./-]+(?:\s+[\w@./-]+){0,3}?)"
_LEAD_WORDS = ("so", "and", "ok", "okay", "hi", "hey", "please")
_LEAD = r"^(?:" + "|".join(_LEAD_WORDS) + r")?[\s,]*"
_SUBJECT_T = _SUBJECT.replace("?P<s>", "?P<t>")
_RECENT = r"(?:the\s+)?(?:latest|last|newest|most\s+recent|recent|current)\s+"
_WHAT = "what"                                       # what, what's, whats
_RECENT_OPENERS = "show give the latest last newest most recent current"
# per kind, (the words one of its questions can open with after the lead, its pattern): a pattern
# is compiled and tried only for a question opening so (a one-shot question compiled all 28)
_ABOUT = {
    "changes": (
        (_WHAT, r"what(?:'s|\s+is|\s+(?:has\s+)?changed)\s+(?:new\s+)?(?:in|with)\s+" + _RECENT + r"(?:" + _SUBJECT_T
         + r"\s+)?(?:version|release)(?:\s+of\s+" + _SUBJECT + r")?"),
        (_WHAT, r"what(?:'s|\s+is)\s+new(?:\s+(?:in|with)\s+" + _SUBJECT + r")?"),
        (_RECENT_OPENERS, r"(?:(?:show|give)\s+me\s+)?" + _RECENT
         + r"(?:changes|release\s+notes|changelog(?:\s+entr(?:y|ies))?)(?:\s+(?:of|for|in)\s+" + _SUBJECT + r")?"),
        # "what's the latest release?", "what was in the last release of click?"
        (_WHAT, r"what(?:'s|\s+is|\s+was)\s+(?:in\s+)?" + _RECENT + r"release(?:\s+of\s+" + _SUBJECT + r")?"),
        (_WHAT + " the", r"(?:what(?:'s|\s+is)\s+(?:in\s+)?)?the\s+changelog(?:\s+of\s+" + _SUBJECT + r")?"),
        ("any", r"any\s+(?:recent|new)\s+changes(?:\s+(?:in|to)\s+" + _SUBJECT + r")?"),
    ),
    "recent": (
        (_WHAT, r"what\s+(?:has\s+)?changed\s+(?:recently|lately)(?:\s+in\s+" + _SUBJECT + r")?"),
        (_WHAT, r"what(?:'s|\s+has)\s+changed(?:\s+in\s+" + _SUBJECT + r")?"),
        (_WHAT, r"what(?:'s|\s+has)\s+been\s+(?:happening|going\s+on|worked\s+on|changing)(?:\s+(?:in|with|on)\s+"
         + _SUBJECT + r")?(?:\s+(?:recently|lately))?"),
        (_RECENT_OPENERS, r"(?:(?:show|give)\s+me\s+)?" + _RECENT + r"(?:commits|work|activity)(?:\s+(?:of|for|in|on)\s+"
         + _SUBJECT + r")?"),
    ),
    "version": (
        (_WHAT + " which", r"(?:what|which)\s+version\s+(?:is|of)\s+" + _SUBJECT + r"(?:\s+is\s+this)?"),
        (_WHAT, r"what(?:'s|\s+is)\s+the\s+(?:(?:current|latest)\s+)?version(?:\s+number)?(?:\s+of\s+" + _SUBJECT + r")?"),
    ),
    # how the code is laid out: its main modules, its architecture (before "overview": "what are X")
    "layout": (
        (_WHAT, r"what(?:'s|\s+is|\s+are)\s+(?:the\s+)?(?:main\s+|key\s+|core\s+|important\s+)?(?:modules|packages|"
                r"components|source\s+files|parts\s+of\s+the\s+code)(?:\s+(?:of|in)\s+" + _SUBJECT + r")?(?:\s+here)?"),
        (_WHAT, r"what(?:'s|\s+is)\s+the\s+(?:architecture|code\s+structure|code\s+layout|layout\s+of\s+the\s+code)"
                r"(?:\s+of\s+" + _SUBJECT + r")?"),
        ("how", r"how\s+is\s+" + _SUBJECT + r"\s+(?:organi[sz]ed|structured|laid\s+out|architected|put\s+together)"),
        ("show give a an overview the code project repo repository source",
         r"(?:(?:show|give)\s+me\s+)?(?:an?\s+)?(?:overview\s+of\s+)?(?:the\s+)?(?:code|project|repo(?:sitory)?|"
         r"source)\s+(?:structure|layout|organi[sz]ation|architecture)(?:\s+of\s+" + _SUBJECT + r")?"),
    ),
    "overview": (
        (_WHAT, r"what(?:'s|\s+is)\s+the\s+(?:point|purpose|goal|aim|idea|use)\s+(?:of|behind)\s+" + _SUBJECT),
        (_WHAT, r"what(?:'s|\s+is)\s+in\s+" + _SUBJECT),                            # "what's in this repo?"
        (_WHAT, r"what\s+can\s+(?:i|we|you|one)\s+do\s+with\s+" + _SUBJECT),
        ("a overview summary tl", r"(?:an?\s+)?(?:overview|summary|tl;?\s*dr)"),
        # before "what are X": "the main features" are the project's, not a subject
        (_WHAT, r"what(?:'s|\s+is|\s+are)\s+(?:the\s+)?(?:main\s+|key\s+|core\s+)?features(?:\s+of\s+" + _SUBJECT + r")?"),
        (_WHAT, r"what(?:'s|\s+is|\s+are)\s+" + _SUBJECT + r"(?:\s+(?:all\s+)?about|\s+(?:used|meant|good)\s+for|\s+for)?"),
        (_WHAT, r"what\s+(?:does|do|can|did|will)\s+" + _SUBJECT + r"\s+do"),
        (_WHAT, r"what\s+(?:problems?|need)\s+(?:does|do|did)\s+" + _SUBJECT + r"\s+(?:solve|address|fill)"),
        ("why", r"why\s+(?:does|do)\s+" + _SUBJECT + r"\s+exist"),
        ("can tell describe summari introduce explain",
         r"(?:can\s+you\s+)?(?:tell\s+me\s+about|describe|summari[sz]e|introduce(?:\s+me\s+to)?|explain(?:\s+what)?)\s+"
         + _SUBJECT + r"(?:\s+(?:is|does|do))?"),
        ("give a", r"(?:give\s+(?:me\s+)?)?an?\s+(?:overview|summary|introduction|intro|description)(?:\s+(?:of|to)\s+"
         + _SUBJECT + r")?"),
        ("how", r"how\s+would\s+you\s+describe\s+" + _SUBJECT),
    ),
    "usage": (
        ("how", r"how\s+(?:do|can|should|would)\s+(?:i|we|you|one)\s+(?:use|run|get\s+started(?:\s+with)?|start\s+(?:with|using)|"
         r"begin\s+(?:with|using))(?:\s+" + _SUBJECT + r")?"),
        ("how", r"how\s+to\s+(?:use|get\s+started(?:\s+with)?|start\s+using)(?:\s+" + _SUBJECT + r")?"),
        ("how get", r"(?:how\s+(?:do|can)\s+(?:i|we)\s+)?get(?:ting)?\s+started(?:\s+with\s+" + _SUBJECT + r")?"),
        ("where", r"where\s+(?:do|should|can)\s+(?:i|we)\s+(?:start|begin)(?:\s+with\s+" + _SUBJECT + r")?"),
        ("show give a some quick simple basic minimal short small example usage tutorial",
         r"(?:(?:show|give)\s+me\s+)?(?:an?\s+|some\s+)?(?:quick|simple|basic|minimal|short|small)?\s*"
         r"(?:example|usage\s+example|quick\s*start|tutorial)s?(?:\s+(?:of|for)\s+(?:using\s+)?" + _SUBJECT + r")?"),
    ),
}
ABOUT_MAX_WORDS = 12
_ABOUT_LEADS = frozenset("""so and ok okay hi hey please what what's whats which how why tell can describe summarise
    summarize introduce explain give an a some show get getting quick simple basic minimal short small example
    examples tutorial quickstart usage the latest last newest recent any where overview summary tl tldr
    tl;dr""".split())
_ABOUT_PATTERNS = tuple((kind, tuple(openers.split()), LazyPattern(_LEAD + p + r"$", re.I))
                        for kind, ps in _ABOUT.items() for openers, p in ps)


def _openings(text: str) -> list[str]:
    """The question (lower case) as each of its readings of ``_LEAD`` leaves it: whole, and past a
    lead word it starts with; a pattern can match only where one of them starts with its opener."""
    low = text.lower()
    return [low[len(lead):].lstrip(" ,") for lead in ("", *_LEAD_WORDS) if low.startswith(lead)]
# what a subject may be besides a project's name: a pointer, a determiner, a noun for a project
_POINTERS = frozenset("this it here".split())
_DETERMINERS = frozenset("the this that my our".split())
_SUBJECT_NOUNS = frozenset(PROJECT_NOUNS) | {"lib", "framework", "thing", "code"}


# one plain question of each kind: a question in another language is of that kind when its meaning
# (the multilingual encoder's) is this close to one of them (loci.query.ask._foreign_about)
ABOUT_EXAMPLES = (("overview", "what does this project do?"), ("overview", "what is this project?"),
                  ("overview", "what is this project for?"), ("usage", "how do I use this?"),
                  ("usage", "how do I use this project?"), ("usage", "show me a quick example"),
                  ("changes", "what's new in the latest version?"), ("changes", "what's new in this project?"),
                  ("recent", "what changed recently?"), ("version", "what version is this?"))


# "project" in the languages whose short questions carry no function word the language test knows
# ("Was macht dieses Projekt?", "Co robi ten projekt?", "Bu proje ne yapar?"); not the English word
_PROJECT_ABROAD = LazyPattern(r"\b(?:projekt\w*|projet\w*|proyecto\w*|progett\w*|projeto\w*|projecte\w*|"
                              r"proje(?:si|ler|yi|nin)?)\b|проект|项目|項目|プロジェクト|프로젝트", re.I)


def names_a_project_abroad(question: str) -> bool:
    """The question says "project" in another language: it may ask about one, whatever the language
    test makes of its few words."""
    return _PROJECT_ABROAD.search(question) is not None


def about_project(question: str) -> tuple[str, str] | None:
    """("overview", subject) for a question that asks what a project is ("what does this project
    do?" -> "this project", "what is tqdm?" -> "tqdm"), ("usage", subject) for one that asks how
    it is used ("how do I use this?", "show me a quick example": subject ""), ("changes", subject)
    for what a release changed ("what's new in the latest version?"), ("recent", subject) for
    what changed lately ("what changed recently?"), ("version", subject) for which
    version it is, else None: any other word in the question makes it a question about
    something the project does."""
    text = " ".join(question.split()).rstrip(" ?.!")
    words = text.lower().split()
    # the longest frame ("so can you tell me about", "show me a quick usage example of using")
    # and a subject of four words: a longer question, or one opening otherwise, is about content
    if not words or len(words) > ABOUT_MAX_WORDS or words[0].strip(",") not in _ABOUT_LEADS or is_enumerative(text):
        return None
    openings = _openings(text)
    for kind, openers, pattern in _ABOUT_PATTERNS:
        if not any(o.startswith(openers) for o in openings):
            continue
        m = pattern.match(text)
        if m:
            found = m.groupdict()
            return kind, found.get("s") or found.get("t") or ""
    return None


def is_about(subject: str, names, *, is_cwd: bool) -> bool:
    """Is ``subject`` (``about_project``) the project whose ``names`` are given? It is when it
    spells one of them ("the gizmo library"), or points ("this project", "it") or is left
    unsaid ("show me an example") and the question is asked from inside that project (``is_cwd``)."""
    words = subject.lower().split()
    known = {n.lower() for n in names}
    if " ".join(w for w in words if w not in _DETERMINERS) in known:   # "cli" names urfave/cli
        return True
    named = [w for w in words if w not in _DETERMINERS and w not in _POINTERS and w not in _SUBJECT_NOUNS]
    if not named:
        return is_cwd and (not words or any(w in _DETERMINERS or w in _POINTERS for w in words))
    return " ".join(named) in known


def adjacent_pairs(question: str) -> list[str]:
    """Each two neighbouring words joined as a qualified name's token ("click option" -> ``click.option``)."""
    words = re.findall(r"[\w-]+", question)
    return [t[0] for a, b in zip(words, words[1:]) if (t := tokenize(f"{a}.{b}")) and "." in t[0]]


def next_words(question: str, alias: str) -> list[str]:
    """The word right after each bare use of ``alias``."""
    pat = re.compile(_alias_pattern(alias) + r"\s+([\w-]+)", re.I)
    return [m.group(1) for m in pat.finditer(spaced(question))]


# a word written as code: in backticks, called with (), qualified (a.b, a::b), snake_case or camelCase
_CODE_SPAN = LazyPattern(r"`([^`\s]+)`")
_WORDISH = LazyPattern(r"[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*(?:\(\))?")


def identifiers(question: str) -> list[str]:
    """The words of ``question`` written as code, in order: what it asks about by its code name.

    Backticked or called (``parse()``) words always; otherwise snake_case, dotted or
    ``::`` qualified and lowerCamel words. An UpperCamel word alone ("JavaScript",
    "GitHub") is a product name as often as a class, so it counts only in backticks or
    with ``()``, or in a question about definitions and calls (the caller decides)."""
    out: list[str] = []
    spans = {m.group(1).rstrip("()") for m in _CODE_SPAN.finditer(question)}
    for m in _WORDISH.finditer(question):
        raw = m.group(0)
        word = raw[:-2] if raw.endswith("()") else raw
        if len(word) < 3 or _FILE_NAME.search(word):   # pyproject.toml, Node.js: files and products
            continue
        if word in spans or raw.endswith("()") or "_" in word.strip("_") or "." in word or "::" in word \
                or word[:1].islower() and any(c.isupper() for c in word[1:]) \
                or word.startswith("__") and word.endswith("__"):
            out.append(word)
    return out


_NAME_SHAPED = LazyPattern(r"\.?[\w$][\w$.\-]*[\w$]|\.?[\w$]")   # a dotfile or an extension keeps its dot


def name_shaped_words(question: str) -> list[str]:
    """The words ``question`` writes as names rather than everyday words, in its order: with a
    digit, an underscore, an inner dot, or two capitals ("NO_COLOR", "BM25", "8080", "MB", ".env").
    "turn" or "friendly" is none, however few projects use it, and neither is a compound written
    with a hyphen ("human-friendly", "command-line", German's "Node-Prozess")."""
    return [w for w in (m.group(0) for m in _NAME_SHAPED.finditer(question))
            if any(c.isdigit() for c in w) or "_" in w or "." in w
            or any(sum(c.isupper() for c in part) >= 2 for part in w.split("-"))]


def name_shaped_tokens(question: str) -> set[str]:
    """The tokens of ``name_shaped_words``."""
    return {t for w in name_shaped_words(question) for t in tokenize(w)}


_QUOTED = LazyPattern(r"""(?<![\w'])'([^'\n]{1,60}?)'(?!\w)|"([^"\n]{1,60}?)"|`([^`\n]{1,60}?)`""")


def quoted_strings(question: str) -> tuple[str, ...]:
    """The strings the question quotes ('18.0', "too many arguments", `--offset`), in its order:
    text the asker has seen, an apostrophe ("it's", "users'") being none."""
    out = []
    for m in _QUOTED.finditer(question):
        text = next(g for g in m.groups() if g is not None).strip()
        if text:
            out.append(text)
    return tuple(out)


def unquoted(question: str) -> str:
    """``question`` with the strings it quotes in quotation marks blanked: what the asker has seen or
    typed ('install' typed as 'instal'), not what the question asks about. Code in backticks stays
    (`npm test`, `CONTRIBUTING.md` name what is asked)."""
    if "'" not in question and '"' not in question:
        return question
    return _QUOTED.sub(lambda m: m.group(0) if m.group(0).startswith("`") else " ", question)


_WHERE = LazyPattern(r"\bwhere\b|\bwhich\s+(?:file|module|class|package)\b|\bin\s+what\s+file\b", re.I)
_FILE_NAME = LazyPattern(r"\.(?:py|js|mjs|cjs|ts|go|rs|toml|json|ya?ml|md|rst|txt|cfg|ini|lock|html|css)$", re.I)


def asks_where(question: str) -> bool:
    """Does the question ask for a location ("where is...", "which file...")?"""
    return bool(_WHERE.search(question))


def upper_camel_words(question: str) -> list[str]:
    """UpperCamel words (``PluginManager``, but also ``JavaScript``): class names when the
    question asks where something is defined or what calls it."""
    return [w for w in re.findall(r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b", question)]


# --- the structural question (structure.query) -----------------------------------------

_CALLERS = LazyPattern(
    r"\b(?:what|who|which(?:\s+\w+){0,2})\s+(?:calls?|uses?|invokes?|reach(?:es)?|triggers?)\b"
    r"|\bcalled\s+(?:from|by|in)\b|\bcallers?\b|\bcall[\s-]*(?:sites?|chain)\b|\bused\s+(?:by|in|from)\b"
    r"|\bwhere\s+(?:is|are)\s+\S+\s+(?:called|used|invoked)\b|\binvoked\s+(?:from|by)\b")
_CALLEES = LazyPattern(
    r"\bwhat\s+(?:\w+\s+)?(?:does|do|did)\s+\S+(?:\s+\S+)?\s+(?:call|invoke|use)\b"
    r"|\bwhich\s+\w+\s+(?:does|do|did)\s+\S+(?:\s+\S+)?\s+(?:call|invoke|use)\b"
    r"|\bcallees?\b|\bcalls\s+made\s+by\b|\bwhat\s+[\w.]+\(\)\s+calls\b")
_DEFINE = LazyPattern(
    r"\bdefin(?:ed|es|ition)\b|\bdeclared?\b|\bimplemented\b|\blocated\b"
    r"|\bwhere\s+(?:does|do|did)\s+\S+(?:\s+\S+)?\s+live\b|\bwhere\s+(?:is|are)\b(?!.*\b(?:called|used|invoked)\b)")
_CHAIN = LazyPattern(r"\bcall[\s-]*(?:chain|path|graph|tree)s?\b|\breach(?:es|ed|ing)?\b|\bindirect(?:ly)?\b"
                    r"|\btransitive(?:ly)?\b|\bcaller'?s\s+callers?\b|\bhow\s+(?:do(?:es)?\s+)?\w+\s+get\s+to\b")

@dataclass(frozen=True)
class Shape:
    define: bool = False
    callers: bool = False
    callees: bool = False
    chain: bool = False      # "the call chain that reaches X": callers' callers too, as second hops

    @property
    def open(self) -> bool:
        return not (self.define or self.callers or self.callees)


def question_shape(question: str) -> Shape:
    """Which of the three structural questions (any number of them) the wording asks."""
    q = question.lower()
    return Shape(define=bool(_DEFINE.search(q)), callers=bool(_CALLERS.search(q)),
                 callees=bool(_CALLEES.search(q)), chain=bool(_CHAIN.search(q)))


# a programming language or its runtime, as a question names the one the asker works in ("my Node
# CLI", "a Go app", "in Rust"): the language fact (``loci_pipeline.facts.LANGUAGES``) it means.
# Names that are also plain words ("Go", "Rust", "Node", "Swift") count only capitalised and not
# first in the question; after "to", "into", "than", "like" a language is another one than the
# project's ("porting it to Rust", "reach into Python internals")
ECOSYSTEMS = {"python": ("python",), "pypi": ("python",), "rust": ("rust",), "go": ("go",), "golang": ("go",),
              "javascript": ("javascript", "typescript"), "typescript": ("typescript", "javascript"),
              "node": ("javascript", "typescript"), "node.js": ("javascript", "typescript"),
              "nodejs": ("javascript", "typescript"), "npm": ("javascript", "typescript"),
              "ruby": ("ruby",), "java": ("java",), "kotlin": ("kotlin",), "swift": ("swift",),
              "php": ("php",), "scala": ("scala",), "elixir": ("elixir",), "lua": ("lua",), "zig": ("zig",),
              "shell": ("shell",), "bash": ("shell",), "c++": ("cpp",), "cpp": ("cpp",), "c#": ("csharp",),
              "csharp": ("csharp",), "haskell": ("haskell",), "ocaml": ("ocaml",), "dart": ("dart",),
              "julia": ("julia",), "perl": ("perl",), "erlang": ("erlang",), "clojure": ("clojure",),
              "f#": ("fsharp",), "nim": ("nim",)}
_PLAIN_WORD_LANGUAGES = frozenset({"go", "rust", "node", "swift", "java", "lua", "python", "ruby", "scala", "zig",
                                   "shell", "bash", "dart", "julia", "perl", "nim"})
# language facts spelled as everyday words: the word is the fact only where the question names the
# language ("written in Go", "my Shell scripts"), not in "go beyond", "shell tab-completion"
PLAIN_WORD_FACTS = frozenset({"go", "rust", "swift", "shell", "dart", "julia", "nim"})
_ECOSYSTEM = LazyPattern(r"(?<![\w`.\-/])(" + "|".join(sorted(map(re.escape, ECOSYSTEMS), key=len, reverse=True))
                         + r")(?![\w`\-/]|\.\w)", re.I)
_WRITTEN_IN = LazyPattern(r"\b(?:written|coded|implemented)\s+in\s+(?:pure\s+)?$", re.I)
_OTHER_LANGUAGE = LazyPattern(r"\b(?:to|into|than|like|unlike|vs\.?|versus)\s+$", re.I)


def _ecosystem_matches(text: str) -> list[re.Match]:
    """Where ``text`` (its code spans blanked) names an ecosystem (``ecosystem_words``)."""
    out = []
    for m in _ECOSYSTEM.finditer(text):
        word = m.group(1)
        if (word.lower() in _PLAIN_WORD_LANGUAGES and (not word[0].isupper() or not text[:m.start()].strip())
                and not _WRITTEN_IN.search(text[max(0, m.start() - 20):m.start()])):
            continue
        if _OTHER_LANGUAGE.search(text[max(0, m.start() - 12):m.start()]):
            continue
        out.append(m)
    return out


def ecosystem_words(question: str) -> tuple[str, ...]:
    """The words with which the question says which ecosystem the asker works in ("In my Node
    CLI": "Node"; "a Go command-line app", "my Python script", "written in go"), in question order."""
    return tuple(m.group(1) for m in _ecosystem_matches(_CODE_SPAN.sub(" ", question)))


# the language a set's members are written in: "my Kotlin projects", "Rust crates", "written in Go"
_BEFORE_SET_NOUN = LazyPattern(r"\s+(?:[\w-]+\s+)?(?:projects?|repos?|repositories|codebases?|packages?|librar(?:y|ies)|"
                               r"tools?|apps?|applications?|services?|crates?|clis?|programs?|modules?|frameworks?|"
                               r"scripts?)\b", re.I)
_SET_WRITTEN_IN = LazyPattern(r"\b(?:(?:written|coded|implemented|built|made|developed)\s+in\s+(?:pure\s+)?|"
                              r"(?:are|is)\s+(?:in\s+)?)$", re.I)


def set_languages(question: str) -> tuple[str, ...]:
    """The words naming the language an enumeration's members are to be written in ("which of my
    Kotlin projects", "my Python CLI tools", "written in Rust or Go"), in question order: an
    ecosystem word (``ecosystem_words``) before a noun for projects, after "written in" or "are", or
    listed with such a word ("Rust or Go"). Not a language the question only mentions ("ship
    Kotlin bindings", "called from Python")."""
    text = _CODE_SPAN.sub(" ", question)
    found = _ecosystem_matches(text)
    asks = [bool(_BEFORE_SET_NOUN.match(text, m.end()) or _SET_WRITTEN_IN.search(text[max(0, m.start() - 30):m.start()]))
            for m in found]
    for _ in found:   # a language listed with one the set is written in is one too ("Rust or Go")
        for i, (a, b) in enumerate(zip(found, found[1:])):
            if asks[i] != asks[i + 1] and re.fullmatch(_JOINER, text[a.end():b.start()]):
                asks[i] = asks[i + 1] = True
    return tuple(m.group(1) for m, asked in zip(found, asks) if asked)


def named_languages(question: str) -> frozenset[str]:
    """The language facts of the ecosystem the question names (``ecosystem_words``): empty when
    it names none."""
    return frozenset(lang for word in ecosystem_words(question) for lang in ECOSYSTEMS[word.lower()])
