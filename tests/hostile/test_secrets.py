"""No planted secret survives a build: not in any byte of $LOCI_HOME, not in any answer.

A repository is planted with every credential shape redaction knows, in code, docstrings,
comments, config files, READMEs, docs, commit messages, a ``.env`` file and the remote's URL, with 2048-bit-sized private
keys indented, prefixed and long enough to straddle a chunk boundary. The home is built
(scan, index, code graphs, embeddings with a fake encoder), then every file in it is read
(Parquet and SQLite decoded, everything else raw) and searched for distinctive slices
of each secret, case-insensitively (routing tokens are lower-cased).
"""
from __future__ import annotations

import base64
import hashlib
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import git, make_repo, module_home, readable
from loci.front.cli import app
from test_redact import fake_key_lines, fake_pem, key_slices
from test_redact_shapes import PLANTED

runner = CliRunner()
_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def rand(label: str, n: int, alphabet: str = _B62) -> str:
    """``n`` deterministic characters of ``alphabet``, ending in a digit and a capital so a
    value is never a plain word."""
    digest = b"".join(hashlib.sha256(f"{label}/{i}".encode()).digest() for i in range(n // 16 + 1))
    body = "".join(alphabet[b % len(alphabet)] for b in digest)[:n - 2]
    return body + ("7Q" if alphabet == _B62 else alphabet[-2:])


HEX = "0123456789abcdef"
S = {
    "aws_id": "AKIA" + rand("aws_id", 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"),
    "aws_secret": rand("aws_secret", 40),
    "github": "ghp_" + rand("github", 36),
    "gitlab": "glpat-" + rand("gitlab", 20),
    "slack": "xoxb-2718281828-3141592653-" + rand("slack", 24),
    "stripe": "sk_live_" + rand("stripe", 24),
    "google": "AIza" + rand("google", 35),
    "sendgrid": "SG." + rand("sg1", 22) + "." + rand("sg2", 43),
    "azure": rand("azure", 86) + "==",
    "twilio": "SK" + rand("twilio", 32, HEX),
    "npm": "npm_" + rand("npm", 36),
    "openai": "sk-proj-" + rand("openai", 48),
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJ" + rand("jwt1", 30) + "." + rand("jwt2", 43),
    "url_pw": rand("url_pw", 18),
    "basic": base64.b64encode(f"deploy:{rand('basic', 16)}".encode()).decode(),
    "bearer": rand("bearer", 40),
    "words": "quokka zanzibar marimba fjord",
    "quoted_words": "tamarind okapi glockenspiel",
    "db_password_prod": rand("db_password_prod", 18),
    "db_pass": rand("db_pass", 16),
    "pwd": rand("pwd", 14),
    "passwd": rand("passwd", 14),
    "secret": rand("secret", 20),
    "api_key": rand("api_key", 24),
    "token": rand("token", 24),
    "stated": rand("stated", 20),
    "amp_head": rand("amp_head", 8),
    "amp_tail": rand("amp_tail", 12),
    "cfg_pw": rand("cfg_pw", 16),
    "remote": "ghs_" + rand("remote", 36),
    "dotenv": rand("dotenv", 24),
}
KEYS = ("readme", "docstring", "hash", "setup_cfg", "quoted", "json_doc", "commit", "no_end")
FILLER = "\n".join(f"Line {i} of the operations notes: restart the workers, then check the queue."
                   for i in range(14))


def needles() -> dict[str, list[str]]:
    """Per secret, the substrings that must appear nowhere (lower-cased)."""
    out: dict[str, list[str]] = {}
    for name, value in S.items():
        if " " in value:
            out[name] = value.split()
        elif len(value) <= 20:
            out[name] = [value]
        else:
            mid = len(value) // 2
            out[name] = [value[mid - 10:mid + 10], value[-16:]]
    for label in KEYS:
        out[f"key:{label}"] = key_slices(label)
    for name, _, secret, _ in PLANTED:
        out[f"shape:{name}"] = [secret]
    return {k: [n.lower() for n in v] for k, v in out.items()}


def planted_files() -> dict[str, str]:
    pem_doc = fake_pem("docstring").replace("\n", "\n    ")
    return {
        "README.md": (
            "# vault-demo\n\nA demo service that talks to a database and a mail provider.\n\n"
            "## Credentials\n\n" + FILLER + "\n"
            f"password: {S['words']}\n"
            f"Our secret key is {S['stated']}.\n"
            f"Connect with postgres://app:{S['url_pw']}@db.internal:5432/app for reports.\n"
            f"Send `Authorization: Basic {S['basic']}` to the admin API.\n"
            f"The mail key is {S['sendgrid']} and the maps key {S['google']}.\n\n"
            "## Deploy key\n\n" + FILLER + "\n\n" + fake_pem("readme") + "\n\n"
            "Keep it out of the repository from now on.\n"),
        "docs/setup.md": (
            "# Setup\n\n" + FILLER + "\n\n"
            "```\n"
            f"DB_PASSWORD_PROD={S['db_password_prod']}\n"
            f"db_pass={S['db_pass']}\n"
            f"pwd={S['pwd']}\n"
            f"Server=db;User Id=sa;Password={S['amp_head']}&{S['amp_tail']};Database=app\n"
            "```\n\n"
            "## Service account\n\n" + FILLER + "\n\n"
            '```json\n{"type": "service_account", "private_key": "'
            + fake_pem("json_doc", kind="PRIVATE KEY").replace("\n", "\\n") + '\\n"}\n```\n'),
        "docs/settings.env.txt": (
            f"AZURE_STORAGE=DefaultEndpointsProtocol=https;AccountName=demo;AccountKey={S['azure']};"
            "EndpointSuffix=core.windows.net\n"
            f"TWILIO_API_KEY={S['twilio']}\nSLACK_BOT_TOKEN={S['slack']}\n"
            f"passwd: {S['passwd']}\n"
            "PARTIAL_KEY=\n" + fake_pem("no_end", end=False) + "\n"),
        "deploy.env.example.md": f"# Example environment\n\nNPM_TOKEN={S['npm']}\nOPENAI_API_KEY={S['openai']}\n",
        "setup.cfg": (
            "[metadata]\nname = vault-demo\n\n[tool:vault]\n"
            f"password = {S['cfg_pw']}\n"
            "signing_key =\n" + fake_pem("setup_cfg", "    ") + "\n"),
        "app/settings.py": (
            '"""Settings for the demo.\n\n'
            f"    The staging API key is api_key: {S['api_key']} until rotation.\n"
            '"""\n'
            f'STRIPE_KEY = "{S["stripe"]}"\n'
            f'password = "{S["quoted_words"]}"\n\n\n'
            "def load_key():\n"
            '    """Return the embedded test key.\n\n    ' + FILLER.replace("\n", "\n    ") + "\n\n    "
            + pem_doc + '\n    """\n'
            "    return None\n\n\n"
            f"# The admin token=Bearer {S['bearer']} is for local testing only.\n"
            f"# aws_secret_access_key = {S['aws_secret']}\n"
            "# The old deploy key, kept for reference:\n" + fake_pem("hash", "# ") + "\n"
            "def connect(password=None):\n    return password\n"),
        "app/keys.py": (
            '"""Keys used by the integration tests."""\n\n'
            "TEST_KEY = (\n" + fake_pem("quoted", '    "', '\\n"') + "\n)\n\n"
            f'SECRET = "{S["secret"]}"\n'),
        "scripts/deploy.sh": (
            "#!/bin/sh\n# Deploy the demo.\n"
            f"# export GITHUB_TOKEN={S['github']}\n"
            f"# export GITLAB_TOKEN={S['gitlab']}\n"
            "curl -s https://example.invalid/deploy\n"),
        "web/client.js": (
            "/**\n * Client for the demo API.\n *\n"
            f" * token={S['token']}\n * session {S['jwt']}\n */\n"
            "export function call() { return 1; }\n"),
        "config/app.yaml": f"db:\n  password: {S['words']}\n  aws_access_key_id: {S['aws_id']}\n",
        "config/app.json": json.dumps({"password": S["quoted_words"], "aws": S["aws_id"]}) + "\n",
        ".env": f"APP_SECRET={S['dotenv']}\n",
        "docs/operations.md": "# Operations\n\n" + "\n\n".join(text for _, text, _, _ in PLANTED) + "\n",
    }


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """A home built from the planted repository (graphs and fake embeddings included)."""
    import loci.query.semantic
    import loci_pipeline.embed
    mp, root, home = module_home(tmp_path_factory, "hostile")
    mp.setattr(loci_pipeline.embed, "open_encoder", lambda name, layout: HashEncoder())
    mp.setattr(loci.query.semantic, "load_encoder", lambda name, layout, **kw: HashEncoder())
    repo = make_repo(root / "code" / "vault-demo", planted_files(),
                     f"Add the demo service\n\nThe first deploy used {S['aws_id']} and {S['github']}.\n")
    git(repo, "remote", "add", "origin", f"https://x-access-token:{S['remote']}@github.com/acme/vault-demo.git")
    (repo / "NOTES.md").write_text("# Notes\n\nRotated.\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Rotate the deploy key\n\n" + FILLER + "\n\n" + fake_pem("commit")
        + f"\n\npassword: {S['words']}\n\n" + "\n".join(text for _, text, _, _ in PLANTED[::2]) + "\n")
    res = runner.invoke(app, ["setup", str(root / "code"), "-y", "--quiet", "--no-calibrate", "--no-embed"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["embed", "--quiet"])
    assert res.exit_code == 0, res.output
    answers = [runner.invoke(app, ["ask", "--json", "--no-cwd", q]).output for q in QUESTIONS]
    answers += [runner.invoke(app, ["ask", "--no-cwd", q]).output for q in QUESTIONS[:3]]
    yield home, answers
    mp.undo()


QUESTIONS = ["what is the database password for vault-demo", "vault-demo deploy key private key",
             "secret key of the demo service", "how do I connect to the database in vault-demo",
             "quokka zanzibar marimba fjord", "load_key embedded test key", "mail key sendgrid",
             "service account private_key json"]


class HashEncoder:
    """Deterministic vectors from word hashes: enough to store and search embeddings."""

    model_id = "hash-test"
    dim = 8

    def encode(self, texts):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                out[i, hashlib.sha1(word.encode()).digest()[0] % self.dim] += 1.0
            out[i, 0] += 0.01
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_the_planted_repository_was_collected_and_masked(home):
    home_dir, _ = home
    import pyarrow.parquet as pq

    (chunks,) = list((home_dir / "chunks").glob("*.parquet"))
    rows = pq.read_table(chunks).to_pylist()
    paths = {r["path"] for r in rows}
    assert {"README.md", "docs/setup.md", "docs/settings.env.txt", "setup.cfg", "app/settings.py",
            "app/keys.py", "scripts/deploy.sh", "web/client.js", "deploy.env.example.md"} <= paths
    assert sum(r["text"].count("[REDACTED:") for r in rows) >= len(KEYS)
    meta = json.loads((home_dir / "meta" / "vault-demo.json").read_text())
    assert sum(meta["redactions"].values()) >= len(S) - 2 + len(KEYS)   # all but .env and the remote
    assert list((home_dir / "vectors").rglob("*.npy"))


def test_no_planted_secret_is_in_any_byte_of_the_home(home):
    home_dir, _ = home
    found = []
    files = [p for p in home_dir.rglob("*") if p.is_file()]
    assert len(files) > 5
    wanted = needles()
    for path in files:
        text = readable(path)
        found += [(name, str(path.relative_to(home_dir))) for name, subs in wanted.items()
                  if any(s in text for s in subs)]
    assert not found, found


def test_no_planted_secret_is_in_any_exported_bundle(home, tmp_path):
    res = runner.invoke(app, ["push", str(tmp_path / "store"), "--quiet"])
    assert res.exit_code == 0, res.output
    files = [p for p in (tmp_path / "store").rglob("*") if p.is_file()]
    assert any(p.name == "chunks.parquet" for p in files)
    wanted = needles()
    found = [(name, p.name) for p in files for name, subs in wanted.items() if any(s in readable(p) for s in subs)]
    assert not found, found


def test_no_planted_secret_is_in_any_answer(home):
    _, answers = home
    text = "\n".join(answers).lower()
    assert "vault-demo" in text
    assert [name for name, subs in needles().items() if any(s in text for s in subs)] == []


def test_git_still_holds_what_was_planted(home):
    """The check above can fail: the secrets are really in the repository's history."""
    home_dir, _ = home
    repo = home_dir.parent / "code" / "vault-demo"
    log = (git(repo, "log", "-p") + git(repo, "remote", "get-url", "origin")).lower()
    assert all(any(s in log for s in subs) for subs in needles().values())
    assert fake_key_lines("commit")[3].lower() in log
