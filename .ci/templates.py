"""Run what each CI template job runs (docs/ci/bundle.yml, then docs/ci/corpus.yml): its install
line and its run lines, against a local clone of this repository and an S3 server on loopback.

    python .ci/templates.py [REPO]      # REPO: the checkout to clone (default: this one, at HEAD)

No network but the package registries: the install line installs ``LOCI_INSTALL`` as the
template's comment spells it, with the clone's ``git+file://`` URL in place of the GitHub one,
into a scratch venv that sees this interpreter's packages (so ``--no-deps`` is enough and torch
is already there); the bucket is a moto server on 127.0.0.1 and ``aws s3 cp`` a shim that
writes to it. The bundle job runs once for each of two tiny repositories, then the corpus job
pulls both. Exits non-zero at the first failing step, naming it.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = ROOT / "docs" / "ci"
GIT_ENV = {"GIT_AUTHOR_NAME": "CI", "GIT_AUTHOR_EMAIL": "ci@example.invalid",
           "GIT_COMMITTER_NAME": "CI", "GIT_COMMITTER_EMAIL": "ci@example.invalid",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
REPOS = {
    "sprockets": {
        "README.md": "# sprockets\n\nCalibrate sprocket gauges and cogwheel ratchets.\n\n"
                     "## Install\n\npip install sprockets\n",
        "sprockets/gauge.py": "def calibrate_sprocket(gauge):\n    '''Zero the gauge.'''\n    return gauge\n",
    },
    "cookies": {
        "README.md": "# cookies\n\nServe sessions and cookies over HTTP with redirects.\n",
        "cookies/jar.py": "class SessionCookieJar:\n    def redirect(self, url):\n        return url\n",
    },
}
AWS_SHIM = '''import sys
import boto3
args = sys.argv[1:]
endpoint = None
if "--endpoint-url" in args:
    i = args.index("--endpoint-url")
    endpoint = args[i + 1]
    del args[i:i + 2]
if args[:2] != ["s3", "cp"] or len(args) != 4 or not args[3].startswith("s3://"):
    sys.exit(f"aws shim: only `aws s3 cp FILE s3://bucket/key` is known, got {sys.argv[1:]}")
bucket, _, key = args[3][len("s3://"):].partition("/")
boto3.client("s3", endpoint_url=endpoint).upload_file(args[2], bucket, key)
'''


def sh(*args: str, cwd: Path | None = None, env: dict | None = None) -> str:
    return subprocess.run(args, cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def make_repo(root: Path, files: dict[str, str]) -> str:
    env = {**os.environ, **GIT_ENV}
    sh("git", "init", "-q", "-b", "main", str(root), env=env)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    sh("git", "add", "-A", cwd=root, env=env)
    sh("git", "commit", "-q", "-m", "first version: the gauge and its README", cwd=root, env=env)
    return sh("git", "rev-parse", "HEAD", cwd=root).strip()


def install_spec(clone: Path) -> str:
    """LOCI_INSTALL as bundle.yml's comment gives it, pointing at the clone."""
    text = (TEMPLATES / "bundle.yml").read_text()
    found = re.search(r'LOCI_INSTALL \(.*?e\.g\.\s+"([^"]+)"', " ".join(
        line.lstrip("# ") for line in text.splitlines() if line.startswith("#")))
    if not found:
        sys.exit("docs/ci/bundle.yml: no example LOCI_INSTALL (`e.g. \"...\"`) in its comment")
    spec, n = re.subn(r"git\+https://[^\s#\"@]+", f"git+{clone.as_uri()}", found.group(1))
    if not n:
        sys.exit(f"docs/ci/bundle.yml: the example LOCI_INSTALL {found.group(1)!r} has no git+https:// URL")
    return spec


def scratch_venv(where: Path) -> Path:
    """A venv without pip of its own that sees this interpreter's packages (a .pth line), so the
    install line needs no download; what it installs itself shadows them."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    site = Path(sh(str(where / "bin" / "python"), "-c", "import sysconfig;print(sysconfig.get_paths()['purelib'])").strip())
    parent = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "parent-packages.pth").write_text("\n".join(sorted(parent)) + "\n")
    pip = where / "bin" / "pip"   # this interpreter's pip, run by the venv's python (a job's `pip`)
    pip.write_text(f'#!/bin/sh\nexec "{where / "bin" / "python"}" -m pip "$@"\n')
    pip.chmod(0o755)
    return where / "bin"


def expand(text: str, values: dict[str, str]) -> str:
    def one(match: re.Match) -> str:
        expr = match.group(1).strip()
        if expr not in values:
            sys.exit(f"a template uses ${{{{ {expr} }}}}, which .ci/templates.py does not know: add it to VALUES")
        return values[expr]
    return re.sub(r"\$\{\{(.*?)\}\}", one, text)


def run_job(template: str, values: dict[str, str], workspace: Path, env: dict) -> None:
    doc = yaml.safe_load((TEMPLATES / template).read_text())
    for job_name, job in doc["jobs"].items():
        job_env = {**env, **{k: expand(str(v), values) for k, v in (job.get("env") or {}).items()}}
        for step in job["steps"]:
            if "uses" in step:   # checkout is laid out by the caller; setup-python and the cache are no-ops here
                continue
            script = expand(step["run"], values)
            print(f"[{template} {job_name}] $ {script.strip()}", flush=True)
            done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                                  cwd=workspace, env=job_env)
            if done.returncode:
                sys.exit(f"{template}, job {job_name}: `{step.get('name') or script.strip()}` "
                         f"exited {done.returncode}")


def main(repo: Path) -> None:
    import logging

    from moto.server import ThreadedMotoServer
    import boto3

    logging.getLogger("werkzeug").disabled = True   # the S3 server's request lines stay out of the log

    tmp = Path(tempfile.mkdtemp(prefix="loci-templates-"))
    clone = tmp / "loci"
    sh("git", "clone", "-q", str(repo), str(clone))
    bin_dir = scratch_venv(tmp / "venv")
    (bin_dir / "aws").write_text(f"#!{bin_dir / 'python'}\n{AWS_SHIM}")
    (bin_dir / "aws").chmod(0o755)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "LOCI_HOME")}
        env.update(GIT_ENV, PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", HF_HUB_OFFLINE="1",
                   AWS_EC2_METADATA_DISABLED="true", PIP_RETRIES="0", PIP_NO_DEPS="1")
        boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                     aws_access_key_id="testing", aws_secret_access_key="testing").create_bucket(Bucket="corpus")
        values = {"secrets.LOCI_AWS_ACCESS_KEY_ID": "testing", "secrets.LOCI_AWS_SECRET_ACCESS_KEY": "testing",
                  "vars.AWS_REGION || 'us-east-1'": "us-east-1", "vars.LOCI_S3_ENDPOINT": endpoint,
                  "vars.LOCI_INSTALL": install_spec(clone), "vars.LOCI_BUCKET": "s3://corpus/bundles",
                  "vars.LOCI_MERGED": "s3://corpus/merged", "github.run_id": "1"}
        for name, files in REPOS.items():
            workspace = tmp / f"ws-{name}"
            sha = make_repo(workspace / name, files)
            run_job("bundle.yml", {**values, "github.workspace": str(workspace), "github.sha": sha,
                                   "github.event.repository.name": name, "github.repository": f"you/{name}"},
                    workspace, env)
        workspace = tmp / "ws-corpus"
        workspace.mkdir()
        run_job("corpus.yml", {**values, "github.workspace": str(workspace)}, workspace, env)
        merged = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="testing",
                              aws_secret_access_key="testing").list_objects_v2(Bucket="corpus", Prefix="merged/")
        print(f"templates: bundle.yml x{len(REPOS)} and corpus.yml ran; merged/ holds "
              f"{', '.join(sorted(o['Key'][len('merged/'):] for o in merged.get('Contents', [])))}")
    finally:
        server.stop()
        subprocess.run(["rm", "-rf", str(tmp)])


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else ROOT)
