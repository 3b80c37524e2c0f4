"""What the README tells a new user to run agrees with what CI runs."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CPU_INDEX = re.compile(r"pip install torch --index-url (https://download\.pytorch\.org/whl/cpu)\b")


def test_the_readme_installs_torch_from_the_cpu_index_the_ci_workflow_uses():
    readme = ROOT / "README.md"
    section = readme.read_text().split("## Run the tests", 1)[1].split("\n## ", 1)[0]
    found = CPU_INDEX.search(section)
    assert found, "README's test command installs torch without the CPU index"
    assert found.group(1) in CPU_INDEX.search((ROOT / ".github" / "workflows" / "ci.yml").read_text()).group(1)
