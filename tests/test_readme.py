"""The README is checked: its set-up commands match CI and its Python examples run; the relative links of
the README and of the pages under docs/ point at files that exist."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_readme_starts_with_the_two_setup_commands():
    lines = README.splitlines()
    assert lines[0] == "```bash"
    install_demo, install_test = lines[1], lines[2]
    assert install_demo.endswith("&& kimiops demo")
    assert install_test.endswith("&& python3 -m pytest -q")
    ci = (ROOT / ".ci" / "run").read_text()
    # CI runs the README's test command (with the same pins)
    assert "torch==2.13.0 triton==3.6.0" in install_test and "torch==2.13.0 triton==3.6.0" in ci
    assert "python3 -m pytest -q" in ci


@pytest.mark.parametrize("index", range(len(re.findall(r"```python\n", README))))
def test_readme_python_examples_run(index):
    blocks = re.findall(r"```python\n(.*?)```", README, flags=re.S)
    exec(compile(blocks[index], f"README.md[python block {index}]", "exec"), {})


DOC_PAGES = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md"))]


@pytest.mark.parametrize("page", DOC_PAGES)
def test_relative_links_of_the_docs_resolve(page):
    text = (ROOT / page).read_text()
    targets = [t for t in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text) if "://" not in t]
    missing = [t for t in targets if not ((ROOT / page).parent / t).exists()]
    assert not missing, f"{page}: links to missing files {missing}"
