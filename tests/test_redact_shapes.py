"""The shapes a hostile tester planted that used to reach the home, and ordinary values taken
from real repositories that must stay: both directions of one corpus.

Every secret is fabricated (right shape, fake content). The ordinary values are lines copied
from the development corpus's repositories: lockfile hashes, commit shas, URLs, identifiers.
"""
from __future__ import annotations

import base64
import json
from collections import Counter

import pytest

from loci_pipeline.redact import redact

HEX64 = "9f8e7d6c5b4a39281706f5e4d3c2b1a0" * 2
HEX40 = "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"
HEX32 = "0a1b2c3d4e5f60718293a4b5c6d7e8f9"
FERNET = "Fk3xQ9vLm2Np8Rt4Wz6Yb1Cd5Ef7Gh0JkLmNoPqRsTu="
AWS_SECRET = "Fake0Key/Test+Fake0Key/Test+Fake0Key/Tes"
PW = "Tr0ub4dor3xFake"
PEM = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAfake0fake0fake0fake0fake0fake0fake0fake0\n"
       "-----END RSA PRIVATE KEY-----\n")
PEM_B64 = base64.b64encode(PEM.encode()).decode()
DOCKER_AUTH = base64.b64encode(b"deploy:Fak3Passw0rd4Tests").decode()
EC_BODY = ("MHcCAQEEIFak3Fak3Fak3Fak3Fak3Fak3Fak3Fak3Fak3Fak3Fak3oAoGCCqGSM49\n"
           "AwEHoUQDQgAEFak3Fak3Fak3Fak3Fak3Fak3Fak3Fak3Fak3Fak3Fak3Fak3Fak3\n"
           "Fak3Fak3Fak3Fak3Fak3Fak3Fak3Fak3Fak3Fak3Fak3Fak3Fak3Fak3Fak3==\n")
SHADOW_HASH = "Fak3salt$" + "Fak3.hash/" * 8 + "Fake0F"

# (name, text, the secret that must be gone, a word around it that must stay)
PLANTED = [
    ("hmac-key", f"HMAC_KEY={HEX64}", HEX64, "HMAC_KEY="),
    ("datadog-app-key", f"DD_APP_KEY={HEX40}", HEX40, "DD_APP_KEY="),
    ("fernet-key", f"FERNET_KEY={FERNET}", FERNET, "FERNET_KEY="),
    ("aes-key", "aes_key = 'Qm9vZjRrM0tleUZvckFFUzI1Ng'", "Qm9vZjRrM0tleUZvckFFUzI1Ng", "aes_key = '"),
    ("mysql-p", f"mysql -u root -p{PW} app < dump.sql", PW, "mysql -u root -p"),
    ("mysql-glued-user", f"mysql -uroot -p{PW} -h db", PW, "-h db"),
    ("password-flag", f"pg_dump --password {PW} app", PW, "pg_dump --password "),
    ("sshpass", f"sshpass -p {PW} ssh deploy@build.internal", PW, "ssh deploy@build.internal"),
    ("pgpass-line", f"db.internal:5432:app:appuser:{PW}", PW, "db.internal:5432:app:appuser:"),
    ("shadow-hash", f"root:$6${SHADOW_HASH}:19000:0:99999:7:::", "Fak3.hash/Fak3.hash/", "root:$6$"),
    ("docker-auth", json.dumps({"auths": {"registry.internal": {"auth": DOCKER_AUTH}}}), DOCKER_AUTH,
     '"auth": "'),
    ("azure-apim-header", f"Ocp-Apim-Subscription-Key: {HEX32}", HEX32, "Ocp-Apim-Subscription-Key: "),
    ("bearer-lowercase", "Authorization: Bearer qwrtzxcvbnmlkjhgfdsapqwrtzxcvbn", "qwrtzxcvbnmlkjhgfdsapqwrtzxcvbn",
     "Authorization: Bearer "),
    ("kubeconfig-client-key", f"users:\n- name: admin\n  user:\n    client-key-data: {PEM_B64}\n",
     PEM_B64[20:60], "client-key-data: "),
    ("aws-markdown-table", f"| AWS_SECRET_ACCESS_KEY | {AWS_SECRET} |", AWS_SECRET, "| AWS_SECRET_ACCESS_KEY | "),
    ("aws-name-value", json.dumps({"Name": "AWS_SECRET_ACCESS_KEY", "Value": AWS_SECRET}), AWS_SECRET,
     '"Value": "'),
    ("twilio-prose", f"Our Twilio auth token is {HEX32} for production.", HEX32, " for production."),
    ("ec-body-without-begin", f"key material:\n{EC_BODY}end", "Fak3Fak3Fak3Fak3", "key material:"),
    ("stated-with-qualifier", "the admin password for staging is Wint3rIsC0ming", "Wint3rIsC0ming",
     "the admin password for staging is "),
    ("password-with-your", "password: Yourp@ssw0rd2024", "Yourp@ssw0rd2024", "password: "),
    ("password-with-example", "DB_PASSWORD=Example!Pass99x", "Example!Pass99x", "DB_PASSWORD="),
    ("gcp-private-key-id", json.dumps({"type": "service_account", "private_key_id": HEX40}), HEX40,
     '"private_key_id": "'),
]


@pytest.mark.parametrize("text,secret,kept", [p[1:] for p in PLANTED], ids=[p[0] for p in PLANTED])
def test_each_planted_shape_is_masked(text, secret, kept):
    out, found = redact(text)
    assert secret not in out and found
    assert kept in out


@pytest.mark.parametrize("text,secret,kept", [p[1:] for p in PLANTED], ids=[p[0] for p in PLANTED])
def test_each_planted_shape_is_masked_in_a_commit_message(text, secret, kept):
    out, _ = redact(f"Rotate the staging credentials\n\nThe old value was:\n{text}\nIt is revoked now.\n")
    assert secret not in out
    assert out.startswith("Rotate the staging credentials") and out.endswith("It is revoked now.\n")


# Ordinary values from real repositories (the corpus): none is a secret.
ORDINARY = [
    '      "integrity": "sha512-6EUNcuBbNkj08Oj4gAZ+BUU8yLCgKzgVX4gaTh09Ya2C8ICM4P+G30g4m3akRxSYAp3A/gnWchrNst7px4/nUQ==",',
    'sdist = { url = "https://files.pythonhosted.org/packages/bc/c1/bbac6a50d02774f91572938964c582fff4270eee73ab822a4aeea4d8b11b/accessible_pygments-0.0.5.tar.gz", hash = "sha256:40918d3e6a2b619ad424cb91e556bd3bd8865443d9f22f1dcdf79e33c8046872", size = 1377899 }',
    "github.com/davecgh/go-spew v1.1.1 h1:vj9j/u1bqnvCEfJOwUhtlOARqs3+rkHYY13jYWTU97c=",
    'checksum = "ddd31a130427c27518df266943a5308ed92d4b226cc639f5a8f1002816174301"',
    "8fea867d4220f1095dae9d6264ec5aa4031fb712 Merge pull request #507 from daugihao/handle-invalid-escape-sequence-warnings",
    "[![Version](https://img.shields.io/pypi/v/requests.svg?maxAge=86400)](https://pypi.org/project/requests/)",
    '        heads = {key: "Mozilla/5.0 (github.com/psf/requests)"}',
    'viper.AddSecureRemoteProvider("etcd","http://127.0.0.1:4001","/config/hugo.json","/etc/secrets/mykeyring.gpg")',
    "SECRET_KEY = config('SECRET_KEY', cast=Secret)",
    "        username, _, password = decoded.partition(\":\")",
    'token = "IDENTIFIER"',
    "token = 'NUMBER'",
    'key = "whitespace"',
    "Run mysql -u root -p and type the password.",
    "docker login --password-stdin < token.txt",
    "12:30:45:00 started",
    "It costs $6 a month; $5$ is not a hash.",
    '{"auth": "required", "mode": "strict"}',
    "| password | str | The password used to connect. |",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_values_from_real_repositories_are_kept(text):
    assert redact(text) == (text, Counter())


def test_a_repositorys_own_graph_has_its_labels_masked(tmp_path):
    """graphify-out/graph.json is the repository's: its node labels are redacted when read."""
    from loci_pipeline.structure_tables import graph_tables

    repo = tmp_path / "repo"
    (repo / "graphify-out").mkdir(parents=True)
    (repo / "app.py").write_text("def f():\n    pass\n")
    token = "ghp_" + "Fak3T0ken" * 4
    graph = {"nodes": [
        {"id": "app_f", "label": f"f() uses {token}", "source_file": "app.py", "source_location": "L1",
         "file_type": "code", "_callable": True},
        {"id": "app_k", "label": PEM, "source_file": "app.py", "source_location": "L2", "file_type": "code"},
    ], "links": []}
    path = repo / "graphify-out" / "graph.json"
    path.write_text(json.dumps(graph))
    tables = graph_tables(path, repo, scope="repo")
    text = json.dumps(tables.symbols.to_pylist())
    assert tables.symbols.num_rows >= 1
    assert token not in text and "fake0fake0" not in text
