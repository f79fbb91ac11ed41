"""How many examples a property test draws: its own count in a thorough run (hypothesis's default profile,
100 examples: ``make test``, CI), a quarter of it under ``--hypothesis-profile=fast`` (``make test-fast``;
the profile is registered in tests/conftest.py). Every run draws new examples and replays the failures
hypothesis saved (.hypothesis/), so a fast run still finds what a thorough one would, over more runs."""

from __future__ import annotations

from hypothesis import settings


def examples(count: int) -> int:
    """*count* scaled by the loaded profile (its ``max_examples`` over hypothesis's default of 100), at
    least one (a test's explicit ``@example`` cases run in every profile)."""
    return max(1, round(count * settings.default.max_examples / 100))
