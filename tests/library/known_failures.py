"""The library fixture checks that do not pass today: (case id, check) -> the cause in one phrase.
tests/library/test_library_fixtures.py marks each `xfail(strict=True)`."""

KNOWN_FAILURES: dict[tuple[str, str], str] = {}
