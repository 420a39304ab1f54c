"""`eqjax show FILE --out PATH`: pictures of a program's optimization (rewrites/show).

    eqjax show FILE|- --out egraph.html [--rules R] [--cost C] [--extractor E] [--focus CLASS] [--radius K]
        the saturated e-graph as one self-contained HTML page
    eqjax show FILE|- --out prog.svg [--rules R] [--cost C] [--extractor E]
        the program before and after optimization, as data-flow DAGs side by side

The kind of picture follows the suffix of --out; another suffix is a usage error (exit 2), and so is a
missing Graphviz (the `show` extra and the `dot` program), named with how to install it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from transforms.cli_options import UsageError

SUFFIXES = {".html": "the saturated e-graph as an HTML page", ".svg": "the program before and after, as an SVG"}


def add_show_parser(sub) -> None:
    from transforms.cli import _non_negative, _optimizer_args

    s = sub.add_parser("show", help="draw the saturated e-graph (--out X.html) or the program before and after "
                                    "optimization (--out X.svg)")
    s.add_argument("file", help="a file with jaxpr text, or - for stdin")
    s.add_argument("--out", required=True, help="X.html: the e-graph page; X.svg: the program before and after")
    _optimizer_args(s, output=False)
    s.add_argument("--focus", metavar="CLASS", help="(.html) draw only this class's neighbourhood: a name c<k> "
                                                    "from the page, a class id, or a unique part of one")
    s.add_argument("--radius", type=_non_negative(int), default=2, help="(.html) steps from the focus (default 2)")
    s.add_argument("--max-classes", type=_non_negative(int),
                   help="(.html) above this many classes, draw the outputs' neighbourhood "
                        "(default: rewrites.show.egraph_page.MAX_CLASSES, 150)")
    s.set_defaults(func=cmd_show)


def cmd_show(args: argparse.Namespace) -> int:
    from ir.text import parse_jaxpr
    from transforms.cli import _limits, _options, _read_text

    out = Path(args.out)
    kind = out.suffix.lower()
    if kind not in SUFFIXES:
        choices = "; ".join(f"{s} for {what}" for s, what in SUFFIXES.items())
        raise UsageError(f"--out: cannot tell what to draw from {args.out!r} (suffix {kind or 'none'!r}); "
                         f"end it in {choices}")
    if kind == ".svg" and args.focus is not None:
        raise UsageError("--focus draws part of the e-graph page: use it with --out X.html")
    closed = parse_jaxpr(_read_text(args.file))
    title = "stdin" if args.file == "-" else Path(args.file).name
    start = time.perf_counter()
    if kind == ".html":
        from rewrites.show import egraph_html

        given = {} if args.max_classes is None else {"max_classes": args.max_classes}
        text = egraph_html(closed, rules=args.rules, cost=args.cost, extractor=args.extractor, limits=_limits(args),
                           focus=args.focus, radius=args.radius, title=title, **given)
    else:
        from rewrites.engine import optimize
        from rewrites.show import program_svg

        optimized, _ = optimize(closed, options=_options(args))
        text = program_svg(closed, optimized)
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out} ({SUFFIXES[kind]}, {len(text.encode()):,} bytes, {time.perf_counter() - start:.2f} s)",
          file=sys.stderr)
    return 0
