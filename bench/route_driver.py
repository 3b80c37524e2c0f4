"""In-process routing latency: load the routing index once, then time ``route``
per question. Run with the python of the implementation under test (the
reference's venv or the project's); it imports whichever ``loci`` that python has.

    python route_driver.py {ref|loci} QUESTIONS.json   (reads $LOCI_HOME)

Prints one JSON object: ``load_s``, ``latencies`` (seconds), ``results``
(question id -> raw route output), or ``error``.
"""
from __future__ import annotations

import dataclasses
import json
import sys
import time


def _ref():
    from loci.index import load_index   # loci-mem's own modules, not this project's
    from loci.router import route

    index = load_index()
    return lambda q: route(q, index, cwd=None).to_json()


def _loci():
    from loci.kernel.config import layout

    try:  # the long-lived session the MCP server uses: aliases and the full index kept
        from loci.query.ask import Session, route_question

        session = Session(layout(), keep_full_index=True)
        session.routing_for("")
        # the router alone, as the reference's route is; the vectors' second opinion
        # (encoding the question) is measured by the one-shot `route` rows instead
        return lambda q: _plain(route_question(session, q, cwd=None, fast=True))
    except ImportError:
        from loci.query.router import route
        from loci.query.store import load_routing

        index = load_routing(layout())
        return lambda q: _plain(route(q, index))


def _plain(result):
    if hasattr(result, "to_json"):
        return result.to_json()
    return dataclasses.asdict(result) if dataclasses.is_dataclass(result) else result


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[1] not in ("ref", "loci"):
        print("usage: python route_driver.py {ref|loci} QUESTIONS.json   (reads $LOCI_HOME)", file=sys.stderr)
        return 2
    impl, path = argv[1], argv[2]
    questions = json.load(open(path, encoding="utf-8"))
    try:
        start = time.perf_counter()
        call = _ref() if impl == "ref" else _loci()
        load_s = time.perf_counter() - start
    except Exception as exc:  # an API that does not exist yet is a reported value
        print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}))
        return 0
    latencies, results = [], {}
    for q in questions:
        start = time.perf_counter()
        try:
            out = call(q["question"])
        except Exception as exc:
            print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}))
            return 0
        latencies.append(time.perf_counter() - start)
        results[q["id"]] = out
    print(json.dumps({"load_s": load_s, "latencies": latencies, "results": results}, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
