"""Do questions about a project itself open with the file that answers them?

    python bench/overview.py --corpus DIR [--home $HOME_22] [--kind overview usage changes recent version]

Asks each kind's questions (plain ways of asking what a project is, how to use it, what is new
in its latest release, what changed recently, which version it is) from inside every repository
folder under ``--corpus`` whose name is a scope of the home, as `loci ask` does from a checkout,
and counts the answers whose first passage comes from where a project keeps that answer: its
top-level README (what it is); a README section or docs page on usage, quick start, tutorial or
examples, else the README (how to use it); its changelog, else a commit (what is new); a commit
(what changed lately); its manifest or changelog (which version). The other files such a question
matches by its words (CONTRIBUTING, the code of conduct, the licence, an old changelog entry)
say something else. Prints one line per answer that does not, then the count per kind, and how
many of the routes name the project alone (another project beside it is another's answer).
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import inputs  # noqa: E402
from bench.stamp import stamp  # noqa: E402

QUESTIONS = {
    "overview": ("what does this project do?", "what is this project for?", "what is this?",
                 "what problem does this library solve?",
                 # (session 15)
                 "give me an overview", "explain this codebase", "what are the main features?"),
    "usage": ("how do I use this?", "show me a quick example", "how do I get started?",
              "usage examples", "how do I run it?"),
    "changes": ("what's new in the latest version?", "show me the latest release notes", "what's the latest release?"),
    "recent": ("what changed recently?",),
    "version": ("what version is this?",),
}
# the same kinds asked in other languages (read by the multilingual encoder's meaning: a home with
# the multilingual extra and its store); --foreign asks these instead
FOREIGN = {
    "overview": ("¿Qué hace este proyecto?", "Qu'est-ce que fait ce projet ?", "Cosa fa questo progetto?",
                 "O que este projeto faz?", "Что делает этот проект?", "这个项目是做什么的？",
                 "このプロジェクトは何をしますか？",
                 # (session 15) German, Polish, Turkish, Dutch: few or no function words the language test knows
                 "Was macht dieses Projekt?", "Wozu dient dieses Projekt?", "Co robi ten projekt?",
                 "Bu proje ne yapar?", "Wat doet dit project?"),
    "usage": ("¿Cómo uso esto?", "Comment l'utiliser ?", "如何使用这个？",
              "Wie benutze ich dieses Projekt?", "¿Cómo uso este proyecto?", "Come si usa questo progetto?"),
    "changes": ("¿Qué hay de nuevo en la última versión?", "Quoi de neuf dans la dernière version ?",
                "Was ist neu in diesem Projekt?"),
}
_README = re.compile(r"(?i)^readme")
_USAGE_PAGE = re.compile(r"(?i)(quick[-_]?start|getting[-_]started|usage|tutorial[\w-]*|examples?)\.(md|rst|txt)$")
_CHANGELOG = re.compile(r"(?i)(^|/)(change(log|s)|history|news|release[-_]?notes)[\w.-]*$")
_MANIFEST = re.compile(r"(?i)^(pyproject\.toml|package\.json|cargo\.toml|setup\.cfg|setup\.py|go\.mod)$")


def right_place(kind: str, path: str) -> bool:
    """Is ``path`` (a first passage's source) where a project keeps the answer to ``kind``?"""
    top_readme = "/" not in path and bool(_README.match(path))
    commit = path.startswith("commit:")
    return {"overview": top_readme,
            "usage": top_readme or bool(_USAGE_PAGE.search(path)),
            "changes": bool(_CHANGELOG.search(path)) or commit,
            "recent": commit,
            "version": bool(_MANIFEST.match(path)) or bool(_CHANGELOG.search(path))}[kind]


def first_source(blocks: list[dict], scope: str) -> str:
    mine = [b for b in blocks if b["scope"] == scope]
    first = (mine[0].get("episodes") or [{}])[0] if mine else {}
    return str(first.get("source") or "")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    inputs.add_home(ap)
    ap.add_argument("--corpus", required=True, help="a folder holding each repository under its scope's name")
    ap.add_argument("--kind", nargs="+", choices=sorted(QUESTIONS), default=None,
                    help="which kinds of question to ask (default: all)")
    ap.add_argument("--foreign", action="store_true",
                    help="ask them in other languages (Spanish, French, Italian, Portuguese, Russian, Chinese, "
                         "Japanese): read by meaning, so the home needs the multilingual store")
    args = ap.parse_args(argv)
    from loci.query.ask import ask, open_session

    home = inputs.use_home(inputs.home_dir(args.home))
    print(stamp(f"home {inputs.shown(home)}"))
    session = open_session(keep_full_index=True)
    corpus = Path(args.corpus)
    scopes = [s for s in session.indexed() if (corpus / s).is_dir()]
    if not scopes:
        inputs.fail(f"no folder under {corpus} is named as a scope of the home",
                    "pass --corpus the folder the home's repositories were registered from")
    asked = FOREIGN if args.foreign else QUESTIONS
    for kind in args.kind or list(asked):
        right = total = alone = 0
        for scope in scopes:
            for question in asked.get(kind, ()):
                res = ask(session, question, cwd=corpus / scope).to_json()
                total += 1
                alone += res["scopes"] == [scope]
                source = first_source(res["blocks"], scope)
                if right_place(kind, source):
                    right += 1
                else:
                    print(f"  {kind} {scope}: {question!r} -> {res['outcome']} {source or 'nothing'}")
        print(f"{kind}: {right} of {total} answers open where the project keeps the answer, {alone} routed to "
              f"the project alone ({len(scopes)} projects)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
