"""The library fixture checks that do not pass: (case id, check) -> the cause in one phrase.
tests/library/test_library_fixtures.py marks each `xfail(strict=True)`, so a fixed cause turns its rows into
failures until they are removed. Empty: the 16 checks listed at capture (relu's, _xlogy_jvp, _xlog1py_jvp,
_xlogx_jvp and _log_ndtr_jvp custom rules) pass since JAX's custom rules are registered by default
(transforms/ad/jax_rules)."""

KNOWN_FAILURES: dict[tuple[str, str], str] = {}
