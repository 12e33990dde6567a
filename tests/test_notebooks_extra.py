"""``pip install ".[notebooks]"`` gives what the notebooks import, and Jupyter to open them."""

from __future__ import annotations

import ast
import json
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def requirement_names(reqs: list[str]) -> set[str]:
    return {re.split(r"[<>=!~\[ ;]", r, maxsplit=1)[0].lower().replace("_", "-") for r in reqs}


def test_the_notebooks_extra_covers_their_imports() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    installed = requirement_names(project["dependencies"]) | requirement_names(project["optional-dependencies"]["notebooks"])
    assert {"jupyterlab", "ipykernel"} <= installed
    imported: set[str] = set()
    for path in (ROOT / "notebooks").glob("*.ipynb"):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] == "code":
                for node in ast.walk(ast.parse("".join(cell["source"]))):
                    if isinstance(node, ast.Import):
                        imported |= {a.name.split(".")[0] for a in node.names}
                    elif isinstance(node, ast.ImportFrom) and node.module:
                        imported.add(node.module.split(".")[0])
    third_party = {m.replace("_", "-") for m in imported - set(sys.stdlib_module_names)} - {"rank-polars"}
    assert third_party and third_party <= installed, third_party - installed
