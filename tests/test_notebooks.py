"""The notebooks run from top to bottom on the current code, and are saved with their outputs.

Each notebook is executed with nbclient on a ``python3`` kernel that is this interpreter (a
kernel spec written to a temporary folder placed first on JUPYTER_PATH), so a notebook that
no longer runs fails here.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Iterator

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
NAMES = ["which_chatbot_is_better.ipynb", "sql_over_parquet.ipynb"]


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A kernel spec named python3 that runs this interpreter."""
    root = tmp_path_factory.mktemp("jupyter")
    spec = root / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (tests)", "language": "python",
    }))
    mp = pytest.MonkeyPatch()
    mp.setenv("JUPYTER_PATH", str(root))
    mp.delenv("MPLBACKEND", raising=False)  # the kernel's inline backend draws the figures
    yield "python3"
    mp.undo()


@pytest.mark.parametrize("name", NAMES)
def test_saved_with_outputs(name: str) -> None:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, name
    for cell in code:
        assert cell.get("execution_count"), f"{name}: a cell was saved without running:\n{cell.source[:200]}"
        assert not [o for o in cell.outputs if o.output_type == "error"], f"{name}: saved with an error"
    assert any(o.output_type in ("execute_result", "display_data", "stream") for c in code for o in c.outputs)


@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs(name: str, kernel: str, tmp_path: Path) -> None:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = NotebookClient(nb, timeout=600, kernel_name=kernel, resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "\n".join(str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", "")) for o in outputs)
    if name == "which_chatbot_is_better.ipynb":
        assert sum("image/png" in o.get("data", {}) for o in outputs) == 3  # curves, differences, wins/ties/losses
        assert "bot-v2 vs bot-v1 on ndcg@10" in text
    else:
        assert "duckdb vs polars: 0.0e+00" in text
        assert "FROM warehouse.chatbot_log" in text
