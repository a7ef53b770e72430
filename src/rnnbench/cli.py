"""What `rnnbench train` and `python train.py` print when something is wrong: one line, never a traceback.

- Our errors (``RnnbenchError``): ``error: <message>``, exit status 2 (130 for Ctrl-C).
- Hydra's own config errors (an unknown key, a value outside an enum, a missing config
  group option, an override that does not parse) are printed by Hydra over several lines
  with exit status 1: ``one_line_hydra_errors`` turns them into one ``error:`` line with
  status 2 (``HYDRA_FULL_ERROR=1`` still shows Hydra's full report).
"""
from __future__ import annotations

import difflib
import os
import re
import sys

DROP = ("full_key:", "reference_type=", "object_type=", "To append to your config use", "Config search path",
        "provider=", "See https://hydra.cc", "Set the environment variable HYDRA_FULL_ERROR")


def one_line(message: str) -> str:
    """Hydra's multi-line message as one line: detail lines dropped, option lists joined."""
    parts: list[str] = []
    listing: list[str] | None = None
    for raw in message.splitlines():
        line = raw.strip()
        if not line or any(line.startswith(d) for d in DROP):
            if listing is not None and not line:
                continue
            if listing is not None:
                parts[-1] += " " + ", ".join(listing)
                listing = None
            continue
        if listing is not None and raw.startswith(("\t", " ")):
            listing.append(line)
            continue
        if listing is not None:
            parts[-1] += " " + ", ".join(listing)
            listing = None
        parts.append(line)
        if line.endswith(":") and line.lower().startswith("available options"):
            listing = []
    if listing is not None:
        parts[-1] += " " + ", ".join(listing)
    text = "; ".join(p.rstrip(".") for p in parts)
    return re.sub(r"\s+", " ", text)


def config_error_line(exc: BaseException) -> str:
    text = str(exc)
    cause = exc.__cause__
    if cause is not None and str(cause) and str(cause) not in text:
        text += "\n" + str(cause)
    line = one_line(text)
    if "not in" in line and "Key '" in line:
        close = _close_key(cause)
        line += (f"; did you mean {close}?" if close
                 else "; check its spelling (`python train.py --cfg job` prints every key)")
    return line


def _close_key(cause: BaseException | None) -> str | None:
    """The existing key nearest a misspelt one (``encoder.hidden_size`` for ``encoder.hiden_size``),
    read off the config node OmegaConf names in its error; None when there is none close."""
    key, node, full_key = (getattr(cause, name, None) for name in ("key", "parent_node", "full_key"))
    try:
        known = [str(k) for k in node.keys()] if node is not None and key is not None else []
    except Exception:  # a node that cannot list its keys: no suggestion
        return None
    close = difflib.get_close_matches(str(key), known, n=1)
    if not close:
        return None
    prefix = str(full_key).rpartition(".")[0] if full_key else ""
    return f"{prefix}.{close[0]}" if prefix else close[0]


def one_line_hydra_errors() -> None:
    """Wrap Hydra's error reporter so its config errors become one line and exit status 2."""
    try:
        import hydra._internal.utils as hydra_utils
        from hydra.errors import HydraException
        from omegaconf.errors import OmegaConfBaseException
    except ImportError:  # another Hydra layout: keep its own reports
        return
    original = hydra_utils.run_and_report
    if getattr(original, "_rnnbench", False):
        return

    def run_and_report(func):
        def guarded():
            try:
                return func()
            except (HydraException, OmegaConfBaseException) as exc:
                if os.environ.get("HYDRA_FULL_ERROR") == "1":
                    raise
                print(f"error: {config_error_line(exc)}", file=sys.stderr, flush=True)
                sys.exit(2)

        return original(guarded)

    run_and_report._rnnbench = True
    hydra_utils.run_and_report = run_and_report
