"""Screenshots of the investigation page: a real ``forensic serve`` on the example incident, in chromium.

.venv/bin/python scripts/service_screenshot.py [OUT.png] [--before COMMIT] [--size 1400x900] [--full]

``--before COMMIT`` shows the page as that commit served it (its app.js and app.css, from git,
in place of this checkout's), against this checkout's server, for before/after pictures.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

import httpx
from forensic.harness.service.bench import (
    fault_alert,
    free_port,
    start_server,
    wait_healthy,
    webhook,
    write_config,
)
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _static_at(commit: str) -> dict[str, tuple[bytes, str]]:
    kinds = {"app.js": "text/javascript", "app.css": "text/css"}
    return {
        name: (
            subprocess.run(
                ["git", "show", f"{commit}:harness/service/static/{name}"],
                cwd=ROOT,
                check=True,
                capture_output=True,
            ).stdout,
            kind,
        )
        for name, kind in kinds.items()
    }


def _serve(body: bytes, kind: str):
    # A handler of one argument: Playwright passes (route, request) to one that takes two.
    def handler(route) -> None:
        route.fulfill(body=body, content_type=kind)

    return handler


def main(
    out: Path, *, before: str | None = None, size: tuple[int, int] = (1400, 900), full: bool = False
) -> None:
    old = _static_at(before) if before else {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        port = free_port()
        tokens = {"alertmanager": ("webhook", "w" * 24), "ann": ("approver", "a" * 24)}
        cfg = write_config(
            folder,
            port=port,
            tokens=tokens,
            bundles=[{"path": ROOT / "evals/examples/pcie-x8-mfu-drop", "job": "llm-70b-pretrain"}],
        )
        proc = start_server(cfg, port, folder / "log")
        try:
            wait_healthy(port, proc)
            url = f"http://127.0.0.1:{port}"
            alerts = [fault_alert(i, job="llm-70b-pretrain") for i in range(3)]
            for i, a in enumerate(alerts):
                a["labels"]["Hostname"] = f"gpu-e12{6 + i}"
            inv = httpx.post(
                url + "/api/v1/alerts", json=webhook(alerts), headers={"Authorization": "Bearer " + "w" * 24}
            ).json()["opened"][0]
            for _ in range(300):
                if (
                    httpx.get(
                        f"{url}/api/v1/investigations/{inv}", headers={"Authorization": "Bearer " + "a" * 24}
                    ).json()["status"]
                    != "running"
                ):
                    break
                time.sleep(0.2)
            with sync_playwright() as pw, tempfile.TemporaryDirectory() as profile:
                ctx = pw.chromium.launch_persistent_context(
                    profile,
                    executable_path="/usr/bin/chromium",
                    args=ARGS,
                    headless=True,
                    viewport={"width": size[0], "height": size[1]},
                )
                page = ctx.pages[0] if ctx.pages else ctx.new_page()
                for name, (body, kind) in old.items():
                    page.route(f"**/static/{name}", _serve(body, kind))
                page.goto(url + "/")
                page.fill("#token", "a" * 24)
                page.click("form.login button[type=submit]")
                page.wait_for_selector("#who .user")
                page.goto(f"{url}/#/investigations/{inv}")
                page.wait_for_selector("#heatlegend .swatch")
                page.wait_for_selector("#timeline svg.spark")
                page.wait_for_timeout(300)
                page.screenshot(path=str(out), full_page=full)
                ctx.close()
        finally:
            proc.terminate()
            proc.wait()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", type=Path, default=ROOT / "docs" / "img" / "service-1400x900.png")
    ap.add_argument("--before", help="a commit whose page to show")
    ap.add_argument("--size", default="1400x900")
    ap.add_argument("--full", action="store_true", help="the whole page, not only the first screen")
    a = ap.parse_args()
    w, h = (int(x) for x in a.size.split("x"))
    main(a.out, before=a.before, size=(w, h), full=a.full)
