"""A scope's fingerprint: what decides whether `loci index` builds it again."""
import re
from dataclasses import fields, replace

from loci.kernel.config import DEFAULT_PARAMS, INDEX_PARAMS
from loci_pipeline.fingerprint import build_sources, scope_fingerprint


def fingerprint(tmp_path, params):
    return scope_fingerprint(tmp_path, params=params, git="clean")


def test_a_query_time_constant_does_not_rebuild_any_scope(tmp_path):
    # routing weights, the second opinion's floors and how vectors are computed are read at query or
    # embed time: changing them (an upgrade, a tuning) must not re-index every repository
    moved = replace(DEFAULT_PARAMS, semantic_add_floor=0.9, alias_boost=9.0, k=7,
                    embed_bf16=not DEFAULT_PARAMS.embed_bf16)
    assert fingerprint(tmp_path, moved) == fingerprint(tmp_path, DEFAULT_PARAMS)


def test_a_constant_the_index_is_built_with_rebuilds_it(tmp_path):
    for change in ({"chunk_max_chars": 900}, {"chargram_max": 4}, {"max_commits": 10},
                   {"path_weights": (("source", 0.5),)}):
        assert fingerprint(tmp_path, replace(DEFAULT_PARAMS, **change)) != fingerprint(tmp_path, DEFAULT_PARAMS)


def test_every_parameter_the_build_reads_is_in_the_index_signature():
    names = {f.name for f in fields(DEFAULT_PARAMS)}
    read = set()
    for path in build_sources():
        for attr in re.findall(r"params\.(\w+)", path.read_text()):
            read.add("path_weights" if attr == "path_weight" else attr)
    read &= names   # methods such as signature() are not parameters
    assert read and read <= set(INDEX_PARAMS), sorted(read - set(INDEX_PARAMS))


def test_a_new_release_tag_changes_the_git_state_the_index_was_built_at(tmp_path):
    from conftest import git, make_repo

    from loci_pipeline.fingerprint import git_state

    repo = make_repo(tmp_path / "gadget", {"main.go": "package main\n"})
    before = git_state(repo)
    assert git_state(repo) == before
    git(repo, "tag", "v1.0.0")
    tagged = git_state(repo)
    assert tagged != before
    git(repo, "pack-refs", "--all")            # tags moved into packed-refs are still read
    git(repo, "tag", "v1.0.1")
    assert git_state(repo) != tagged
