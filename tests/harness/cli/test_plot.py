"""``forensic plot``: a heat map and a timeline for every example, as real, non-blank PNGs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from forensic.harness.graph import Investigator
from forensic.harness.plots import DPI, FIGSIZE, PlotError, plot
from forensic.sandbox import Bundle

from tests import cli

EXAMPLES = Path(__file__).resolve().parents[3] / "evals" / "examples"
CASES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "bundle").is_dir())


def _check_png(path: Path) -> np.ndarray:
    import matplotlib.image as mpimg

    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    img = mpimg.imread(path)
    assert img.shape[:2] == (int(FIGSIZE[1] * DPI), int(FIGSIZE[0] * DPI))
    rgb = img[..., :3].reshape(-1, 3)
    # not blank: many distinct colours, and a fair share of pixels that are not the background
    assert len(np.unique((rgb * 255).astype(np.uint8), axis=0)) > 50
    assert (np.abs(rgb - 1.0).sum(axis=1) > 0.1).mean() > 0.05
    return img


@pytest.mark.parametrize("case", CASES)
def test_every_example_draws_both_pictures(case: str, tmp_path: Path) -> None:
    bundle = Bundle(EXAMPLES / case / "bundle")
    report = Investigator(bundle).run()
    for kind in ("rank-heatmap", "timeline"):
        out = plot(kind, report, bundle, tmp_path / f"{kind}.png")
        _check_png(out)


def test_the_heatmap_marks_the_straggler(tmp_path: Path) -> None:
    bundle = Bundle(EXAMPLES / "thermal-throttle-straggler" / "bundle")
    img = _check_png(plot("rank-heatmap", Investigator(bundle).run(), bundle, tmp_path / "h.png"))
    # the onset line and the rank marker are drawn in cyan
    rgb = img[..., :3]
    cyan = (rgb[..., 0] < 0.3) & (rgb[..., 1] > 0.7) & (rgb[..., 2] > 0.7)
    assert cyan.sum() > 200


def test_an_unknown_host_or_kind_is_a_clear_error(tmp_path: Path) -> None:
    bundle = Bundle(EXAMPLES / "pcie-x8-mfu-drop" / "bundle")
    report = Investigator(bundle).run()
    with pytest.raises(PlotError, match="no host"):
        plot("timeline", report, bundle, tmp_path / "t.png", host="nope")
    with pytest.raises(PlotError, match="unknown picture"):
        plot("pie", report, bundle, tmp_path / "t.png")


def test_the_plot_command(tmp_path: Path) -> None:
    def forensic(*args: str) -> subprocess.CompletedProcess:
        return cli.forensic(
            *args, state=tmp_path, env={"MPLCONFIGDIR": str(tmp_path)}, cwd=tmp_path, timeout=120
        )

    assert (
        forensic("investigate", str(EXAMPLES / "pcie-x8-mfu-drop"), "--json", "--thread", "p").returncode == 0
    )
    out = forensic("plot", "p", "timeline", "--out", str(tmp_path / "tl.png"))
    assert out.returncode == 0, out.stderr
    _check_png(tmp_path / "tl.png")
    default = forensic("plot", "p", "rank-heatmap")
    assert default.returncode == 0 and (tmp_path / "p-rank-heatmap.png").is_file()
    bad = forensic("plot", "p", "pie")
    assert bad.returncode == 2 and "unknown picture" in bad.stderr and "Traceback" not in bad.stderr
    nothread = forensic("plot", "zz", "timeline")
    assert nothread.returncode == 2 and "zz" in nothread.stderr
    assert json.loads(forensic("list", "--json").stdout)[0]["thread"] == "p"
