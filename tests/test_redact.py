"""Redaction: every kind is caught in prose, code and commit messages; near-misses survive.

All secrets below are fabricated: right prefix, length and alphabet, filled with the
repeating pattern FAKE0 so that none can be a live credential.

Decisions recorded by the tables (over-redaction bias, with these exceptions):
- an assigned value shorter than 8 characters, a template slot (``${ENV}``, ``{{ x }}``,
  ``<your-token>``), a mask (``xxx``, ``****``), an env lookup (``os.environ[...]``,
  ``getenv(...)``), ``None``/``null``/``""`` or a stock word (``password``, ``changeme``,
  anything with ``your``/``example``/``placeholder``) is not a secret;
- a bare (unquoted) assigned value must also look random (letters with digits or
  symbols) and must not be an attribute path or snake_case name; a quoted one only
  needs 8+ non-space characters, so ``token = "<UUID>"`` is redacted;
- a git sha, a UUID in prose and base64 image data in a docs URL are not secrets;
- ``Authorization: Basic <b64>`` and ``Authorization: token <tok>`` count as bearer-token;
- a BEGIN PRIVATE KEY header with no END is redacted with the lines after it that still
  look like key material; a key block keeps its line breaks (the text keeps its lines);
- several bare words after a password-like name are a pass phrase unless one of them is a
  word of documentation or code (``the``, ``password``, ``str``...); a bare single token
  must look random by its mix of characters or by its entropy.
"""
from __future__ import annotations

import base64
import contextlib
import hashlib
import signal
from collections import Counter

import pytest

from loci_pipeline.chunks import make_chunk
from loci_pipeline.redact import KINDS, is_secret_file, redact, secrets_in


@contextlib.contextmanager
def no_hang(seconds: int = 60):
    """Fail instead of hanging when a regex backtracks catastrophically (speed is measured
    in bench/redaction.py, not asserted here)."""
    previous = signal.signal(signal.SIGALRM, lambda *_: pytest.fail("redaction did not complete"))
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def fill(prefix: str, length: int, pattern: str = "FAKE0") -> str:
    """``prefix`` padded with a repeating obviously-fake pattern to exactly ``length``."""
    return (prefix + pattern * length)[:length]


AWS_ID = fill("AKIA", 20)
AWS_SECRET = fill("", 40, "Fake0Key/Test+")
GH = fill("ghp_", 40)
SLACK = "xoxb-000000000000-000000000000-" + fill("", 24)
GOOGLE = fill("AIza", 39)
STRIPE = fill("sk_test_", 32)
OPENAI = fill("sk-proj-", 64)
ANTHROPIC = fill("sk-ant-api03-", 108)
PEM_BODY = fill("", 64, "FAKE0key0body0")
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----"
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJmYWtlLXVzZXItZm9yLXRlc3RzIn0."
       + fill("", 43))
URL_PW = "Fak3Passw0rd4Tests"
SHADOW = fill("", 86, "Fak3.hash/")
BCRYPT = fill("", 53, "Fak3bcrypt")
URL = f"postgres://app:{URL_PW}@db.internal:5432/app"
BEARER = fill("", 32)
SA = "Fake0ClientSecret0Value0For0Tests"
GITLAB = fill("glpat-", 26)
SENDGRID = "SG." + fill("", 22) + "." + fill("", 43)
AZURE = fill("", 86, "Fak3Azure0Key+/") + "=="
AZURE_CONN = f"DefaultEndpointsProtocol=https;AccountName=fakeacct;AccountKey={AZURE};EndpointSuffix=core.windows.net"
TWILIO = fill("SK", 34, "fa4e0")
NPM = fill("npm_", 40)
PYPI = "pypi-AgEIcHlwaS5vcmc" + fill("", 60)
HF = fill("hf_", 37, "FAKEzero")
DIGITALOCEAN = fill("dop_v1_", 71, "fa4e0")
PW = "Fak3Passw0rd4Tests"
SHADOW = fill("", 86, "Fak3.hash/")
BCRYPT = fill("", 53, "Fak3bcrypt")
SETTINGS = ("prose", "code", "commit")


def case(kind, setting, text, secret="", *survivors):
    return pytest.param(kind, text, secret, survivors, id=f"{kind}-{setting}")


POSITIVES = [
    case("aws-access-key", "prose", f"If you see {AWS_ID} in a log, rotate it at once.",
         AWS_ID, "If you see ", " in a log, rotate it at once."),
    case("aws-access-key", "code", f'AWS_ACCESS_KEY_ID = "{AWS_ID}"', AWS_ID, 'AWS_ACCESS_KEY_ID = "'),
    case("aws-access-key", "commit",
         f"Remove hard-coded deploy key\n\nThe key {AWS_ID} was committed by mistake.\n",
         AWS_ID, "Remove hard-coded deploy key\n\nThe key ", " was committed by mistake."),
    case("aws-secret-key", "prose", f"The AWS secret access key is {AWS_SECRET} for the sandbox.",
         AWS_SECRET, "The AWS secret access key is ", " for the sandbox."),
    case("aws-secret-key", "code", f"[default]\naws_secret_access_key = {AWS_SECRET}\n",
         AWS_SECRET, "aws_secret_access_key = "),
    case("aws-secret-key", "commit",
         f'Fix boto session setup\n\nIt passed "SecretAccessKey": "{AWS_SECRET}" inline.',
         AWS_SECRET, '"SecretAccessKey": "', '" inline.'),
    case("github-token", "prose", f"Use {GH} only in CI; it was made for the demo.",
         GH, "Use ", " only in CI;"),
    case("github-token", "code", f"const octokit = new Octokit({{ auth: '{GH}' }});",
         GH, "new Octokit({ auth: '", "' });"),
    case("github-token", "commit", f"Rotate CI token\n\nGITHUB_TOKEN={GH} leaked in build logs.",
         GH, "Rotate CI token", "GITHUB_TOKEN=", " leaked in build logs."),
    case("slack-token", "prose", f"The bot posts with {SLACK} to the ops channel.",
         SLACK, "The bot posts with ", " to the ops channel."),
    case("slack-token", "code", f"slack:\n  bot_token: {SLACK}\n", SLACK, "slack:\n  bot_token: "),
    case("slack-token", "commit", f"Move alerts to env\n\nThe old token {SLACK} is revoked.",
         SLACK, "Move alerts to env", " is revoked."),
    case("google-api-key", "prose", f"Maps requests use {GOOGLE} during development.",
         GOOGLE, "Maps requests use ", " during development."),
    case("google-api-key", "code",
         f"const src = `https://maps.googleapis.com/maps/api/js?key={GOOGLE}`;",
         GOOGLE, "https://maps.googleapis.com/maps/api/js?key=", "`;"),
    case("google-api-key", "commit", f"Restrict the maps key\n\n{GOOGLE} now only serves our domain.",
         GOOGLE, "Restrict the maps key", " now only serves our domain."),
    case("stripe-key", "prose", f"Test payments with {STRIPE} against the sandbox.",
         STRIPE, "Test payments with ", " against the sandbox."),
    case("stripe-key", "code", f'stripe.api_key = "{STRIPE}"', STRIPE, 'stripe.api_key = "'),
    case("stripe-key", "commit", f"Use test mode in CI\n\nSTRIPE_KEY: {STRIPE}\n",
         STRIPE, "Use test mode in CI", "STRIPE_KEY: "),
    case("openai-key", "prose", f"My key {OPENAI} stopped working after billing changed.",
         OPENAI, "My key ", " stopped working"),
    case("openai-key", "code", f'client = OpenAI(api_key="{OPENAI}")', OPENAI,
         'client = OpenAI(api_key="', '")'),
    case("openai-key", "commit", f"Drop inline key\n\nThe notebook hard-coded {OPENAI}; use env.",
         OPENAI, "Drop inline key", "; use env."),
    case("anthropic-key", "prose", f"Claude calls failed with {ANTHROPIC} revoked.",
         ANTHROPIC, "Claude calls failed with ", " revoked."),
    case("anthropic-key", "code", f"ANTHROPIC_API_KEY={ANTHROPIC}\n", ANTHROPIC, "ANTHROPIC_API_KEY="),
    case("anthropic-key", "commit", f"Scrub key from fixture\n\nReplaced {ANTHROPIC} with a stub.",
         ANTHROPIC, "Scrub key from fixture", " with a stub."),
    case("private-key-block", "prose", f"Here is the deploy key:\n\n{PEM}\n\nDo not share it.",
         PEM_BODY, "Here is the deploy key:\n\n", "\n\nDo not share it."),
    case("private-key-block", "code",
         '{"type": "service_account", "private_key": "' + PEM.replace("\n", "\\n") + '\\n"}',
         PEM_BODY, '"private_key": "', '\\n"}'),
    case("private-key-block", "commit", f"Add staging host key\n\n{PEM}\n",
         PEM_BODY, "Add staging host key\n\n"),
    case("jwt", "prose", f"Paste the token {JWT} into a decoder to inspect it.",
         JWT, "Paste the token ", " into a decoder"),
    case("jwt", "code", f'curl -H "Authorization: Bearer {JWT}" https://api.internal/me',
         JWT, '-H "Authorization: Bearer ', '" https://api.internal/me'),
    case("jwt", "commit", f"Reproduce the 403\n\nSession {JWT} is rejected after refresh.",
         JWT, "Reproduce the 403", " is rejected after refresh."),
    case("url-credentials", "prose", f"Connect with {URL} from the bastion host.",
         URL_PW, "Connect with postgres://app:", "@db.internal:5432/app from the bastion"),
    case("url-credentials", "code", f'DATABASE_URL = "{URL}"',
         URL_PW, 'DATABASE_URL = "postgres://app:', '@db.internal:5432/app"'),
    case("url-credentials", "commit",
         f"Point workers at the new broker\n\nBROKER=amqp://worker:{URL_PW}@mq.internal:5672// in prod.",
         URL_PW, "BROKER=amqp://worker:", "@mq.internal:5672// in prod."),
    case("bearer-token", "prose", f"Send `Authorization: Bearer {BEARER}` with every request.",
         BEARER, "Send `Authorization: Bearer ", "` with every request."),
    case("bearer-token", "code", f"headers = {{'Authorization': 'Bearer {BEARER}'}}",
         BEARER, "headers = {'Authorization': 'Bearer ", "'}"),
    case("bearer-token", "commit", f"Debug 401s\n\nThe client sent bearer {BEARER} after it expired.",
         BEARER, "Debug 401s", "sent bearer ", " after it expired."),
    case("gitlab-token", "prose", f"The runner cloned with {GITLAB} until it was revoked.",
         GITLAB, "The runner cloned with ", " until it was revoked."),
    case("gitlab-token", "code", f'GITLAB_TOKEN = "{GITLAB}"', GITLAB, 'GITLAB_TOKEN = "'),
    case("gitlab-token", "commit", f"Revoke CI token\n\n{GITLAB} was printed in the job log.",
         GITLAB, "Revoke CI token", " was printed in the job log."),
    case("sendgrid-key", "prose", f"Staging mail goes out with {SENDGRID} for now.",
         SENDGRID, "Staging mail goes out with ", " for now."),
    case("sendgrid-key", "code", f'sg = SendGridAPIClient("{SENDGRID}")', SENDGRID,
         'sg = SendGridAPIClient("', '")'),
    case("sendgrid-key", "commit", f"Move mail key to vault\n\nThe key {SENDGRID} is revoked.",
         SENDGRID, "Move mail key to vault", " is revoked."),
    case("azure-key", "prose", f"Paste {AZURE_CONN} into the portal.", AZURE,
         "Paste DefaultEndpointsProtocol=https;AccountName=fakeacct;AccountKey=", ";EndpointSuffix="),
    case("azure-key", "code", f'CONN = "{AZURE_CONN}"', AZURE, 'CONN = "DefaultEndpointsProtocol='),
    case("azure-key", "commit", f"Rotate storage key\n\nAccountKey={AZURE} leaked in a notebook.",
         AZURE, "Rotate storage key", "AccountKey=", " leaked in a notebook."),
    case("twilio-key", "prose", f"The API key {TWILIO} belongs to the test account.",
         TWILIO, "The API key ", " belongs to the test account."),
    case("twilio-key", "code", f'client = Client("{TWILIO}", api_secret)', TWILIO, 'client = Client("'),
    case("twilio-key", "commit", f"Use subaccount\n\n{TWILIO} was the parent account's key.",
         TWILIO, "Use subaccount", " was the parent"),
    case("npm-token", "prose", f"Publish with {NPM} from the release box only.",
         NPM, "Publish with ", " from the release box only."),
    case("npm-token", "code", f"//registry.npmjs.org/:_authToken={NPM}\n", NPM,
         "//registry.npmjs.org/:_authToken="),
    case("npm-token", "commit", f"Drop .npmrc token\n\n{NPM} is revoked.", NPM, "Drop .npmrc token"),
    case("pypi-token", "prose", f"Upload with the token {PYPI} and nothing else.", PYPI,
         "Upload with the token ", " and nothing else."),
    case("pypi-token", "code", f"[pypi]\nusername = __token__\npassword = {PYPI}\n", PYPI,
         "username = __token__\npassword = "),
    case("pypi-token", "commit", f"Trusted publishing\n\nThe old {PYPI} is gone.", PYPI,
         "Trusted publishing", " is gone."),
    case("vendor-token", "prose", f"Download the model with {HF} on the GPU box.", HF,
         "Download the model with ", " on the GPU box."),
    case("vendor-token", "code", f'client = Client(token="{DIGITALOCEAN}")', DIGITALOCEAN,
         'client = Client(token="', '")'),
    case("vendor-token", "commit", f"Rotate droplet token\n\n{DIGITALOCEAN} leaked.", DIGITALOCEAN,
         "Rotate droplet token", " leaked."),
    case("basic-auth", "prose", f"Check health with curl -u admin:{PW} https://api.internal/health today.",
         PW, "curl -u admin:", " https://api.internal/health today."),
    case("basic-auth", "code", f"curl --user deploy:{PW} -X POST https://ci.internal/hook\n", PW,
         "curl --user deploy:", " -X POST"),
    case("basic-auth", "commit", f"Script the backup\n\nIt ran curl -u backup:{PW} nightly.", PW,
         "Script the backup", "curl -u backup:", " nightly."),
    case("secret-assignment", "prose", f'Set client_secret = "{SA}" in settings.py first.',
         SA, 'Set client_secret = "', '" in settings.py first.'),
    case("secret-assignment", "code", f"database:\n  host: db\n  password: {SA}\n",
         SA, "database:\n  host: db\n  password: "),
    case("secret-assignment", "commit",
         f"Configure OAuth app\n\nexport CLIENT_SECRET={SA}\nwas in the runbook; moved to vault.",
         SA, "Configure OAuth app", "export CLIENT_SECRET=", "\nwas in the runbook"),
    case("command-password", "prose", f"Restore it with mysql -u root -p{PW} app < dump.sql first.",
         PW, "mysql -u root -p", " app < dump.sql first."),
    case("command-password", "code", f"sshpass -p '{PW}' ssh deploy@build.internal\n", PW,
         "sshpass -p '", "' ssh deploy@build.internal"),
    case("command-password", "commit", f"Script the dump\n\nIt ran pg_dump --password {PW} nightly.",
         PW, "Script the dump", "--password ", " nightly."),
    case("password-hash", "prose", f"The root hash was $6$Fak3salt${SHADOW} until rotation.", SHADOW,
         "The root hash was $6$", " until rotation."),
    case("password-hash", "code", f"root:$6$Fak3salt${SHADOW}:19000:0:99999:7:::\n", SHADOW,
         "root:$6$", ":19000:0:99999:7:::"),
    case("password-hash", "commit", f"Seed the admin user\n\nhash = '$2b$12${BCRYPT}' was committed.",
         BCRYPT, "Seed the admin user", "hash = '$2b$", "' was committed."),
]

NEGATIVES = [
    case("aws-access-key", "prose", "Access key IDs start with AKIA and are twenty characters."),
    case("aws-access-key", "code", 'if key_id.startswith("AKIA"):  # long-term keys'),
    case("aws-access-key", "commit", "Reject short ids\n\nAKIA1234 is too short to be an access key."),
    case("aws-secret-key", "prose", "Keep aws_secret_access_key in ~/.aws/credentials, never in code."),
    case("aws-secret-key", "code", 'aws_secret_access_key = os.environ["AWS_SECRET_ACCESS_KEY"]'),
    case("aws-secret-key", "commit",
         "Revert 3f786850e387550fdab836ed7e6dc881de23001b\n\nThe secret access key is read via getenv now."),
    case("github-token", "prose", "Classic tokens start with ghp_ and fine-grained ones with github_pat_."),
    case("github-token", "code", 'if token.startswith(("ghp_", "github_pat_")):'),
    case("github-token", "commit", "Accept ghp_ tokens\n\nThe ghp_short check is case-sensitive now."),
    case("slack-token", "prose", "Bot tokens look like xoxb-your-bot-token."),
    case("slack-token", "code", 'SLACK_BOT_TOKEN = os.getenv("SLACK_BOT_TOKEN")'),
    case("slack-token", "commit", "Support xapp- tokens\n\nSocket mode needs an xapp-level token."),
    case("google-api-key", "prose", "Google API keys begin with AIza and are 39 characters long."),
    case("google-api-key", "code", 'assert key.startswith("AIza"), "not a browser key"'),
    case("google-api-key", "commit", "Validate AIza keys\n\nAIzaShort is rejected by the checker."),
    case("stripe-key", "prose", "Use sk_test_ keys in development and sk_live_ keys in production."),
    case("stripe-key", "code", 'LIVE_PREFIX = "sk_live_"'),
    case("stripe-key", "commit", "Warn on live keys\n\nsk_live_short in a test run now raises."),
    case("openai-key", "prose", "The sk-proj prefix marks project keys; sk-learn is a typo of a package."),
    case("openai-key", "code", 'OPENAI_API_KEY = "sk-..."'),
    case("openai-key", "commit", "Document key format\n\nKeys look like sk-<project>-<random>."),
    case("anthropic-key", "prose", "Anthropic keys start with sk-ant- followed by a version."),
    case("anthropic-key", "code", 'if key.startswith("sk-ant-"):'),
    case("anthropic-key", "commit", "Detect sk-ant-api03 keys\n\nOlder sk-ant- keys still load."),
    case("private-key-block", "prose",
         "Paste the -----BEGIN PUBLIC KEY----- block here, never the private one."),
    case("private-key-block", "code",
         'CERT = """-----BEGIN CERTIFICATE-----\nMIIBFAKE0cert\n-----END CERTIFICATE-----"""'),
    case("private-key-block", "commit",
         "Load PRIVATE KEY files lazily\n\nThe loader no longer reads BEGIN lines eagerly."),
    case("jwt", "prose", "The header eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0 has only two segments."),
    case("jwt", "code", 'HEADER = "eyJhbGciOiJIUzI1NiJ9"'),
    case("jwt", "commit", "Reject unsigned tokens\n\neyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0. has no signature."),
    case("url-credentials", "prose", "Clone https://user@example.com/repo.git with your SSH key."),
    case("url-credentials", "code", 'DATABASE_URL = "postgres://app:${DB_PASSWORD}@db.internal/app"'),
    case("url-credentials", "commit", "Log the cache URL\n\nredis://localhost:6379/0 holds no credentials."),
    case("bearer-token", "prose", "The bearer of the token must present it in a header."),
    case("bearer-token", "code", 'headers = {"Authorization": f"Bearer {token}"}'),
    case("bearer-token", "commit", "Send Bearer tokens over TLS\n\nBearer authentication is required."),
    case("gitlab-token", "prose", "GitLab personal tokens start with glpat- and twenty characters."),
    case("gitlab-token", "code", 'if token.startswith("glpat-"):'),
    case("gitlab-token", "commit", "Support glpat- tokens\n\nglpat-short is rejected."),
    case("sendgrid-key", "prose", "SendGrid keys look like SG.<id>.<secret>."),
    case("sendgrid-key", "code", 'assert key.startswith("SG."), "not a SendGrid key"'),
    case("sendgrid-key", "commit", "Validate SG. prefix\n\nSG.short.key is rejected."),
    case("azure-key", "prose", "The connection string needs AccountName and AccountKey."),
    case("azure-key", "code", 'conn = f"AccountName={name};AccountKey={account_key}"'),
    case("azure-key", "commit", "Read AccountKey from env\n\nAccountKey=<your-key> is a placeholder."),
    case("twilio-key", "prose", "Twilio API keys start with SK and are 34 characters long."),
    case("twilio-key", "code", 'if sid.startswith("SK"):'),
    case("twilio-key", "commit", "Skip SK ids\n\nSKIP_TESTS=1 is unrelated."),
    case("npm-token", "prose", "npm tokens start with npm_ and are 40 characters long."),
    case("npm-token", "code", 'NPM_PREFIX = "npm_"'),
    case("npm-token", "commit", "Publish from CI\n\nnpm_config_registry is set by the workflow."),
    case("pypi-token", "prose", "PyPI tokens start with pypi- followed by a macaroon."),
    case("pypi-token", "code", 'if token.startswith("pypi-"):'),
    case("pypi-token", "commit", "Upload to pypi-test\n\npypi-AgE is the prefix of every token."),
    case("vendor-token", "prose", "Hugging Face tokens start with hf_ and DigitalOcean ones with dop_v1_."),
    case("vendor-token", "code", 'HF_PREFIX = "hf_"'),
    case("vendor-token", "commit", "Document dop_v1_ tokens\n\ndop_v1_short is not a token."),
    case("basic-auth", "prose", "Pass credentials with `curl -u user:$PASSWORD` from the environment."),
    case("basic-auth", "code", 'curl -u "$API_USER:$API_TOKEN" https://api.internal/'),
    case("basic-auth", "commit", "Use netrc for curl\n\ncurl -u user:pass is gone."),
    case("secret-assignment", "prose", "Keep the password in a manager; token_count = 42 is unrelated."),
    case("secret-assignment", "code", "password_field = models.CharField(max_length=128)"),
    case("secret-assignment", "commit",
         'Rename token_count\n\npassword = "<your-password>" in the docs is a placeholder.'),
    case("command-password", "prose", "Run mysql -u root -p and type the password when asked."),
    case("command-password", "code", 'mysqldump -u "$DB_USER" -p"$DB_PASSWORD" app > dump.sql'),
    case("command-password", "commit", "Read passwords from stdin\n\ndocker login --password-stdin now."),
    case("password-hash", "prose", "Shadow hashes start with $6$ and a salt."),
    case("password-hash", "code", 'if hashed.startswith("$2b$"):'),
    case("password-hash", "commit", "Costs of $5 per month\n\nThe $6$ prefix means SHA-512."),
]

# The near-misses the brief names, and the decisions taken on the doubtful ones.
NEAR_MISSES = [
    "tokenizer = AutoTokenizer.from_pretrained(name)",
    "token_count = 42",
    "max_tokens = 4096",
    "password_field = models.CharField(max_length=128)",
    "Merged 3f786850e387550fdab836ed7e6dc881de23001b into main.",
    "Request 123e4567-e89b-12d3-a456-426614174000 failed twice.",
    "See https://user@example.com/path for the mirror.",
    "The bearer of this message is trusted.",
    "sk-learn is not a package name",
    "AKIA is the prefix of long-term access key ids.",
    "![logo](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhf"
    "DwAChwGA60e6kgAAAABJRU5ErkJggg==)",
    'password = "changeme"',
    'api_key = "<your-token>"',
    "token: xxx",
    "TOKEN=${GITHUB_TOKEN}",
    'password = os.environ["DB_PASSWORD"]',
    'secret = os.getenv("APP_SECRET")',
    "token = None",
    "password: null",
    'password = ""',
    'password = "hunter"',
    "token: ${{ secrets.GITHUB_TOKEN }}",
    "apiKey: process.env.API_KEY,",
    "password=self._password",
    "access_token=token_from_env,",
    "key = 'sort-order-column-name-1'",
    "password: str",
    "postgres://user:password@localhost/db",
    'app.secret_key = "secret_key"',
    "<key>sort-order-column</key>",
]


@pytest.mark.parametrize("kind,text,secret,survivors", POSITIVES)
def test_redacts_each_kind_and_keeps_the_surrounding_words(kind, text, secret, survivors):
    out, found = redact(text)
    assert secret not in out
    assert f"[REDACTED:{kind}]" in out
    for words in survivors:
        assert words in out
    assert found == Counter({kind: 1})


@pytest.mark.parametrize("kind,text,secret,survivors", NEGATIVES)
def test_leaves_near_misses_of_each_kind_untouched(kind, text, secret, survivors):
    assert redact(text) == (text, Counter())


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_leaves_named_near_misses_untouched(text):
    assert redact(text) == (text, Counter())


def test_tables_cover_every_kind_in_every_setting():
    for table in (POSITIVES, NEGATIVES):
        covered = {p.id for p in table}
        assert covered == {f"{k}-{s}" for k in KINDS for s in SETTINGS}


@pytest.mark.parametrize("text,kept", [
    (f'{{"api_key": "{SA}"}}', '{"api_key": "'),
    (f"SECRET_KEY = '{SA}'", "SECRET_KEY = '"),
    (f'auth_token = "{SA}"\n', 'auth_token = "'),
    (f"  clientSecret: '{SA}',", "  clientSecret: '"),
    (f"'password' => '{SA}',", "'password' => '"),
    (f'password: str = "{SA}"', 'password: str = "'),
    (f'DB_PASSWORD := "{SA}"', 'DB_PASSWORD := "'),
    (f"token = b'{SA}'", "token = b'"),
    (f"secret_key_base: {SA}", "secret_key_base: "),
    (f'x-api-key: {SA}', "x-api-key: "),
    ('password = "hunter2hunter2"', 'password = "'),
    ('token = "123e4567-e89b-12d3-a456-426614174000"', 'token = "'),
    (f"<password>{SA}</password>", "<password>"),
    (f"https://api.internal/v1?token={SA}&format=json", "https://api.internal/v1?token="),
    (f"//registry.npmjs.org/:_authToken={SA}", "//registry.npmjs.org/:_authToken="),
    (f"docker run -e POSTGRES_PASSWORD={SA} postgres", "docker run -e POSTGRES_PASSWORD="),
])
def test_secret_assignment_keeps_key_name_and_quotes(text, kept):
    out, found = redact(text)
    assert out.startswith(kept + "[REDACTED:secret-assignment]")
    assert found == Counter({"secret-assignment": 1})


def test_bare_value_keeps_sentence_punctuation():
    out, _ = redact("Then set password: Fake0pass0word99.")
    assert out == "Then set password: [REDACTED:secret-assignment]."


def test_vendor_token_assigned_to_a_secret_name_counts_once_as_its_vendor_kind():
    out, found = redact(f'GITHUB_TOKEN = "{GH}"')
    assert out == 'GITHUB_TOKEN = "[REDACTED:github-token]"'
    assert found == Counter({"github-token": 1})


def test_a_prefix_glued_to_a_longer_word_is_not_a_token():
    text = f"the cupbearer {BEARER} and x{AWS_ID} stay"
    assert redact(text) == (text, Counter())


def test_a_token_after_a_hyphen_is_still_a_token():
    out, found = redact(f"disk-{OPENAI}")
    assert out == "disk-[REDACTED:openai-key]"
    assert found == Counter({"openai-key": 1})


def test_counts_every_occurrence_by_kind():
    text = f"{GH}\n{GH}\n{AWS_ID} and {URL}\n"
    out, found = redact(text)
    assert found == Counter({"github-token": 2, "aws-access-key": 1, "url-credentials": 1})
    assert out.count("[REDACTED:github-token]") == 2


def test_redaction_is_idempotent():
    text = "\n".join(p.values[1] for p in POSITIVES)
    once, found = redact(text)
    assert sum(found.values()) == len(POSITIVES)
    assert redact(once) == (once, Counter())


def test_private_key_block_becomes_one_marker_and_keeps_its_line_breaks():
    out, found = redact(f"before\n{PEM}\nafter")
    assert out == "before\n[REDACTED:private-key-block]\n\n\n\nafter"
    assert found == Counter({"private-key-block": 1})


def test_private_key_header_without_end_redacts_the_base64_lines_after_it():
    out, found = redact(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{PEM_BODY}\n{PEM_BODY}\n(truncated)")
    assert out == "[REDACTED:private-key-block]\n\n\n(truncated)"
    assert found == Counter({"private-key-block": 1})


def test_url_password_containing_at_sign_is_redacted_whole():
    out, _ = redact("mysql://root:Fake@0pass@db:3306/app")
    assert out == "mysql://root:[REDACTED:url-credentials]@db:3306/app"


def test_authorization_basic_credentials_keep_the_scheme_word():
    out, found = redact("Authorization: Basic ZmFrZTp1c2VyMDpwYXNzMA==")
    assert out == "Authorization: Basic [REDACTED:bearer-token]"
    assert found == Counter({"bearer-token": 1})


def test_offsets_hold_when_lower_casing_changes_length():
    text = f"İstanbul office: password = {SA} and {GH}"     # "İ".lower() is two characters
    out, found = redact(text)
    assert out == "İstanbul office: password = [REDACTED:secret-assignment] and [REDACTED:github-token]"
    assert found == Counter({"secret-assignment": 1, "github-token": 1})


def test_empty_text_is_returned_unchanged():
    assert redact("") == ("", Counter())


@pytest.mark.parametrize("line", [
    "a" * 100_000,
    "password=" * 11_000,
    "password:" * 11_000,
    'token="' + "a" * 100_000,
    "x://" * 25_000,
    "http://a:" + "b@" * 50_000,
    "eyJ" + "a" * 100_000 + ".",
    "eyJaaaaaaaaa." * 8_000,
    "sk-" * 33_000,
    "Bearer " * 14_000,
    "-----BEGIN RSA PRIVATE KEY-----" * 3_200,
    "secret_access_key = " * 5_000,
    "a." * 50_000,
])
def test_pathological_100kb_line_completes(line):
    with no_hang():
        redact(line)


def test_one_megabyte_is_redacted_whole():
    block = ("def handler(request):\n    token_count = len(tokens)  # see docs/api.md\n"
             f"    client = Client(api_key=\"{SA}\")\n"
             "The cache layer stores each key under its scope; see the README for details.\n")
    text = block * (1_000_000 // len(block))
    with no_hang():
        out, found = redact(text)
    assert found == Counter({"secret-assignment": text.count(SA)})
    assert SA not in out


def test_make_chunk_redacts_text_and_heading_and_reports_counts():
    chunk = make_chunk("demo", "readme", "README.md", 3, f"Use `{GH}` for CI.\nAWS: {AWS_ID}",
                       heading=f"Rotating {AWS_ID}")
    assert GH not in chunk.text and AWS_ID not in chunk.text and AWS_ID not in chunk.heading
    assert chunk.heading == "Rotating [REDACTED:aws-access-key]"
    assert chunk.redactions == Counter({"github-token": 1, "aws-access-key": 2})
    assert chunk.hash == hashlib.sha1(chunk.text.encode()).hexdigest()


def test_make_chunk_reports_nothing_for_clean_text():
    chunk = make_chunk("demo", "commit", "commit:" + "0" * 40, 0, "Fix tokenizer\n\nNo secrets.")
    assert chunk.text == "Fix tokenizer\n\nNo secrets."
    assert chunk.redactions == Counter()


@pytest.mark.parametrize("path", [
    ".env", ".env.local", ".env.production", ".env.example", "config/.ENV.test", "deploy/prod.env",
    ".dev.vars", "certs/server.pem", "tls/Private.KEY", "home/.ssh/id_rsa", "id_rsa.pub", "id_dsa",
    "keys/id_ecdsa", "id_ed25519", "config/secrets.yaml", "secrets.json", "app/credentials.json",
    "store.p12", "client.pfx", ".netrc", "home/.pgpass", "C:\\Users\\me\\.env",
])
def test_secret_files_are_recognised_at_any_depth(path):
    assert is_secret_file(path)


@pytest.mark.parametrize("path", [
    "README.md", "env.py", "src/environment.py", "docs/secrets-management.md", "keys.py",
    "monkey.py", "pem.py", "tokenizer.json", "credentials.py", "docs/credentials.json.md",
    "src/secret_santa.py", "my_id_rsa_notes.txt",
])
def test_ordinary_files_are_not_secret_files(path):
    assert not is_secret_file(path)


# --- generic assignments: the shapes that used to pass ----------------------------------


@pytest.mark.parametrize("text,secret", [
    ("password: correct horse battery staple", "correct horse battery staple"),
    ("Password: correct horse battery staple\n", "correct horse battery staple"),
    (f"DB_PASSWORD_PROD={PW}", PW),
    (f"db_pass={PW}", PW),
    (f"pwd={PW}", PW),
    (f"export MYSQL_PWD={PW}", PW),
    (f"passwd: {PW}", PW),
    (f"token_prod: {PW}", PW),
    ('password = "correct horse battery staple"', "correct horse battery staple"),
    ("db:\n  password: 'correct horse battery staple'\n", "correct horse battery staple"),
    (f"Our secret key is {PW}.", PW),
    ('The admin password is "correct horse battery staple".', "correct horse battery staple"),
    ("secret: zqxwvkrtplmnbhgfd", "zqxwvkrtplmnbhgfd"),
    ("api_key=93847561029384", "93847561029384"),
    ("Server=db;User Id=sa;Password=Fak3&Passw0rd;", "Fak3&Passw0rd"),
    ("Server=db;User Id=sa;Password=correct horse battery;Database=app", "correct horse battery"),
    (f'if password == "{PW}":', PW),
])
def test_generic_secret_shapes_are_masked(text, secret):
    out, found = redact(text)
    assert secret not in out and "Passw0rd" not in out and "horse" not in out
    assert found == Counter({"secret-assignment": 1})


@pytest.mark.parametrize("text", [
    "password = getpass()",
    "token = tokens[0]",
    "password: str",
    "password: Optional[str] = None",
    "password: str | None = None",
    "    password: The password to use when connecting.",
    ":param password: the user's password",
    'password: "The password for the account"',
    "password = password_hash + salt",
    "password = self.password or default_password",
    'password = input("Password: ")',
    "pwd = os.getcwd()",
    "passwords = load()",
    'bypass = "the cache for tests"',
    'compass = "north-north-east"',
    'token_url = "https://oauth2.example.com/token"',
    "secret = derive_secret(master)",
    "secret: !vault |",
    "token = tokenizer",
    "The password is required.",
    "The token is valid for one hour.",
    "api_key = 20231130",
    "secret = authentication",
    'if token == "#bygroup":',
    'fmt.Sprintf("https://x-access-token:%[1]s@github.com/org/repo.git", token)',
])
def test_code_and_prose_near_generic_names_are_not_masked(text):
    assert redact(text) == (text, Counter())


def test_a_query_string_keeps_the_parameters_after_the_masked_token():
    out, _ = redact(f"https://api.internal/?token={PW}&format=json")
    assert out == "https://api.internal/?token=[REDACTED:secret-assignment]&format=json"


# --- private keys: whole, however they are indented, prefixed or wrapped ---------------


def fake_key_lines(label: str, nbytes: int = 1190) -> list[str]:
    """A deterministic base64 body the size of a 2048-bit RSA key, 64 characters a line."""
    raw = b"".join(hashlib.sha256(f"{label}:{i}".encode()).digest() for i in range(nbytes // 32 + 1))
    body = "MIIEowIBAAKCAQEA" + base64.b64encode(raw[:nbytes]).decode()[16:]
    return [body[i:i + 64] for i in range(0, len(body), 64)]


def fake_pem(label: str, prefix: str = "", suffix: str = "", kind: str = "RSA PRIVATE KEY",
             end: bool = True) -> str:
    """A PEM block of ``fake_key_lines(label)``, each line wrapped in prefix and suffix."""
    lines = [f"-----BEGIN {kind}-----", *fake_key_lines(label)] + ([f"-----END {kind}-----"] if end else [])
    return "\n".join(prefix + line + suffix for line in lines)


def key_slices(label: str) -> list[str]:
    """Distinctive 30-character slices of the key body: one per line, and one across a line break."""
    lines = fake_key_lines(label)
    return [line[17:47] for line in lines if len(line) >= 47] + [lines[5][-15:] + lines[6][:15]]


KEY_SHAPES = {
    "docstring": 'def load():\n    """Test key.\n\n    ' + fake_pem("k").replace("\n", "\n    ") + '\n    """\n',
    "hash-comment": "# deploy key\n" + fake_pem("k", "# ") + "\nx = 1\n",
    "setup.cfg": "[tool:demo]\nkey =\n" + fake_pem("k", "    ") + "\nother = 1\n",
    "quoted-lines": "KEY = (\n" + fake_pem("k", '    "', '\\n"') + "\n)\n",
    "json": '{"private_key": "' + fake_pem("k", kind="PRIVATE KEY").replace("\n", "\\n") + '\\n"}',
    "c-comment": "/*\n" + fake_pem("k", " * ") + "\n */\n",
    "template": "const key = `" + fake_pem("k", kind="OPENSSH PRIVATE KEY") + "`;\n",
    "no-end": "  " + fake_pem("k", end=False).replace("\n", "\n  ") + "\n\nThe rest of the notes.\n",
    "headless": "BODY = '''\n" + "\n".join(fake_key_lines("k")) + "\n'''\n",
    "putty": ("PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\nPublic-Lines: 1\nAAAAB3NzaC1yc2E\n"
              "Private-Lines: 26\n" + "\n".join(fake_key_lines("k")) + "\nPrivate-MAC: 0f1e2d3c4b5a\n"),
}


@pytest.mark.parametrize("shape", sorted(KEY_SHAPES))
def test_private_key_is_masked_however_it_is_indented_or_wrapped(shape):
    text = KEY_SHAPES[shape]
    out, found = redact(text)
    assert found == Counter({"private-key-block": 1})
    assert not [s for s in key_slices("k") if s in out]
    assert out.count("\n") == text.count("\n")


@pytest.mark.parametrize("shape", ["docstring", "quoted-lines"])
def test_python_holding_a_masked_key_still_parses(shape):
    import ast

    ast.parse(redact(KEY_SHAPES[shape])[0])


def test_text_after_a_key_with_no_end_is_kept():
    out, _ = redact(KEY_SHAPES["no-end"])
    assert out.endswith("\n\nThe rest of the notes.\n")


def test_a_certificate_body_is_not_a_key():
    cert = "-----BEGIN CERTIFICATE-----\n" + "\n".join(fake_key_lines("c")) + "\n-----END CERTIFICATE-----"
    assert redact(cert) == (cert, Counter())


def test_secrets_in_lists_the_original_spans():
    assert secrets_in(f"token: {PW} and {GH}") == [("github-token", GH), ("secret-assignment", PW)]


def test_a_200kb_line_of_junk_completes():
    import random

    rng = random.Random(12)
    junk = "".join(rng.choice("ab=:/-_\"' .@&;AKIAsk-eyJ\\nMII+") for _ in range(200_000))
    with no_hang():
        out, _ = redact(junk)
    assert redact(out)[1] == Counter()


VENDOR_EXAMPLES = [
    fill("shpat_", 38, "fa4e0"), DIGITALOCEAN, "hvs." + fill("", 95), fill("dapi", 36, "fa4e0"), HF,
    "sq0atp-" + fill("", 22), "ATATT3" + fill("", 160), "lin_api_" + fill("", 40),
    "PMAK-" + fill("", 24, "fa4e0") + "-" + fill("", 34, "fa4e0"), "AGE-SECRET-KEY-1" + fill("", 58),
    "glc_" + fill("", 40), "glsa_" + fill("", 32) + "_" + fill("", 8, "fa4e0"), "sntrys_" + fill("", 50),
    "NRAK-" + fill("", 27), "pul-" + fill("", 40, "fa4e0"), "LTAI" + fill("", 20), "dp.pt." + fill("", 43),
    "sbp_" + fill("", 40, "fa4e0"), "key-" + fill("", 32, "fa4e0"), "gsk_" + fill("", 52), "r8_" + fill("", 37),
    "ntn_" + fill("", 46), "HRKU-" + fill("", 60), "EAAC" + fill("", 100),
    "v1.0-" + fill("", 24, "fa4e0") + "-" + fill("", 146, "fa4e0"), "sl." + fill("", 135),
    "sk.eyJ" + fill("", 30) + "." + fill("", 22), "AAAAAAAAAAAAAAAAAAAAA" + fill("", 60),
    "access_token$production$" + fill("", 16, "fake0") + "$" + fill("", 32, "fa4e0"),
    "dckr_pat_" + fill("", 27), "fo1_" + fill("", 43), "rubygems_" + fill("", 48, "fa4e0"),
    "oy2" + fill("", 43, "fake0"), "CLOJARS_" + fill("", 60, "fake0"), "ops_eyJ" + fill("", 120),
    "pscale_tkn_" + fill("", 40), "CFPAT-" + fill("", 43), "dt0c01." + fill("", 24) + "." + fill("", 64),
    "fio-u-" + fill("", 64), "pnu_" + fill("", 36, "fake0"), "rdme_" + fill("", 70, "fake0"),
    "shippo_live_" + fill("", 40, "fa4e0"), "tfp_" + fill("", 59), "EZAK" + fill("", 54, "fake0"),
    "duffel_live_" + fill("", 43), "FLWSECK_TEST-" + fill("", 32, "fa4e0") + "-X",
    "api_org_" + fill("", 34, "FAKEzero"), fill("", 32, "fa4e0") + "-us6", "123456789:AA" + fill("", 33),
    fill("", 14, "fake0") + ".atlasv1." + fill("", 64),
]


@pytest.mark.parametrize("token", VENDOR_EXAMPLES, ids=[t[:8] for t in VENDOR_EXAMPLES])
def test_each_vendor_token_is_masked(token):
    out, found = redact(f"It leaked {token} in the build log.")
    assert out == "It leaked [REDACTED:vendor-token] in the build log."
    assert found == Counter({"vendor-token": 1})


def test_redact_strings_masks_every_string_of_a_json_document():
    from loci_pipeline.redact import redact_strings

    doc = {"nodes": [{"id": "a", "label": f"Settings. token: {PW}"}, {"id": "b", "n": 3}],
           f"key {GH}": [None, True, 1.5]}
    clean, found = redact_strings(doc)
    assert clean == {"nodes": [{"id": "a", "label": "Settings. token: [REDACTED:secret-assignment]"},
                               {"id": "b", "n": 3}], "key [REDACTED:github-token]": [None, True, 1.5]}
    assert found == Counter({"secret-assignment": 1, "github-token": 1})


def test_redact_strings_returns_a_clean_document_itself():
    from loci_pipeline.redact import redact_strings

    doc = {"nodes": [{"id": "a", "label": "def main(): nothing secret"}]}
    assert redact_strings(doc) == (doc, Counter())
    assert redact_strings(doc)[0] is doc


def test_redaction_keeps_every_line_so_chunks_cite_the_right_line():
    text = "\n".join([p.values[1] for p in POSITIVES] + list(KEY_SHAPES.values())
                     + ["password: correct horse battery staple", "Server=db;Password=Fak3&Passw0rd;"])
    out, found = redact(text)
    assert found and out.count("\n") == text.count("\n")
