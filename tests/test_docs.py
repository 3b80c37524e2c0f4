"""What the README tells a new user to run agrees with what CI runs."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CPU_INDEX = re.compile(r"pip install torch --index-url (https://download\.pytorch\.org/whl/cpu)\b")


def test_the_readme_installs_torch_from_the_cpu_index_the_ci_workflow_uses():
    readme = ROOT / "README.md"
    section = readme.read_text().split("## Run the tests", 1)[1].split("\n## ", 1)[0]
    found = CPU_INDEX.search(section)
    assert found, "README's test section does not say how to take torch from the CPU index"
    assert found.group(1) in CPU_INDEX.search((ROOT / ".github" / "workflows" / "ci.yml").read_text()).group(1)


def test_the_readme_test_command_is_the_one_ci_runs():
    """One line a new user pastes on this project's machines; .ci/run installs the same torch
    and runs the same test command."""
    section = (ROOT / "README.md").read_text().split("## Run the tests", 1)[1].split("\n## ", 1)[0]
    command = section.split("```bash\n", 1)[1].split("\n```", 1)[0].strip()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "\n" not in command and command.endswith("python -m pytest")
    assert "pip install torch==2.13.0" in command and "torch==2.13.0" in ci
    assert "\npython -m pytest\n" in ci
