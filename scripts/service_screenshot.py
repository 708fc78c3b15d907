"""Regenerate docs/service-page.png: a real ``forensic serve`` on the example incident, in chromium.

.venv/bin/python scripts/service_screenshot.py [docs/service-page.png]
"""

from __future__ import annotations

import sys
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


def main(out: Path) -> None:
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
                    viewport={"width": 1280, "height": 1000},
                    device_scale_factor=0.625,
                )
                page = ctx.pages[0] if ctx.pages else ctx.new_page()
                page.goto(url + "/")
                page.fill("#token", "a" * 24)
                page.click("form.login button[type=submit]")
                page.wait_for_selector("#who .user")
                page.goto(f"{url}/#/investigations/{inv}")
                page.wait_for_selector("#heatlegend .swatch")
                page.wait_for_selector("#timeline svg.spark")
                page.screenshot(path=str(out))
                ctx.close()
        finally:
            proc.terminate()
            proc.wait()


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "docs" / "service-page.png"))
