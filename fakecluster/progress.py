"""The live line ``fakecluster run`` keeps on a terminal: which scenario, virtual time, events and pods.

A 2,000-pod run takes seconds of wall time; without a sign of life it looks hung. The line is drawn with
tqdm on stderr, only when stderr is a terminal (CI logs and pipes stay clean), and result lines are
written through it so the bar never garbles them. The run reports through
:data:`fakecluster.session.ProgressCallback`, which only reads the cluster: progress cannot change a
trace.
"""

from __future__ import annotations

import shutil
import sys
from typing import Any, TextIO

__all__ = ["Progress"]


class Progress:
    """A bar over the planned runs, with the current run's virtual time, events and pods."""

    def __init__(self, total: int, *, enabled: bool) -> None:
        self._bar: Any = None
        if enabled:
            from tqdm import tqdm

            tqdm.monitor_interval = 0  # no monitor thread: a run stays single-threaded
            # COLUMNS/LINES, else the terminal, else 80x24: a terminal that reports 0x0 (a fresh pty, some
            # CI runners) would otherwise make tqdm draw nothing
            size = shutil.get_terminal_size()
            self._bar = tqdm(
                total=total, unit="run", file=sys.stderr, leave=False, ncols=size.columns, nrows=size.lines
            )
        self.enabled = self._bar is not None

    @staticmethod
    def wanted(stream: TextIO | None = None) -> bool:
        """Whether the stream (default: the current ``sys.stderr``, looked up at call time, so a replaced
        or captured stream is the one asked) is a terminal."""
        stream = sys.stderr if stream is None else stream
        return not stream.closed and stream.isatty()

    def start(self, label: str) -> None:
        if self._bar is not None:
            self._bar.set_description_str(label, refresh=False)
            self._bar.set_postfix_str("", refresh=True)

    def update(self, now: float, events: int, pods: int) -> None:
        if self._bar is not None:
            self._bar.set_postfix_str(f"virtual {now:,.1f}s  events {events:,}  pods {pods:,}")

    def done(self) -> None:
        if self._bar is not None:
            self._bar.update(1)

    def write(self, text: str) -> None:
        """Print a line to stdout without tearing the bar."""
        if self._bar is not None:
            self._bar.write(text, file=sys.stdout)
        else:
            print(text)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
