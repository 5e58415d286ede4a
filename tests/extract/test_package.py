"""nccllens/extract is one-way: no import cycle among its modules (imports inside functions count too),
no private name imported from another module, and workers loads without polars."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "nccllens" / "extract"


def _imports(path: Path) -> list[ast.ImportFrom | ast.Import]:
    return [n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, (ast.Import, ast.ImportFrom))]


def _graph() -> dict[str, set[str]]:
    mods = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m in mods:
        for node in _imports(PACKAGE / f"{m}.py"):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [
                f"{node.module}.{a.name}" for a in node.names] + [node.module or ""]
            for name in names:
                parts = name.split(".")
                if parts[:2] == ["nccllens", "extract"] and len(parts) > 2 and parts[2] in mods and parts[2] != m:
                    graph[m].add(parts[2])
    return graph


def test_no_import_cycle_in_the_package():
    graph, state = _graph(), {}

    def visit(m: str, path: list[str]) -> None:
        state[m] = "open"
        for n in sorted(graph[m]):
            assert state.get(n) != "open", " -> ".join([*path, m, n])
            if n not in state:
                visit(n, [*path, m])
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m, [])


def test_no_private_name_is_imported_into_the_package():
    for path in PACKAGE.glob("*.py"):
        for node in _imports(path):
            if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                private = [a.name for a in node.names if a.name.startswith("_")]
                assert not private, f"{path.name} imports {private} from {node.module}"


def test_the_stages_follow_one_another():
    graph = _graph()
    assert "tables" not in set().union(*graph.values())  # nothing inside imports the entry point
    assert {"source", "batch"} <= graph["jobs"] and "jobs" not in graph["source"] | graph["batch"]


def test_workers_load_without_polars():
    code = "import sys, nccllens.extract.workers; assert 'polars' not in sys.modules, 'polars loaded'"
    subprocess.run([sys.executable, "-c", code], check=True)
