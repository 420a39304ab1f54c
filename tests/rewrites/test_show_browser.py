"""`eqjax show`'s e-graph page in a real headless browser (Debian's chromium, driven by playwright): the graph
renders (a screenshot that is not blank), one cluster per e-class, no console errors and no request leaving
the page, and clicking a class lights up its neighbours; on the demo's MLP loss and on JAX's gradient of it.

Nothing here is skipped: without chromium, `dot` or playwright the tests fail saying what `make test` installs.
"""

from __future__ import annotations

import base64
import shutil
from pathlib import Path

import pytest

from rewrites.show import egraph_picture
from rewrites.show.egraph_page import class_links, page_html
from tests.rewrites.show_programs import demo_program, gradient_program

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync"]
INSTALL = ("`make test` installs them (apt-get install chromium graphviz; pip install -e '.[dev]' brings "
           "playwright, which drives the system chromium: no `playwright install`)")


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    missing = [what for what, there in ((f"Debian's chromium at {CHROMIUM}", CHROMIUM.exists()),
                                        ("Graphviz's dot", shutil.which("dot") is not None)) if not there]
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing.append("the playwright Python package")
    if missing:
        pytest.fail(f"the browser test needs {', '.join(missing)}: {INSTALL}")
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=str(CHROMIUM), headless=True,
            args=LAUNCH_ARGS, viewport={"width": 1400, "height": 1000})
        try:
            yield context
        finally:
            context.close()


# The screenshot decoded by the browser itself (a canvas), so the test needs no imaging library.
PIXEL_STATS = """async (png) => {
  const img = new Image();
  img.src = "data:image/png;base64," + png;
  await img.decode();
  const canvas = document.createElement("canvas");
  canvas.width = img.width; canvas.height = img.height;
  const ctx = canvas.getContext("2d");
  ctx.drawImage(img, 0, 0);
  const px = ctx.getImageData(0, 0, img.width, img.height).data;
  let n = 0, sum = 0, sq = 0, dark = 0;
  for (let i = 0; i < px.length; i += 4) {
    const v = (px[i] + px[i + 1] + px[i + 2]) / 3;
    n++; sum += v; sq += v * v; if (v < 128) dark++;
  }
  const mean = sum / n;
  return {width: img.width, height: img.height, variance: sq / n - mean * mean, dark: dark / n};
}"""


def open_page(browser, tmp_path: Path, html: str):
    path = tmp_path / "egraph.html"
    path.write_text(html, encoding="utf-8")
    page = browser.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("request", lambda r: problems.append(f"request: {r.url}") if not r.url.startswith("file:") else None)
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return page, problems


@pytest.mark.parametrize("program", [demo_program, gradient_program], ids=["demo-mlp-loss", "gradient"])
def test_the_egraph_page_renders(browser, tmp_path, program):
    picture = egraph_picture(program())
    view = picture.view
    assert picture.why == "all"
    page, problems = open_page(browser, tmp_path, page_html(picture, program.__name__))
    try:
        assert page.locator("#graph svg g.cluster").count() == len(view.classes)
        assert page.locator("#graph svg g.enode").count() == len(view.nodes)
        assert page.locator("#graph svg g.enode.chosen").count() == len(picture.extraction.choice)
        box = page.locator("#graph svg").bounding_box()
        assert box is not None and box["width"] > 300 and box["height"] > 100  # drawn at a readable size

        shot = page.locator("#graph").screenshot()
        stats = page.evaluate(PIXEL_STATS, base64.b64encode(shot).decode())
        assert stats["variance"] > 100 and 0.001 < stats["dark"] < 0.5, stats  # drawn, and not a black box

        children, parents = class_links(view)
        # a class with children and parents, one of its own children (x = x*1) where the e-graph has one
        linked = [c for c in view.classes if len(children[c]) > 1 and parents[c]]
        cid = next((c for c in linked if c in children[c]), linked[0])
        name = picture.names[cid]
        page.locator(f"#class-{name}").dispatch_event("click")
        marked = page.evaluate("""() => ({
            selected: [...document.querySelectorAll('g.selected')].map(g => g.id),
            child: [...document.querySelectorAll('g.child')].map(g => g.id),
            parent: [...document.querySelectorAll('g.parent')].map(g => g.id),
            details: document.getElementById('details').textContent,
            stroke: getComputedStyle(document.querySelector('g.selected path, g.selected polygon')).stroke})""")
        assert marked["selected"] == [f"class-{name}"] and marked["stroke"] == "rgb(228, 87, 46)"  # drawn orange
        assert set(marked["child"]) == {f"class-{picture.names[c]}" for c in children[cid] if c != cid}
        assert set(marked["parent"]) == {f"class-{picture.names[c]}" for c in parents[cid] if c != cid}
        assert cid in marked["details"] and f"{len(view.classes[cid])} e-nodes" in marked["details"]
        assert problems == []
    finally:
        page.close()


def test_a_neighbourhood_page_renders(browser, tmp_path):
    picture = egraph_picture(demo_program(), max_classes=10, radius=1)
    page, problems = open_page(browser, tmp_path, page_html(picture, "mlp_loss"))
    try:
        assert page.locator("#graph svg g.cluster").count() == len(picture.shown) < len(picture.view.classes)
        assert page.locator("#graph svg g.stub").count() > 0
        assert "drawn is the outputs' neighbourhood" in page.locator("header").inner_text()
        assert problems == []
    finally:
        page.close()
