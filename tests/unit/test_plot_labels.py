"""Figure text is plain text: no tick label of a report's figures is mathtext typed out as "$...$"."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from ycsb_runner.report import plots
from ycsb_runner.runs.model import RunResult

RUNS = Path(__file__).resolve().parent.parent / "data" / "runs"


def _labels(fig: Any) -> list[str]:
    fig.canvas.draw()
    return [t.get_text() for ax in fig.axes for t in ax.get_xticklabels() + ax.get_yticklabels()]


def test_spectrum_log_axis_labels_are_plain_numbers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = Path(shutil.copytree(RUNS / "tencent-analyse", tmp_path / "run"))
    ops = pd.read_csv(folder / "operations.csv")
    ops["p99_us"] *= 1000  # a stall: the tail spans more than 30x, the spectrum's y axis goes log
    ops.to_csv(folder / "operations.csv", index=False)
    seen: list[tuple[str, list[str]]] = []
    real = plots.png

    def keep(fig: Any) -> bytes:
        seen.append((fig.axes[0].get_yscale(), _labels(fig)))
        return real(fig)

    monkeypatch.setattr(plots, "png", keep)
    plots.draw(plots.plot_spectrum(RunResult.load(folder))[0])
    assert any(scale == "log" for scale, _ in seen)
    labels = [text for _, texts in seen for text in texts if text]
    assert labels and not [text for text in labels if "$" in text or "mathdefault" in text], labels
