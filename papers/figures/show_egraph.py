"""The README's picture (papers/figures/show-egraph.png): the demo's e-graph around class c32 as `eqjax show`
draws it, with c32 clicked, in headless chromium through the browser test's helpers.

    .venv/bin/python papers/figures/show_egraph.py papers/figures/show-egraph.png
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[2]))

from playwright.sync_api import sync_playwright  # noqa: E402

from rewrites.show import egraph_html  # noqa: E402
from tests.rewrites.show_programs import demo_program  # noqa: E402
from tests.rewrites.test_show_browser import CHROMIUM, LAUNCH_ARGS, open_page  # noqa: E402


def main(out: str) -> None:
    html = egraph_html(demo_program(), focus="c32", radius=2, title="mlp_loss (transforms/demo.py)")
    with sync_playwright() as p, tempfile.TemporaryDirectory() as profile, tempfile.TemporaryDirectory() as pages:
        context = p.chromium.launch_persistent_context(profile, executable_path=str(CHROMIUM), headless=True,
                                                       args=LAUNCH_ARGS, viewport={"width": 1500, "height": 880})
        page, problems = open_page(context, Path(pages), html)
        page.check("#actual-size")
        page.locator("#class-c32").dispatch_event("click")
        page.screenshot(path=out)
        context.close()
    if problems:
        raise SystemExit(f"the page reported problems: {problems}")


if __name__ == "__main__":
    main(sys.argv[1])
