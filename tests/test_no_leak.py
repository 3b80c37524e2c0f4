"""Secrets in the places a first pass missed: a file or folder name, a tag name, a symbol name
(graph ids are lower-cased copies of it), a base64 blob, a value wrapped onto the next line,
a YAML block scalar, a URL cut short by an ellipsis. Each is masked where it is stored, and
none reaches any byte of the home, an exported bundle or an answer.

Every value is fabricated (right prefix, length and alphabet, derived from a hash)."""
from __future__ import annotations

import base64
import hashlib
import json

import pytest
from typer.testing import CliRunner

from conftest import git, make_repo, module_home, readable
from loci_pipeline.chunks import make_chunk
from loci_pipeline.redact import redact, redact_strings

runner = CliRunner()
_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def rand(label: str, n: int, alphabet: str = _B62) -> str:
    digest = b"".join(hashlib.sha256(f"leak/{label}/{i}".encode()).digest() for i in range(n // 16 + 1))
    body = "".join(alphabet[b % len(alphabet)] for b in digest)[:n - 2]
    return body + ("7Q" if alphabet == _B62 else alphabet[-2:])


UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
S = {
    "dir_token": "ghp_" + rand("dir_token", 36),
    "file_key": "sk_live_" + rand("file_key", 24),
    "path_aws": "AKIA" + rand("path_aws", 16, UPPER),
    "tag_token": "ghp_" + rand("tag_token", 36),
    "symbol_aws": "AKIA" + rand("symbol_aws", 16, UPPER),
    "symbol_token": "ghp_" + rand("symbol_token", 36),
    "split_tail": rand("split_tail", 16),
    "fold_a": rand("fold_a", 24),
    "fold_b": rand("fold_b", 24),
    "basic_b64": base64.b64encode(f"deploy:{rand('basic_pw', 16)}".encode()).decode(),
    "env_b64": base64.b64encode(f"AWS_SECRET_ACCESS_KEY={rand('env_b64', 40)}".encode()).decode(),
    "url_token": "ghp_" + rand("url_token", 36),
}
SPLIT_HEAD = "ghp_" + rand("split_head", 20)


# --- the text rules ---------------------------------------------------------------------------


def test_a_token_wrapped_onto_the_next_line_is_masked_on_both_lines():
    text = f"The CI token was {SPLIT_HEAD}\n{S['split_tail']} until we rotated it.\n"
    clean, found = redact(text)
    assert SPLIT_HEAD not in clean and S["split_tail"] not in clean
    assert clean.endswith(" until we rotated it.\n") and found


def test_a_value_continued_on_a_comment_line_is_masked():
    text = f"# token: {SPLIT_HEAD}\n# {S['split_tail']}\n# then restart the workers\n"
    clean, _ = redact(text)
    assert S["split_tail"] not in clean and "then restart the workers" in clean


def test_a_yaml_block_scalar_under_a_secret_name_is_masked_on_every_line():
    text = f"signing:\n  key: >-\n    {S['fold_a']}\n    {S['fold_b']}\nregion: eu-west-1\n"
    clean, found = redact(text)
    assert S["fold_a"] not in clean and S["fold_b"] not in clean
    assert "region: eu-west-1" in clean and found


def test_a_base64_blob_of_user_and_password_is_masked_wherever_it_stands():
    clean, found = redact(f"The registry auth is `{S['basic_b64']}` for the CI runner.\n")
    assert S["basic_b64"] not in clean and "for the CI runner." in clean and found


def test_a_base64_blob_holding_a_secret_is_masked():
    clean, found = redact(f"The old env blob was {S['env_b64']} before the move.\n")
    assert S["env_b64"] not in clean and found


def test_a_url_password_cut_short_by_an_ellipsis_is_masked():
    label = f"private-lib@git+https://dev:{S['url_token'][:16]}..."
    clean, found = redact(label)
    assert S["url_token"][:16] not in clean and clean.startswith("private-lib@git+https://dev:") and found


def test_redact_strings_masks_the_lower_cased_id_form_of_a_secret_it_found():
    """graphify derives a node's id from its label (lower-cased, joined by ``_``) and keys its
    cache by lower-cased paths: a secret found in one string is masked in those forms too."""
    graph = {"nodes": [{"id": f"web_app_{S['symbol_aws'].lower()}", "label": f"{S['symbol_aws']}()"},
                       {"id": f"app_{S['symbol_token'].lower()}", "label": S["symbol_token"]}],
             "links": [{"source": "web_app", "target": f"web_app_{S['symbol_aws'].lower()}"}],
             "index": {f"fixtures/{S['path_aws']}.json": {"hashes": {f"fixtures/{S['path_aws'].lower()}.json": "ab"}}}}
    clean, found = redact_strings(graph)
    dumped = json.dumps(clean).lower()
    for key in ("symbol_aws", "symbol_token", "path_aws"):
        assert S[key].lower() not in dumped, key
    ids = {n["id"] for n in clean["nodes"]}
    assert clean["links"][0]["target"] in ids          # an id and a link to it are masked alike
    assert found


def test_a_chunk_path_that_names_a_secret_is_masked():
    chunk = make_chunk("s", "doc", f"deploy/{S['dir_token']}/README.md", 1, "# Deploy\n\nNotes.\n")
    assert S["dir_token"] not in chunk.path and chunk.path.endswith("/README.md") and chunk.redactions


# --- what must survive -----------------------------------------------------------------------


def test_ordinary_lines_after_a_masked_value_survive():
    text = (f"API_KEY={rand('ok_key', 24)}\nALLOWED_HOSTS=db1.internal\nrelease2024 is the branch\n"
            f"token: {SPLIT_HEAD}\nThen run the tests.\n")
    clean, _ = redact(text)
    assert "ALLOWED_HOSTS=db1.internal" in clean and "release2024 is the branch" in clean
    assert "Then run the tests." in clean


@pytest.mark.parametrize("text", [
    "Fixed in 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39 last week.",
    "The request id 123e4567-e89b-12d3-a456-426614174000 appears in the logs.",
    "![logo](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==)",
    f"The greeting is encoded as {base64.b64encode(b'hello there, welcome to the service').decode()} in the fixture.",
    "Reset the password with `loci reset --password-file path`.",
    "ThisIsAVeryLongCamelCaseIdentifierName is a class.",
])
def test_ordinary_text_is_not_masked(text):
    assert redact(text) == (text, {})


# --- end to end: nothing reaches the home, a bundle or an answer ------------------------------


def _needles() -> dict[str, str]:
    """Per secret, a slice no stored byte may hold (lower-cased: routing tokens are)."""
    out = {k: (v[-16:] if len(v) > 16 else v).lower() for k, v in S.items()}
    out["url_token"] = S["url_token"][4:16].lower()   # what survives a label's truncation
    return out


def _leaks(files) -> list[tuple[str, str]]:
    wanted = _needles()
    found = []
    for path in files:
        text = readable(path)
        found += [(name, path.name) for name, s in wanted.items() if s in text]
    return found


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    mp, root, home = module_home(tmp_path_factory, "noleak")
    files = {
        "README.md": ("# Ledger\n\nThe ledger service books payments.\n\n"
                      f"The CI token was {SPLIT_HEAD}\n{S['split_tail']} until we rotated it.\n\n"
                      f"The registry auth is `{S['basic_b64']}` and the old env blob was {S['env_b64']}.\n\n"
                      f"```yaml\nsigning:\n  key: >-\n    {S['fold_a']}\n    {S['fold_b']}\n```\n"),
        f"deploy/{S['dir_token']}/README.md": "# Deploy\n\nDeploy notes for the cluster.\n",
        f"docs/{S['file_key']}.md": "# Old key notes\n\nNotes about the rotated key.\n",
        f"fixtures/{S['path_aws']}.json": '{"ok": true}\n',
        "ledger/app.py": (f'"""The ledger app."""\n\n\ndef {S["symbol_token"]}():\n    """Return one."""\n    return 1\n'),
        "web/app.js": f"// The client.\nexport function {S['symbol_aws']}() {{ return 1; }}\n",
        "package.json": json.dumps({"name": "ledger", "version": "1.0.0", "dependencies": {
            "private-lib": f"git+https://dev:{S['url_token']}@github.com/acme/private-lib.git"}}),
    }
    repo = make_repo(root / "code" / "ledger", files, "Add the ledger service")
    git(repo, "tag", f"v1.0-{S['tag_token']}")
    res = runner.invoke(app_(), ["setup", str(root / "code"), "-y", "--quiet", "--no-calibrate", "--no-embed"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app_(), ["export", "--to", str(root / "bundle"), "--quiet", "--no-vectors"])
    assert res.exit_code == 0, res.output
    answers = [runner.invoke(app_(), [*cmd, "--no-cwd", q]).output
               for q in ("ledger deploy notes for the cluster", "old key notes ledger",
                         "what is the newest release tag of ledger", "ledger client function")
               for cmd in (["ask", "--json"], ["ask"])]
    yield root, answers
    mp.undo()


def app_():
    from loci.front.cli import app

    return app


def test_the_planted_names_were_collected(built):
    import pyarrow.parquet as pq

    root, _ = built
    rows = pq.read_table(root / "loci-home" / "chunks" / "ledger.parquet").to_pylist()
    paths = {r["path"] for r in rows}
    assert "deploy/[REDACTED:github-token]/README.md" in paths
    assert any(p.startswith("tag:v1.0-[REDACTED:") for p in paths)
    assert (root / "loci-home" / "symbols" / "ledger.parquet").exists()   # the graph was built


def test_no_secret_in_a_name_blob_or_wrapped_line_is_in_any_byte_of_the_home(built):
    root, _ = built
    files = [p for p in (root / "loci-home").rglob("*") if p.is_file()]
    assert len(files) > 5
    assert _leaks(files) == []


def test_no_secret_in_a_name_blob_or_wrapped_line_is_in_the_exported_bundle(built):
    root, _ = built
    files = [p for p in (root / "bundle").rglob("*") if p.is_file()]
    assert any(p.name == "chunks.parquet" for p in files)
    assert _leaks(files) == []


def test_no_secret_in_a_name_blob_or_wrapped_line_is_in_any_answer(built):
    _, answers = built
    text = "\n".join(answers).lower()
    assert "ledger" in text
    assert [name for name, s in _needles().items() if s in text] == []
