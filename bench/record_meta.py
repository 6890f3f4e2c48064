"""record_meta.py - the meta block of a bench/results record: GPU, driver, commit, date, command.

Imported by the Python parts of bench/vs-llamacpp-batched.sh and bench/vs-llamacpp-depth.sh (they
put this folder on PYTHONPATH). The GPU and driver come from nvidia-smi ("unknown" without one),
the commit from NVHCQ_COMMIT (a tree without .git) or `git rev-parse --short=10 HEAD`, the date is
today's in UTC. Standard library only.
"""
import datetime
import os
import subprocess


def _commit():
    if os.environ.get("NVHCQ_COMMIT"):
        return os.environ["NVHCQ_COMMIT"]
    try:
        return subprocess.check_output(["git", "rev-parse", "--short=10", "HEAD"], text=True).strip()
    except Exception:
        return "unknown"


def _smi(q):
    try:
        return subprocess.check_output(["nvidia-smi", "--query-gpu=" + q, "--format=csv,noheader"],
                                       text=True).strip().splitlines()[0]
    except Exception:
        return "unknown"


def meta(command):
    """The record's meta block for a result made by `command`."""
    return {"gpu": _smi("name"), "driver": _smi("driver_version"), "commit": _commit(),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"), "command": command}
