"""The AD and batching rules through `eqjax rules verify --set ad|vmap`: every VJP rule against its JVP rule
by the transpose identity, every batching rule against a loop over slices, on the oracle's equations.
CI fails on a rule the evidence contradicts; deliberately broken transforms are caught."""

from __future__ import annotations

import json

import numpy as np
import pytest

import transforms.ad.verify as ad_verify
import transforms.batching.verify as batching_verify
from tests.profile import NIGHTLY
from transforms.cli import main
from transforms.sample_check import verdict_name

# Primitives with rules that no oracle program has at top level (they are what AD or the algebra builds, or
# sit only inside loop bodies, or only in JAX's gradient programs or library code): the spec-table tests cover them
# (unstack's are in tests/eval/test_jax_gradient_programs.py; geqrf's, of slogdet's QR method, in test_geqrf.py).
NOT_SAMPLED = {"add_any", "copy_p", "scatter-sub", "select_and_gather_add", "select_and_scatter_add", "unstack"}
NOT_SAMPLED_VMAP = NOT_SAMPLED | {"geqrf", "eq_to", "lt_to", "igamma_grad_a", "random_gamma_grad"}
# Oracle equations per primitive: one under the `ci` profile (the family spec tables cover the variants),
# two nightly.
PER_PRIMITIVE = 2 if NIGHTLY else 1


# Each sweep is cut into CHUNKS tests (every CHUNKS-th primitive of the sorted list) so that pytest-xdist spreads
# it over its workers; together the chunks check every primitive, as one test did (~30 s of CPU each sweep).
CHUNKS = 4


def _vjp_names() -> list[str]:
    ad_verify.ad_rules()
    return sorted(verdict_name("vjp", p) for p in ad_verify.VJP)


def _vmap_names() -> list[str]:
    batching_verify.vmap_rules()
    return sorted(verdict_name("vmap", p) for p in set(batching_verify.BATCH) | set(batching_verify.POLICY))


VJP_UNKNOWN = {verdict_name("vjp", p) for p in NOT_SAMPLED}


def _vmap_unknown() -> set[str]:
    return {verdict_name("vmap", p) for p in NOT_SAMPLED_VMAP | set(batching_verify.NOT_A_LOOP)}


def _assert_chunk(verdicts, names: list[str], expected_unknown: set[str]) -> None:
    """Every rule of the chunk has a verdict: none unsound, `unknown` exactly for the expected ones, the rest ok."""
    assert sorted(v.name for v in verdicts) == names
    wrong = [str(v) for v in verdicts if v.verdict == "unsound"]
    assert not wrong, "\n".join(wrong)
    unknown = {v.name for v in verdicts if v.verdict == "unknown"}
    assert unknown == expected_unknown & set(names), unknown
    assert all(v.verdict == "ok" for v in verdicts if v.name not in unknown)


def test_the_chunks_cover_the_rules():
    """The chunk tests below leave every rule but the expected unknown ones `ok`: at least 90 VJP rules and
    120 batching rules."""
    assert len(set(_vjp_names()) - VJP_UNKNOWN) >= 90
    assert len(set(_vmap_names()) - _vmap_unknown()) >= 120


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_every_vjp_rule_is_the_transpose_of_its_jvp_rule(chunk):
    names = _vjp_names()[chunk::CHUNKS]
    _assert_chunk(ad_verify.verify_vjp_rules(PER_PRIMITIVE, names=names), names, VJP_UNKNOWN)


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_every_batching_rule_matches_a_loop_over_slices(chunk):
    names = _vmap_names()[chunk::CHUNKS]
    _assert_chunk(batching_verify.verify_batching_rules(PER_PRIMITIVE, names=names), names, _vmap_unknown())


def test_a_wrong_vjp_is_caught(monkeypatch, capsys):
    right = ad_verify.program_vjp
    monkeypatch.setattr(ad_verify, "program_vjp", lambda *a, **k: [2 * np.asarray(x) for x in right(*a, **k)])
    assert main(["rules", "verify", "--set", "ad", "vjp-cumsum", "vjp-tanh", "--json"]) == 1
    verdicts = {v["name"]: v for v in json.loads(capsys.readouterr().out)}
    assert {n: v["verdict"] for n, v in verdicts.items()} == {"vjp-cumsum": "unsound", "vjp-tanh": "unsound"}
    assert "but <J^T v, u>" in verdicts["vjp-cumsum"]["counterexample"]["lhs"]


def test_a_wrong_batching_rule_is_caught(monkeypatch, capsys):
    right = batching_verify.loop_reference
    monkeypatch.setattr(batching_verify, "loop_reference",
                        lambda closed, args, config: [np.flip(x, 0) for x in right(closed, args, config)])
    assert main(["rules", "verify", "--set", "vmap", "vmap-cumsum", "vmap-sin", "--json"]) == 1
    verdicts = {v["name"]: v for v in json.loads(capsys.readouterr().out)}
    assert {n: v["verdict"] for n, v in verdicts.items()} == {"vmap-cumsum": "unsound", "vmap-sin": "unsound"}
    assert "in_axes=" in verdicts["vmap-sin"]["counterexample"]["lhs"]
