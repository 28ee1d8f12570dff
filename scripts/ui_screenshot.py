"""Screenshot of the research page for the README: `citator ui` over an index, one brief, headless Chromium.

    .venv/bin/python scripts/ui_screenshot.py --index-dir .demo/index --out docs/img/ui.png "PROPOSITION"
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

import httpx


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("proposition", help="the proposition to brief")
    ap.add_argument("--index-dir", type=Path, required=True, help="an index built by `citator build`")
    ap.add_argument("--out", type=Path, default=Path("docs/img/ui.png"), help="where the PNG goes")
    ap.add_argument("--k", type=int, default=3, help="authorities per column")
    args = ap.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "citator.cli.main", "ui", "--index-dir", str(args.index_dir),
                               "--port", str(port), "--k", str(args.k)])
    url = f"http://127.0.0.1:{port}"
    try:
        while True:
            try:
                httpx.get(url + "/", timeout=2.0)
                break
            except httpx.TransportError:
                if server.poll() is not None:
                    raise SystemExit("citator ui did not start") from None
                time.sleep(0.3)
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1200, "height": 760})
            page.goto(url + "/?" + urlencode({"q": args.proposition}), timeout=120_000)
            page.locator("section.column details").first.evaluate("d => d.open = true")
            args.out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(args.out))
            browser.close()
        from PIL import Image  # a palette PNG: the README's image stays small

        Image.open(args.out).convert("RGB").quantize(colors=96).save(args.out, optimize=True)
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
