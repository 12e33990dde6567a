"""One measured run of a benchmark script as a fresh process: its JSON result (the last line it
prints) with the CPU seconds and peak RSS the kernel reports for it (``wait4``), so that a
figure counts the whole process and nothing of the parent's.  Shared by the ``*_costs.py``
scripts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time


def measured(script: str, args: list[str], timeout: float | None = None) -> dict[str, object] | None:
    """``python script *args``; ``None`` if it ran past ``timeout`` seconds (then killed)."""
    proc = subprocess.Popen([sys.executable, script, *args], stdout=subprocess.PIPE, text=True)
    t0 = time.monotonic()
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if timeout is not None and time.monotonic() - t0 > timeout:
            proc.kill()
            os.wait4(proc.pid, 0)
            return None
        time.sleep(0.05)
    assert proc.stdout is not None
    out = proc.stdout.read()
    if status != 0:
        raise RuntimeError(f"{script} {args}: exit {status}\n{out}")
    result = json.loads(out.strip().splitlines()[-1])
    result["cpu"] = usage.ru_utime + usage.ru_stime
    result["rss_mib"] = usage.ru_maxrss / 1024
    return result
