"""Generated names (:func:`fakecluster.apiserver.object_meta.generate_name`) draw each character as
``random.Random.choice`` does, so a seed gives the names it always gave."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from fakecluster.apiserver.object_meta import MAX_GENERATED_NAME_PREFIX, NAME_ALPHABET, generate_name


@settings(max_examples=200)
@given(st.integers(0, 2**64), st.text(alphabet="abc-", max_size=70), st.integers(1, 6))
def test_each_character_is_what_random_choice_draws(seed: int, prefix: str, names: int) -> None:
    ours, reference = random.Random(seed), random.Random(seed)
    for _ in range(names):
        letters = "".join(reference.choice(NAME_ALPHABET) for _ in range(5))
        expected = prefix[:MAX_GENERATED_NAME_PREFIX] + letters
        assert generate_name(ours, prefix) == expected
    assert ours.getstate() == reference.getstate()  # the stream is left where choice leaves it
