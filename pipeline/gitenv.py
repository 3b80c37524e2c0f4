"""The environment every build-side git call runs under.

Inside a git hook, git exports variables that locate *its* repository
(``GIT_DIR``, ``GIT_INDEX_FILE``, ...); inherited by ``git -C other``, they
would make every scope read the hook repository's HEAD and index. They are
dropped here, once, for every caller.
"""
from __future__ import annotations

import os

# what `git rev-parse --local-env-vars` prints, plus GIT_NAMESPACE
LOCAL_VARS = frozenset(
    "GIT_ALTERNATE_OBJECT_DIRECTORIES GIT_CONFIG GIT_CONFIG_PARAMETERS GIT_CONFIG_COUNT "
    "GIT_OBJECT_DIRECTORY GIT_DIR GIT_WORK_TREE GIT_IMPLICIT_WORK_TREE GIT_GRAFT_FILE "
    "GIT_INDEX_FILE GIT_NO_REPLACE_OBJECTS GIT_REPLACE_REF_BASE GIT_PREFIX "
    "GIT_INTERNAL_SUPER_PREFIX GIT_SHALLOW_FILE GIT_COMMON_DIR GIT_NAMESPACE".split())


def git_env(**extra: str) -> dict[str, str]:
    """os.environ without the repository-locating git variables, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in LOCAL_VARS}
    env.update(extra)
    return env
