"""The /loci skill: shipped in the package, installed atomically, in step with the CLI."""
import re
import shlex

import pytest
import typer
from typer.testing import CliRunner

from loci.front.cli import app
from loci.front.skill import default_dir, skill_text

runner = CliRunner()


def front_matter(text: str) -> dict[str, str]:
    assert text.startswith("---\n"), "SKILL.md must open with YAML front matter"
    head = text[4:text.index("\n---\n", 4)]
    return dict(line.split(":", 1) for line in head.splitlines() if line.strip())


def usage_block(text: str) -> list[str]:
    section = text.split("## Usage", 1)[1]
    return section.split("```", 2)[1].strip().splitlines()


def loci_commands(text: str) -> list[str]:
    """Every `loci ...` command line the skill shows: the usage block's right column and code spans."""
    rows = [re.split(r"\s{2,}", line.strip()) for line in usage_block(text)]
    assert all(len(r) == 2 and r[0].startswith("/loci ") and r[1].startswith("loci ") for r in rows), rows
    commands = [right.split(" ", 1)[1] for _left, right in rows]
    commands += [m.group(1) for m in re.finditer(r"`loci ([^`]+)`", text)]
    return commands


def problems(command: str, root) -> list[str]:
    """What in one command line does not exist in the CLI: unknown (sub)commands or flags."""
    cmd, found = root, []
    for word in shlex.split(command.replace("...", "")):
        if word.startswith("<") or word.startswith("["):
            if cmd is root:
                return []          # `loci <anything else>`: the passthrough row
            continue
        if word.startswith("-"):
            opts = {o for p in cmd.params for o in getattr(p, "opts", [])} | {"--help"}
            if word.split("=", 1)[0] not in opts:
                found.append(f"{word} is not an option of `loci {cmd.name}`")
            continue
        if hasattr(cmd, "commands"):   # a command group: the word picks a subcommand
            if word not in cmd.commands:
                found.append(f"`{word}` is not a loci command")
                return found
            cmd = cmd.commands[word]
    return found


@pytest.fixture(scope="module")
def cli():
    """The click command tree typer builds from the app."""
    return typer.main.get_command(app)


def test_front_matter_names_the_skill_and_says_when_to_use_it():
    meta = front_matter(skill_text())
    assert meta["name"].strip() == "loci"
    assert len(meta["description"].strip()) > 80
    assert "argument-hint" in meta


def test_every_command_the_skill_mentions_exists_in_the_cli(cli):
    text = skill_text()
    assert len(loci_commands(text)) >= 15
    bad = [p for c in loci_commands(text) for p in problems(c, cli)]
    assert bad == []


def test_the_drift_check_catches_a_removed_command_or_flag(cli):
    assert problems('frobnicate "<question>"', cli)
    assert problems('ask --frobnicate "<question>"', cli)
    assert problems("groups frobnicate", cli)
    assert problems('route --explain "<question>"', cli) == []


def test_usage_covers_each_subcommand_and_the_passthrough():
    rows = " ".join(usage_block(skill_text()))
    for sub in ("update", "doctor", "scopes", "route", "add", "setup", "<anything else>"):
        assert f"/loci {sub}" in rows
    assert '/loci "<question>"' in rows and 'loci ask "<question>"' in rows


def test_skill_teaches_project_root_and_abstention():
    text = skill_text()
    assert "project root" in text and "ABSTAINED" in text
    assert "--scope" in text and "candidates" in text


def test_install_writes_the_packaged_skill_into_the_given_dir(tmp_path):
    res = runner.invoke(app, ["skill", "install", "--dir", str(tmp_path / "skills" / "loci")])
    target = tmp_path / "skills" / "loci" / "SKILL.md"
    assert res.exit_code == 0, res.output
    assert target.read_text() == skill_text() and str(target) in res.output


def test_install_defaults_to_the_claude_skills_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    res = runner.invoke(app, ["skill", "install"])
    assert res.exit_code == 0, res.output
    assert default_dir() == tmp_path / ".claude" / "skills" / "loci"
    assert (default_dir() / "SKILL.md").read_text() == skill_text()


def test_reinstall_replaces_an_old_copy_and_leaves_no_temp_files(tmp_path):
    dest = tmp_path / "loci"
    dest.mkdir()
    (dest / "SKILL.md").write_text("an older skill")
    res = runner.invoke(app, ["skill", "install", "--dir", str(dest)])
    assert res.exit_code == 0
    assert [p.name for p in dest.iterdir()] == ["SKILL.md"]
    assert (dest / "SKILL.md").read_text() == skill_text()


def test_print_writes_the_skill_to_stdout_and_no_file(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    res = runner.invoke(app, ["skill", "install", "--print"])
    assert res.exit_code == 0 and res.output == skill_text()
    assert not (tmp_path / ".claude").exists()


def test_an_unwritable_dir_is_a_one_line_error(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    res = runner.invoke(app, ["skill", "install", "--dir", str(blocker / "loci")])
    assert res.exit_code == 1
    assert "cannot write" in res.output and "--dir" in res.output
    assert "Traceback" not in res.output and len(res.output.strip().splitlines()) == 1


def test_the_skill_names_each_abstention_reason_as_the_cli_prints_it():
    from loci.front.render import REASONS

    text = " ".join(skill_text().split())
    for cause, reason in REASONS.items():   # every cause the CLI can print, {languages} as it reads
        assert reason.split("{", 1)[0] in text, cause


def test_no_abstention_fix_offers_a_flag_the_route_command_lacks():
    from loci.front.render import FIXES

    for cause, fix in FIXES.items():
        assert "--scope" not in fix.replace("loci ask --scope", ""), cause


def test_the_skill_explains_every_marker_a_route_prints_for_the_vectors_part():
    from types import SimpleNamespace

    from loci.front.render import _by_meaning

    text = " ".join(skill_text().split())
    for action in ("added", "led", "rescued", "fused", "narrowed"):
        marker = _by_meaning(SimpleNamespace(semantic={"action": action, "scope": "x", "dropped": ["x"]}, scopes=["x"]))
        words = marker.strip().strip("()").removeprefix("x ")   # the scope it names, then what it says
        assert words and words[:30] in text, (action, words)
