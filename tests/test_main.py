"""The installed script's fast path: ``nccllens analyze`` parsed without typer, everything else through typer."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from nccllens.main import parse_analyze

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "fixtures" / "wrapper_hides_exit_code"


def test_common_command_lines_are_parsed_here():
    got = parse_analyze(["logs/", "--format", "json", "-o", "r.json", "--lang=zh", "--rules", "a", "--rules", "b",
                         "--select", "NL-GPU-001", "--ignore=x", "--rank", "3", "--host", "h1", "--fail-on", "warning",
                         "--exit-zero", "-q", "--verbose", "-", "more.log"])
    assert got == {"paths": ["logs/", "-", "more.log"], "fmt": "json", "output": "r.json", "lang": "zh",
                   "rules": ["a", "b"], "select": ["NL-GPU-001"], "ignore": ["x"], "host": "h1", "rank": 3,
                   "fail_on": "warning", "exit_zero": True, "quiet": True, "verbose": True}


@pytest.mark.parametrize("args", [[], ["--help"], ["logs/", "--format", "pdf"], ["logs/", "--rank", "x"],
                                  ["logs/", "-fjson"], ["logs/", "--unknown"], ["logs/", "--format"],
                                  ["--", "logs/"], ["logs/", "-f=json"]])
def test_anything_else_goes_to_typer(args):
    assert parse_analyze(args) is None


def _run(module: str, *args: str) -> subprocess.CompletedProcess:
    code = f"import sys; sys.argv[0] = 'nccllens'; from {module} import main; main()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300)


def test_the_fast_path_writes_what_the_typer_path_writes():
    args = ("analyze", str(FIXTURE), "--format", "json")
    fast, slow = _run("nccllens.main", *args), _run("nccllens.cli", *args)
    assert fast.stdout == slow.stdout and fast.returncode == slow.returncode == 1
    bad = ("analyze", str(FIXTURE), "--format", "pdf")  # typer's own error message and exit status
    assert _run("nccllens.main", *bad).returncode == _run("nccllens.cli", *bad).returncode == 2


def test_quiet_and_html_footer_are_the_same_on_both_paths(tmp_path):
    quiet = ("analyze", str(FIXTURE), "-q")
    assert _run("nccllens.main", *quiet).stdout == _run("nccllens.cli", *quiet).stdout
    for module in ("nccllens.main", "nccllens.cli"):
        out = tmp_path / f"{module}.html"
        _run(module, "analyze", str(FIXTURE), "-o", str(out))
        assert f"nccllens analyze {FIXTURE} -o {out}" in out.read_text(), module


# what the analyze path of each format must not load: the CLI framework (typer, click, pydantic: ~0.15 s),
# the renderers of other formats (rich, jinja2, markdown), the fleet extra, and parsers a run from the
# caches with no configuration file needs none of (tomllib)
_NOT_LOADED = ("typer", "click", "pydantic", "jinja2", "markdown", "dask", "distributed", "fsspec", "statistics")


@pytest.mark.parametrize(("fmt", "also_absent"), [("json", ("rich",)), ("text", ()), ("md", ("rich",))])
def test_the_fast_path_loads_no_cli_framework(tmp_path, fmt, also_absent):
    log = tmp_path / "logs" / "tiny.log"
    log.parent.mkdir()
    log.write_text("[rank0]: RuntimeError: boom\n")
    code = "import sys; sys.argv[0] = 'nccllens'; from nccllens.main import main; main()"
    args = ["analyze", str(log.parent), "--exit-zero", "--format", fmt]
    env = {k: v for k, v in os.environ.items() if k != "NCCLLENS_NO_CACHE"}
    env.setdefault("NCCLLENS_CACHE_DIR", str(tmp_path / "cache"))
    for _ in range(2):  # the second run reads the rule set and the plan from the caches a user's second run finds
        run = subprocess.run([sys.executable, "-X", "importtime", "-c", code, *args], capture_output=True, text=True,
                             timeout=300, cwd=tmp_path, env=env)
    imported = {line.rsplit("|", 1)[-1].strip() for line in run.stderr.splitlines() if "|" in line}
    assert run.returncode == 0 and "boom" in run.stdout
    assert "nccllens.analysis" in imported
    assert not {m for m in imported if m.split(".")[0] in (*_NOT_LOADED, *also_absent)}
    assert "tomllib" not in imported or sys.version_info < (3, 11)


def test_the_installed_script_runs_main():
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["nccllens"] == "nccllens.main:main"


def test_every_dataclass_has_a_docstring():
    # without one, dataclass() builds __doc__ from inspect.signature(cls) when the module loads: start-up time
    import ast

    missing = []
    for path in sorted((ROOT / "nccllens").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and ast.get_docstring(node) is None and any(
                    "dataclass" in ast.unparse(d) for d in node.decorator_list):
                missing.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert missing == []
