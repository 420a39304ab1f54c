"""The wheel, installed (not editable) into a fresh virtualenv and run from an empty directory: every `eqjax`
command finds what it reads (the oracle fixtures ship in the wheel as data files, <prefix>/share/eqjax/oracle/)
or names in one line what it needs.

The virtualenv gets no dependencies of its own: one `.pth` line puts the running interpreter's site-packages
after its own. Python does not process the `.pth` files of a directory added that way, so the editable
install's finder there stays off and `import transforms` can only find the wheel's copy (checked).
The commands run in one process of the virtualenv, each with small options; under the `nightly` profile the
long ones run too (the demo, the benches, `rules effect` over every oracle program).
"""

from __future__ import annotations

import filecmp
import json
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

from tests.profile import NIGHTLY

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("pyproject.toml", "README.md", "ir", "rewrites", "transforms", "eval")
PROGRAM = """{ lambda ; a:f64[3] b:f64[3]. let
    c:f64[3] = sin a
    d:f64[3] = mul c b
    e:f64[] = reduce_sum[axes=(0,) out_sharding=None] d
  in (e,) }"""
RULES = "mul-by-one exact mul(x, 1.0) => x  # x*1 -> x\n"

# Each command with options that keep it to a few seconds; those marked nightly take a minute or more.
COMMANDS = [
    ["check", "prog.jaxpr"],
    ["eval", "prog.jaxpr"],
    ["measure", "prog.jaxpr", "--repeats", "3", "--json"],
    ["optimize", "prog.jaxpr", "--certificate", "run.json"],
    ["replay", "run.json"],
    ["sample", "prog.jaxpr", "-k", "2"],
    ["grad", "prog.jaxpr", "--argnums", "0,1"],
    ["jvp", "prog.jaxpr"],
    ["vjp", "prog.jaxpr"],
    ["vmap", "prog.jaxpr", "--in-axes", "0,None"],
    ["conformance", "--family", "shape"],
    ["conformance", "--family", "unary", "--check", "grad", "--json"],
    ["rules", "list"],
    ["rules", "list", "--set", "vmap", "--json"],
    ["rules", "list", "--set", "strict", "--format", "text"],
    ["rules", "verify", "mul-comm", "--budget", "20"],
    ["rules", "verify", "--set", "vmap", "vmap-sin"],
    ["rules", "effect", "extra.rules", "--programs", "prog.jaxpr"],
    ["sweep", "--programs", "prog.jaxpr", "--rules", "strict,fast", "--jobs", "2", "--json-lines", "sweep.jsonl"],
    ["rules", "semantics", "--programs", "1", "--sets", "strict", "--family", "fft"],
    ["bench", "eval", "--repeats", "1"],
    ["bench", "runtime", "--suite", "oracle", "--only", "horner", "--min-time", "0.01", "--no-first-call", "--json"],
    ["calibrate", "--backend", "numpy", "--quick", "--primitives", "sin", "--out", "profile.json", "--json"],
]
LONG_COMMANDS = [
    ["demo"],
    ["rules", "effect", "extra.rules"],
    ["rules", "verify", "--set", "ad", "jvp-sin"],
    ["bench", "optimizer"],
    ["bench", "grad"],
    ["bench", "vmap"],
    ["bench", "control"],
]

DRIVER = """
import contextlib, io, json, sys, time, traceback
import eval.oracle, transforms
from transforms.cli import main

runs = []
for argv in json.loads(sys.argv[1]):
    out, err, start = io.StringIO(), io.StringIO(), time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as e:
            status = e.code
        except Exception:
            status, err = "crashed", io.StringIO(traceback.format_exc())
    runs.append({"argv": argv, "status": status, "out": out.getvalue(), "err": err.getvalue(),
                 "seconds": round(time.perf_counter() - start, 2)})
    with open(sys.argv[2], "w") as f:  # after each command: a timeout still shows which ones ran
        json.dump({"transforms": transforms.__file__, "oracle": str(eval.oracle.DEFAULT_ORACLE), "runs": runs}, f)
"""


def _run(cmd: list, timeout: float = 900, **kwargs) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout, **kwargs)
    assert proc.returncode == 0, f"{cmd} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def _install_wheel(tmp: Path) -> Path:
    """The python of a fresh virtualenv with the wheel of a clean copy of the sources installed."""
    source = tmp / "source"
    source.mkdir(parents=True)
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "tests" / "oracle", source / "tests" / "oracle")
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", tmp / "dist", source])
    [wheel] = (tmp / "dist").glob("eqjax-*.whl")
    with zipfile.ZipFile(wheel) as z:
        [metadata] = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        requires = [line.split(":", 1)[1].strip() for line in z.read(metadata).decode().splitlines()
                    if line.startswith("Requires-Dist:")]
    runtime = [r for r in requires if "extra ==" not in r]
    assert not [r for r in runtime if r.startswith("pytest")], runtime  # test tools only in the dev extra
    assert any(r.startswith("pytest") and "extra == \"dev\"" in r for r in requires), requires
    venv.create(tmp / "venv", with_pip=False)
    python = tmp / "venv" / "bin" / "python"
    site = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    ours = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    (site / "eqjax-test-dependencies.pth").write_text("".join(f"{p}\n" for p in ours))
    _run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", "-q", wheel])
    return python


def _environment(tmp: Path) -> dict:
    """No PYTHONPATH (the checkout stays out), and the caches in the temporary directory."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(XDG_CACHE_HOME=str(tmp / "cache"), EQJAX_CACHE_DIR=str(tmp / "cache" / "eqjax"))
    return env


def test_every_command_runs_from_the_installed_wheel(tmp_path):
    installed = _install_wheel(tmp_path / "wheel")
    work = tmp_path / "work"
    work.mkdir()
    (work / "prog.jaxpr").write_text(PROGRAM)
    (work / "extra.rules").write_text(RULES)
    (tmp_path / "driver.py").write_text(DRIVER)
    commands = COMMANDS + (LONG_COMMANDS if NIGHTLY else [])
    _run([installed, tmp_path / "driver.py", json.dumps(commands), tmp_path / "runs.json"], cwd=work,
         env=_environment(tmp_path), timeout=7200 if NIGHTLY else 900)
    result = json.loads((tmp_path / "runs.json").read_text())

    site = installed.parents[1]
    assert Path(result["transforms"]).is_relative_to(site), result["transforms"]  # the wheel, not the checkout
    assert Path(result["oracle"]) == installed.parents[1] / "share" / "eqjax" / "oracle"
    ours = sorted(p.name for p in (ROOT / "tests" / "oracle").glob("*.json"))
    assert sorted(p.name for p in Path(result["oracle"]).glob("*.json")) == ours
    _, mismatch, errors = filecmp.cmpfiles(ROOT / "tests" / "oracle", result["oracle"], ours, shallow=False)
    assert not mismatch and not errors, f"the wheel's fixtures differ from tests/oracle: {mismatch + errors}"

    failed = [f"{' '.join(r['argv'])}: status {r['status']}\n{r['err'][-1500:]}" for r in result["runs"]
              if r["status"] != 0]
    assert not failed, "\n".join(failed)
    runs = {" ".join(r["argv"]): r for r in result["runs"]}
    grad = json.loads(runs["conformance --family unary --check grad --json"]["out"])
    assert grad["summary"]["skipped"] > 0 and grad["summary"]["passed"] == 0
    assert all("programs only" in o["reason"] for o in grad["outcomes"])
    shape = runs["conformance --family shape"]["out"]
    assert shape.splitlines()[-1].endswith(" passed, 0 failed, 0 skipped") and not shape.startswith("0 passed")
    assert "fingerprint" in runs["check prog.jaxpr"]["err"]
    assert (work / "profile.json").is_file() and (work / "run.json").is_file()
    sweep = [json.loads(line) for line in (work / "sweep.jsonl").read_text().splitlines()]  # spawned workers ran it
    assert [(r["args"]["rules"], r["error"]) for r in sweep] == [("strict", None), ("fast", None)]

    eqjax = installed.parent / "eqjax"  # the console script
    ok = _run([eqjax, "check", "prog.jaxpr"], cwd=work, env=_environment(tmp_path))
    assert ok.stdout.startswith("{ lambda ; a:f64[3] b:f64[3]")
    bad = subprocess.run([str(eqjax), "conformance", "--check", "grad,nope"], cwd=work, capture_output=True,
                         text=True, env=_environment(tmp_path), timeout=300)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "choose from out, jvp" in bad.stderr
