"""The engine core: the documented Rng, the Dealer, Outcome, options, errors and the codec."""

from __future__ import annotations

import enum
import hashlib
import hmac
import itertools
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from speeltafel.server.engine.codec import decode_value, encode_value, from_plain, to_plain
from speeltafel.server.engine.core import (
    Dealer,
    Decks,
    DeckSpec,
    EngineError,
    GameInfo,
    GameOver,
    IllegalAction,
    InvalidAction,
    InvalidOptions,
    NotYourTurn,
    OptionKind,
    OptionSpec,
    Outcome,
    Rng,
    bool_option,
    choice_list_option,
    choice_option,
    commitment,
    int_list_option,
    int_option,
    named_presets,
    refusal,
    refuse_unless_legal,
    replacer,
    restrict,
    shuffle_key,
)
from speeltafel.server.engine.registry import GAME_NUMBERS, GAMES, action_field, view_field

# --------------------------------------------------------------------------- Rng


def block(key: bytes, index: int) -> int:
    """Block ``index`` of the generator, recomputed from the module docstring."""
    digest = hmac.new(key, index.to_bytes(8, "big"), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big")


def draws(rng: Rng, n: int, count: int) -> list[int]:
    out = []
    for _ in range(count):
        value, rng = rng.below(n)
        out.append(value)
    return out


def test_rng_is_deterministic_and_immutable() -> None:
    rng = Rng(b"seed")
    assert draws(rng, 1000, 50) == draws(Rng(b"seed"), 1000, 50)
    assert rng == Rng(b"seed", 0)  # drawing returned new generators, rng is unchanged
    _, advanced = rng.below(1000)
    assert advanced == Rng(b"seed", 1)
    assert advanced.below(1000) == Rng(b"seed", 1).below(1000)
    assert draws(Rng(b"seed"), 1000, 50) != draws(Rng(b"seeds"), 1000, 50)


def test_rng_below_follows_the_documented_generator() -> None:
    key = b"documented"
    rng = Rng(key)
    for index in range(20):
        n = 6 + index
        assert block(key, index) < (1 << 64) - ((1 << 64) % n)  # no rejection here
        value, rng = rng.below(n)
        assert value == block(key, index) % n
    assert rng.counter == 20


def test_rng_below_rejects_the_biased_top_and_draws_again() -> None:
    # For n = 2**63 + 1 every x >= n is rejected, about half of all blocks.
    n = (1 << 63) + 1
    key = next(b"reject %d" % i for i in itertools.count() if block(b"reject %d" % i, 0) >= n)
    rng = Rng(key)
    expected_counter = next(i for i in itertools.count() if block(key, i) < n) + 1
    value, after = rng.below(n)
    assert after.counter == expected_counter >= 2
    assert value == block(key, expected_counter - 1)


def test_rng_shuffle_is_the_documented_fisher_yates() -> None:
    key = b"deck"
    deck = [str(c) for c in range(1, 33)]
    expected = list(deck)
    for index, i in enumerate(range(len(expected) - 1, 0, -1)):
        x = block(key, index)
        assert x < (1 << 64) - ((1 << 64) % (i + 1))
        j = x % (i + 1)
        expected[i], expected[j] = expected[j], expected[i]
    shuffled, after = Rng(key).shuffle(deck)
    assert shuffled == tuple(expected)
    assert after == Rng(key, 31)
    assert deck == [str(c) for c in range(1, 33)]  # the input is not touched


def test_rng_shuffle_returns_a_permutation_and_handles_tiny_inputs() -> None:
    rng = Rng(b"perm")
    shuffled, _ = rng.shuffle(range(100))
    assert sorted(shuffled) == list(range(100))
    assert shuffled != tuple(range(100))
    assert rng.shuffle([]) == ((), rng)
    assert rng.shuffle(["only"]) == (("only",), rng)


def test_rng_below_one_is_always_zero() -> None:
    rng = Rng(b"one")
    for _ in range(20):
        value, next_rng = rng.below(1)
        assert value == 0
        assert next_rng.counter == rng.counter + 1
        rng = next_rng


@pytest.mark.parametrize("n", [0, -1, -(2**70)])
def test_rng_below_needs_a_positive_bound(n: int) -> None:
    with pytest.raises(ValueError):
        Rng(b"x").below(n)


def test_rng_derive_gives_independent_named_streams() -> None:
    parent = Rng(b"match seed")
    a = parent.derive("bot 1")
    assert a == parent.derive("bot 1")
    assert a.counter == 0
    assert a.key != parent.key
    b = parent.derive("bot 2")
    assert b.key != a.key
    assert len({tuple(draws(r, 10**9, 8)) for r in (parent, a, b)}) == 3
    # Deriving neither consumes from the parent nor depends on how far it has drawn.
    _, advanced = parent.below(10)
    assert parent == Rng(b"match seed")
    assert advanced.derive("bot 1") == a
    # A derived stream does not echo its parent's stream at any offset.
    parent_stream = draws(parent, 2**32, 64)
    child_stream = draws(a, 2**32, 64)
    assert not set(parent_stream) & set(child_stream)


# Chi-square critical value for 23 degrees of freedom at p = 0.001 (tables: 49.728).
CHI2_CRITICAL_23_DF = 49.73
SHUFFLES = 24 * 250


def chi_square_of_permutations(shuffle: Callable[[Rng], tuple[tuple[int, ...], Rng]]) -> float:
    """The chi-square statistic of SHUFFLES shuffles of 4 items over all 24 orders."""
    counts: Counter[tuple[int, ...]] = Counter()
    rng = Rng(b"chi-square")
    for _ in range(SHUFFLES):
        order, rng = shuffle(rng)
        counts[order] += 1
    expected = SHUFFLES / 24
    return sum((counts[p] - expected) ** 2 / expected for p in itertools.permutations(range(4)))


def test_shuffle_is_uniform_over_all_24_orders_of_4_items() -> None:
    chi2 = chi_square_of_permutations(lambda rng: rng.shuffle(range(4)))
    assert chi2 < CHI2_CRITICAL_23_DF


def naive_shuffle(rng: Rng) -> tuple[tuple[int, ...], Rng]:
    """The classic broken shuffle: swap every position with any position (n**n paths)."""
    items = list(range(4))
    for i in range(4):
        j, rng = rng.below(4)
        items[i], items[j] = items[j], items[i]
    return tuple(items), rng


def off_by_one_shuffle(rng: Rng) -> tuple[tuple[int, ...], Rng]:
    """Fisher-Yates with j drawn from [0, i) instead of [0, i]: only the 6 cyclic orders."""
    items = list(range(4))
    for i in range(3, 0, -1):
        j, rng = rng.below(i)
        items[i], items[j] = items[j], items[i]
    return tuple(items), rng


@pytest.mark.parametrize("biased", [naive_shuffle, off_by_one_shuffle])
def test_the_chi_square_check_detects_a_biased_shuffle(
    biased: Callable[[Rng], tuple[tuple[int, ...], Rng]],
) -> None:
    # The same statistic rejects the classic broken shuffles, so the test above has teeth.
    assert chi_square_of_permutations(biased) > CHI2_CRITICAL_23_DF


def test_commitment_and_shuffle_key_follow_their_formulas() -> None:
    seed = bytes(range(32))
    assert commitment(seed) == hashlib.sha256(seed).hexdigest()
    message = b"speeltafel/v1/shuffle" + (3).to_bytes(4, "big") + b"abc" + bytes(4)
    expected = hmac.new(seed, message, hashlib.sha256).digest()
    assert shuffle_key(seed, [b"abc", b""]) == expected
    # The length prefixes keep different splits of the same bytes apart.
    assert shuffle_key(seed, [b"ab", b"c"]) != shuffle_key(seed, [b"a", b"bc"])
    assert shuffle_key(seed, [b"", b"abc"]) != shuffle_key(seed, [b"abc", b""])
    assert shuffle_key(seed, []) != shuffle_key(bytes(32), [])


# --------------------------------------------------------------------------- Dealer

DECK = tuple(str(c) for c in range(1, 9))


def test_dealer_hands_out_presets_in_order_before_shuffling() -> None:
    rng = Rng(b"dealer")
    first = tuple(reversed(DECK))
    second = DECK[4:] + DECK[:4]
    dealer = Dealer.checked(rng, [first, second], DECK)

    order, dealer = dealer.deal(DECK)
    assert order == first
    order, dealer = dealer.deal(DECK)
    assert order == second
    assert dealer.rng == rng  # presets consume no randomness
    order, dealer = dealer.deal(DECK)
    expected, after = rng.shuffle(DECK)
    assert order == expected
    assert dealer == Dealer(after, (first, second), 3)
    order, dealer = dealer.deal(DECK)
    assert order == after.shuffle(DECK)[0]
    assert dealer.deals_made == 4


def test_dealer_without_presets_shuffles_every_deal_anew() -> None:
    dealer = Dealer(Rng(b"fresh"))
    first, dealer = dealer.deal(DECK)
    second, dealer = dealer.deal(DECK)
    assert sorted(first) == sorted(second) == sorted(DECK)
    assert first != second


@pytest.mark.parametrize(
    "preset",
    [
        DECK[:-1],  # a card missing
        (*DECK, "1"),  # a card too many
        (*DECK[:-1], "1"),  # a duplicate in place of a card
        (*DECK[:-1], "9"),  # a stranger
        (),
    ],
)
def test_dealer_checked_rejects_a_preset_that_is_not_a_permutation(
    preset: Sequence[str],
) -> None:
    with pytest.raises(InvalidOptions) as raised:
        Dealer.checked(Rng(b"x"), [DECK, preset], DECK)
    assert "preset deck 2" in raised.value.message


# --------------------------------------------------------------------------- Outcome


@pytest.mark.parametrize(
    ("scores", "lower_is_better", "ranks", "utilities"),
    [
        ((16, 16, 19), True, (1, 1, 3), (0.5, 0.5, -1.0)),
        ((3, 1, 2), False, (1, 3, 2), (1.0, -1.0, 0.0)),
        ((3, 1, 2), True, (3, 1, 2), (-1.0, 1.0, 0.0)),
        ((5, 5, 5, 1), True, (2, 2, 2, 1), (-1 / 3, -1 / 3, -1 / 3, 1.0)),
        ((7, 7), False, (1, 1), (0.0, 0.0)),
        ((4,), True, (1,), (0.0,)),
        ((0, 10, 10, 20), True, (1, 2, 2, 4), (1.0, 0.0, 0.0, -1.0)),
    ],
)
def test_outcome_from_scores_ranks_and_utilities(
    scores: tuple[int, ...],
    lower_is_better: bool,
    ranks: tuple[int, ...],
    utilities: tuple[float, ...],
) -> None:
    outcome = Outcome.from_scores(scores, lower_is_better)
    assert outcome.scores == scores
    assert outcome.ranks == ranks
    assert outcome.utilities == pytest.approx(utilities)
    assert outcome.termination == "normal"


@settings(max_examples=200, deadline=None)
@given(
    scores=st.lists(st.integers(-50, 50), min_size=2, max_size=10),
    lower_is_better=st.booleans(),
)
def test_outcome_is_zero_sum_and_orders_like_the_scores(
    scores: list[int], lower_is_better: bool
) -> None:
    outcome = Outcome.from_scores(scores, lower_is_better)
    assert sum(outcome.utilities) == pytest.approx(0.0)
    assert all(-1.0 <= u <= 1.0 for u in outcome.utilities)
    assert min(outcome.ranks) == 1
    for i, j in itertools.permutations(range(len(scores)), 2):
        better = scores[i] < scores[j] if lower_is_better else scores[i] > scores[j]
        if scores[i] == scores[j]:
            assert outcome.ranks[i] == outcome.ranks[j]
            assert outcome.utilities[i] == outcome.utilities[j]
        elif better:
            assert outcome.ranks[i] < outcome.ranks[j]
            assert outcome.utilities[i] > outcome.utilities[j]


# --------------------------------------------------------------------------- options

DEALS = OptionSpec("deals", OptionKind.INT, "3", "deals", minimum=1, maximum=50)
FAST = OptionSpec("fast", OptionKind.BOOL, "false", "fast play")
EDITION = OptionSpec("edition", OptionKind.CHOICE, "trial", "deck", choices=("trial", "full"))
INFO = GameInfo(
    game_id="demo",
    name="Demo",
    rules_version=1,
    min_seats=2,
    max_seats=4,
    options=(DEALS, FAST, EDITION),
    simultaneous=False,
    description="a game for testing options",
)


@pytest.mark.parametrize(
    ("spec", "text", "value"),
    [
        (DEALS, "1", 1),
        (DEALS, "50", 50),
        (FAST, "true", True),
        (FAST, "false", False),
        (EDITION, "full", "full"),
    ],
)
def test_option_parse_accepts_valid_text(spec: OptionSpec, text: str, value: object) -> None:
    parsed = spec.parse(text)
    assert parsed == value
    assert type(parsed) is type(value)


@pytest.mark.parametrize(
    ("spec", "text", "words"),
    [
        (DEALS, "three", "not an integer"),
        (DEALS, "", "not an integer"),
        (DEALS, "2.5", "not an integer"),
        (DEALS, "0", "below 1"),
        (DEALS, "51", "above 50"),
        (FAST, "yes", "not true or false"),
        (FAST, "True", "not true or false"),
        (FAST, "1", "not true or false"),
        (EDITION, "deluxe", "not one of trial, full"),
        (EDITION, "", "not one of"),
    ],
)
def test_option_parse_rejects_bad_text_naming_the_option(
    spec: OptionSpec, text: str, words: str
) -> None:
    with pytest.raises(InvalidOptions) as raised:
        spec.parse(text)
    assert raised.value.message.startswith(f"option {spec.name}:")
    assert words in raised.value.message
    assert raised.value.rule == "invalid_options"


def test_resolve_options_types_values_and_fills_defaults() -> None:
    assert INFO.resolve_options({}) == {"deals": 3, "fast": False, "edition": "trial"}
    assert INFO.resolve_options({"fast": "true", "deals": "7"}) == {
        "deals": 7,
        "fast": True,
        "edition": "trial",
    }


def test_resolve_options_refuses_unknown_names_instead_of_ignoring_them() -> None:
    with pytest.raises(InvalidOptions) as raised:
        INFO.resolve_options({"deals": "2", "speed": "9", "colour": "red"})
    assert "'colour', 'speed'" in raised.value.message
    with pytest.raises(InvalidOptions):
        INFO.resolve_options({"deals": "0"})


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("error", "rule"),
    [
        (EngineError, "engine_error"),
        (InvalidAction, "invalid_action"),
        (IllegalAction, "illegal_action"),
        (NotYourTurn, "not_your_turn"),
        (GameOver, "game_over"),
        (InvalidOptions, "invalid_options"),
    ],
)
def test_errors_carry_a_message_and_a_default_or_given_rule(
    error: type[EngineError], rule: str
) -> None:
    assert issubclass(error, EngineError)
    plain = error("something is wrong")
    assert (plain.message, plain.rule, str(plain)) == ("something is wrong", rule, plain.message)
    assert error("x", rule="custom").rule == "custom"


# --------------------------------------------------------------------------- codec


class Colour(StrEnum):
    RED = "red"
    BLUE = "blue"


@dataclass(frozen=True, slots=True)
class Inner:
    colour: Colour
    maybe: int | None
    pair: tuple[int, str]


@dataclass(frozen=True, slots=True)
class Outer:
    name: str
    secret: bytes
    flag: bool
    ratio: float
    items: tuple[Inner, ...]
    grid: tuple[tuple[int, ...], ...]
    optional_inner: Inner | None


VALUE = Outer(
    name="ümlaut\u2603",
    secret=b"\x00\xffkey",
    flag=True,
    ratio=0.25,
    items=(Inner(Colour.RED, None, (1, "a")), Inner(Colour.BLUE, -3, (2, "b"))),
    grid=((), (1, 2), (3,)),
    optional_inner=None,
)
HEADER = {"game": "demo", "format": 1}


def test_codec_round_trips_nested_values() -> None:
    data = encode_value(HEADER, VALUE)
    assert decode_value(HEADER, Outer, data) == VALUE
    assert from_plain(Outer, to_plain(VALUE)) == VALUE
    other = Outer("n", b"", False, 1.5, (), ((7,),), Inner(Colour.BLUE, 0, (0, "")))
    assert decode_value(HEADER, Outer, encode_value(HEADER, other)) == other


def test_codec_bytes_are_canonical() -> None:
    data = encode_value(HEADER, VALUE)
    assert data == encode_value(dict(reversed(HEADER.items())), VALUE)  # key order
    assert data.isascii()
    assert b" " not in data
    assert b"\n" not in data
    assert b'"secret":"00ff6b6579"' in data
    assert b'"colour":"red"' in data
    assert data.index(b'"flag"') < data.index(b'"grid"') < data.index(b'"items"')


def test_codec_writes_each_kind_of_value_as_before() -> None:
    # to_plain checks exact scalar types first: an enum that is also an int or a str is
    # still written as its value, a tuple subclass as a list, and the rest is refused.
    class Level(enum.IntEnum):
        HIGH = 3

    class Word(StrEnum):
        HI = "hi"

    class Pair(NamedTuple):
        a: int
        b: str

    assert to_plain(Level.HIGH) == 3 and type(to_plain(Level.HIGH)) is int
    assert to_plain(Word.HI) == "hi"
    assert to_plain(Pair(1, "x")) == [1, "x"]
    assert to_plain((True, None, 1.5, b"\x01")) == [True, None, 1.5, "01"]
    assert to_plain(Inner(Colour.BLUE, 0, (0, ""))) == {
        "colour": "blue",
        "maybe": 0,
        "pair": [0, ""],
    }
    for bad in (Inner, {1: 2}, {1, 2}, object()):
        with pytest.raises(TypeError):
            to_plain(bad)


def test_codec_refuses_a_foreign_header() -> None:
    data = encode_value(HEADER, VALUE)
    with pytest.raises(ValueError, match="game"):
        decode_value({"game": "other", "format": 1}, Outer, data)
    with pytest.raises(ValueError, match="format"):
        decode_value({"game": "demo", "format": 2}, Outer, data)


def test_codec_decoding_checks_fields_and_types() -> None:
    plain = to_plain(VALUE)
    with pytest.raises(ValueError):
        from_plain(Outer, {k: v for k, v in plain.items() if k != "flag"})
    with pytest.raises(ValueError):
        from_plain(Outer, {**plain, "extra": 1})
    with pytest.raises(ValueError):
        from_plain(Outer, {**plain, "flag": 1})  # an int is not a bool
    with pytest.raises(ValueError):
        from_plain(Inner, {"colour": "red", "maybe": True, "pair": [1, "a"]})  # nor the reverse
    with pytest.raises(ValueError):
        from_plain(Inner, {"colour": "green", "maybe": None, "pair": [1, "a"]})
    with pytest.raises(ValueError):
        from_plain(Inner, {"colour": "red", "maybe": None, "pair": [1, "a", 2]})


def test_codec_refuses_types_it_does_not_know() -> None:
    with pytest.raises(TypeError):
        to_plain({1, 2})
    with pytest.raises(TypeError):
        to_plain({"a": 1})
    with pytest.raises(TypeError):
        from_plain(set, [1])


# --------------------------------------------------------------------------- list options

WORMS = OptionSpec(
    "worms",
    OptionKind.INT_LIST,
    "6,6,5,5,4,4,3,3",
    "worm counts",
    minimum=0,
    maximum=12,
    min_items=8,
    max_items=8,
)
SUITS = OptionSpec(
    "suits",
    OptionKind.CHOICE_LIST,
    "",
    "suits",
    choices=("S", "C", "D", "H"),
    min_items=0,
    max_items=3,
)
ROUNDS = OptionSpec(
    "rounds", OptionKind.INT, "0", "0: one per seat", minimum=1, maximum=9, automatic=True
)


@pytest.mark.parametrize(
    ("spec", "text", "value"),
    [
        (WORMS, "6,6,5,5,4,4,3,3", (6, 6, 5, 5, 4, 4, 3, 3)),
        (WORMS, "0,0,0,0,0,0,0,12", (0, 0, 0, 0, 0, 0, 0, 12)),
        (SUITS, "", ()),
        (SUITS, "H,S,H", ("H", "S", "H")),
        (ROUNDS, "0", 0),
        (ROUNDS, "1", 1),
        (ROUNDS, "9", 9),
    ],
)
def test_list_and_automatic_options_parse_and_write_canonically(
    spec: OptionSpec, text: str, value: object
) -> None:
    assert spec.parse(text) == value
    assert spec.text(spec.parse(text)) == text


@pytest.mark.parametrize(
    ("spec", "text", "words"),
    [
        (WORMS, "6,6,5,5,4,4,3", "fewer than 8 items"),
        (WORMS, "6,6,5,5,4,4,3,3,1", "more than 8 items"),
        (WORMS, "6,6,5,5,4,4,3,13", "above 12"),
        (WORMS, "6,6,5,5,4,4,3,-1", "below 0"),
        (WORMS, "6,6,5,5,4,4,3, 3", "not an integer"),
        (WORMS, "6,6,5,5,4,4,3,+3", "not an integer"),
        (WORMS, "6,6,5,5,4,4,3,", "not an integer"),
        (WORMS, "6,6,5,5,4,4,3,٣", "not an integer"),
        (SUITS, "H,X", "not one of S, C, D, H"),
        (SUITS, "H,S,C,D", "more than 3 items"),
        (ROUNDS, "10", "above 9"),
        (ROUNDS, "-1", "below 1"),
    ],
)
def test_list_and_automatic_options_refuse_bad_text(
    spec: OptionSpec, text: str, words: str
) -> None:
    with pytest.raises(InvalidOptions) as raised:
        spec.parse(text)
    assert raised.value.message.startswith(f"option {spec.name}:")
    assert words in raised.value.message


def test_zero_is_only_allowed_for_an_automatic_option() -> None:
    plain = OptionSpec("rounds", OptionKind.INT, "1", "rounds", minimum=1, maximum=9)
    with pytest.raises(InvalidOptions):
        plain.parse("0")
    assert ROUNDS.parse("0") == 0


@pytest.mark.parametrize(
    "make",
    [
        lambda: OptionSpec("x", OptionKind.BOOL, "true", "x", automatic=True),
        lambda: OptionSpec("x", OptionKind.CHOICE, "a", "x"),
        lambda: OptionSpec("x", OptionKind.INT_LIST, "1", "x"),
        lambda: OptionSpec("x", OptionKind.CHOICE_LIST, "a", "x", max_items=2),
    ],
)
def test_a_malformed_option_spec_is_refused_when_defined(make: Callable[[], OptionSpec]) -> None:
    with pytest.raises(ValueError):
        make()


def test_canonical_options_write_lists_and_typed_accessors_read_them() -> None:
    info = GameInfo(
        game_id="lists",
        name="Lists",
        rules_version=1,
        min_seats=2,
        max_seats=5,
        options=(WORMS, SUITS, ROUNDS, FAST, EDITION),
        simultaneous=False,
        description="list options",
    )
    assert info.canonical_options({"suits": "D,C"}) == {
        "worms": "6,6,5,5,4,4,3,3",
        "suits": "D,C",
        "rounds": "0",
        "fast": "false",
        "edition": "trial",
    }
    resolved = info.resolve_options({"worms": "1,2,3,4,5,6,7,8", "rounds": "4"})
    assert int_list_option(resolved, "worms") == (1, 2, 3, 4, 5, 6, 7, 8)
    assert choice_list_option(resolved, "suits") == ()
    assert int_option(resolved, "rounds") == 4
    assert bool_option(resolved, "fast") is False
    assert choice_option(resolved, "edition") == "trial"
    with pytest.raises(TypeError):
        int_option(resolved, "fast")  # a bool is not an int here
    with pytest.raises(TypeError):
        int_list_option(resolved, "rounds")
    assert info.score_name == "points" and info.lower_is_better is False and info.decks == ()


# --------------------------------------------------------------------------- tie-breaks


def test_outcome_from_keys_breaks_ties_by_the_later_parts_of_the_key() -> None:
    # Karel Kakelaar scenario 9: 13 worms each, B holds fewer cards and wins.
    karel = Outcome.from_keys((13, 13), [(13, -6), (13, -5)], lower_is_better=False)
    assert karel.scores == (13, 13)
    assert karel.ranks == (2, 1)
    assert karel.utilities == (-1.0, 1.0)
    # Sneaky Bastard: houses tie at 550, more money wins; a full tie is shared.
    sneaky = Outcome.from_keys(
        (550, 550, 550, 100), [(550, 85), (550, 300), (550, 85), (100, 900)], False
    )
    assert sneaky.ranks == (2, 1, 2, 4)
    assert sum(sneaky.utilities) == pytest.approx(0.0)
    # Lower is better orients the whole key.
    low = Outcome.from_keys((5, 5, 9), [(5, 2), (5, 1), (9, 0)], True, termination="limit")
    assert low.ranks == (2, 1, 3)
    assert low.termination == "limit"
    with pytest.raises(ValueError):
        Outcome.from_keys((1, 2), [(1,)], False)


@settings(max_examples=100, deadline=None)
@given(scores=st.lists(st.integers(-50, 50), min_size=1, max_size=8), lower_is_better=st.booleans())
def test_outcome_from_scores_is_from_keys_with_the_score_alone(
    scores: list[int], lower_is_better: bool
) -> None:
    assert Outcome.from_scores(scores, lower_is_better) == Outcome.from_keys(
        scores, [(s,) for s in scores], lower_is_better
    )


# --------------------------------------------------------------------------- named decks

PACK = DeckSpec("pack", "the pack")
ROBOT = DeckSpec("robot", "the robot deck")


def test_named_presets_take_the_plain_form_as_the_first_deck() -> None:
    orders = [["2", "1"], ["1", "2"]]
    assert named_presets([PACK, ROBOT], orders) == {"pack": (("2", "1"), ("1", "2"))}
    assert named_presets([PACK, ROBOT], {"robot": orders}) == {"robot": (("2", "1"), ("1", "2"))}
    assert named_presets([PACK, ROBOT], {"robot": []}) == {}
    assert named_presets([PACK], ()) == {}
    assert named_presets([], ()) == {}
    with pytest.raises(InvalidOptions, match="no deck named 'robt'"):
        named_presets([PACK, ROBOT], {"robt": orders})
    with pytest.raises(InvalidOptions, match="no deck"):
        named_presets([], orders)


def test_restrict_orders_part_of_a_deck_as_the_whole_preset_does() -> None:
    order = ("6", "0", "3", "6", "1", "0")
    assert restrict(order, ["0", "6", "1"]) == ("6", "0", "1")
    assert restrict(order, ["0", "0", "6", "6"]) == ("6", "0", "6", "0")
    assert restrict(order, []) == ()
    assert restrict(order, ["9", "3", "8"]) == ("3", "8", "9")  # strangers last, sorted


def test_decks_use_each_decks_presets_in_turn_then_the_rng() -> None:
    rng = Rng(b"decks")
    contents = {"pack": DECK, "robot": ("a", "b", "c")}
    first = tuple(reversed(DECK))
    decks = Decks.checked(rng, [PACK, ROBOT], {"pack": [first]}, contents)
    robot, decks = decks.order("robot", contents["robot"])  # no preset: the rng
    expected, after = rng.shuffle(contents["robot"])
    assert robot == expected
    order, decks = decks.order("pack", DECK)  # the pack's preset, no randomness used
    assert order == first
    assert decks.rng == after
    part, decks = decks.order("pack", ["3", "7", "1"])  # presets used up: the rng
    assert part == after.shuffle(["3", "7", "1"])[0]
    cut, decks = decks.below(45)
    assert decks.used == (2, 1)
    assert 0 <= cut < 45
    future = decks.unknown_future(Rng(b"bot"))
    assert future.presets == ((), ()) and future.used == decks.used and future.rng == Rng(b"bot")


def test_a_reshuffle_takes_the_next_preset_restricted_to_its_cards() -> None:
    contents = {"pack": DECK, "robot": ("a", "b", "c")}
    second = ("8", "1", "7", "2", "6", "3", "5", "4")
    decks = Decks.checked(Rng(b"x"), [PACK, ROBOT], {"pack": [DECK, second]}, contents)
    _, decks = decks.order("pack", DECK)
    discards, decks = decks.order("pack", ["2", "3", "8"])
    assert discards == ("8", "2", "3")


def test_decks_checked_refuses_a_preset_that_is_not_its_decks_order() -> None:
    contents = {"pack": DECK, "robot": ("a", "b", "c")}
    with pytest.raises(InvalidOptions, match="preset 2 of deck 'robot'"):
        Decks.checked(Rng(b"x"), [PACK, ROBOT], {"robot": [("c", "b", "a"), ("a", "b")]}, contents)
    with pytest.raises(InvalidOptions):
        Decks.checked(Rng(b"x"), [PACK, ROBOT], [("a", "b", "c")], contents)  # the pack's


def test_decks_survive_the_codec() -> None:
    decks = Decks.checked(
        Rng(b"x"), [PACK, ROBOT], {"robot": [("c", "b", "a")]}, {"pack": DECK, "robot": "abc"}
    )
    _, decks = decks.order("robot", "abc")
    assert decode_value(HEADER, Decks, encode_value(HEADER, decks)) == decks


# --------------------------------------------------------------------------- legality


def test_refuse_unless_legal_accepts_exactly_the_legal_actions() -> None:
    legal = ("a", "b")
    refuse_unless_legal(legal, "a", lambda: pytest.fail("the diagnostic ran for a legal action"))
    with pytest.raises(IllegalAction) as named:
        refuse_unless_legal(legal, "c", lambda: IllegalAction("no", rule="not_in_hand"))
    assert named.value.rule == "not_in_hand"
    # A diagnostic that finds nothing wrong cannot make the action legal.
    with pytest.raises(IllegalAction) as generic:
        refuse_unless_legal(legal, "c", lambda: None)
    assert generic.value.rule == "not_legal"


def test_refusal_names_the_error_apply_would_raise_without_changing_the_state() -> None:
    game = GAMES["take5"]
    state = game.new({}, 2, Rng(b"refusal"))
    before = game.encode(state)
    legal = game.legal_actions(state, 0)[0]
    assert refusal(game, state, 0, legal) is None
    error = refusal(game, state, 0, game.parse_action("row:1"))
    assert error is not None and error.rule == "wrong_phase"
    assert refusal(game, state, 5, legal).rule == "no_such_seat"  # type: ignore[union-attr]
    assert game.encode(state) == before


@dataclass(frozen=True, slots=True)
class _Trio:
    a: int
    b: tuple[int, ...]
    c: str


def test_replacer_copies_a_frozen_value_with_the_named_fields_set() -> None:
    with_b_c = replacer(_Trio, "b", "c")
    before = _Trio(1, (2,), "x")
    after = with_b_c(before, (3, 4), "y")
    assert type(after) is _Trio
    assert after == _Trio(1, (3, 4), "y") and hash(after) == hash(_Trio(1, (3, 4), "y"))
    assert before == _Trio(1, (2,), "x")
    with pytest.raises(TypeError):
        replacer(_Trio, "d")
    with pytest.raises(TypeError):
        replacer(_Trio, "a", "a")


def test_every_planned_game_has_its_fixed_proto_numbers() -> None:
    assert GAME_NUMBERS == {
        "take5": 0,
        "karel_kakelaar": 1,
        "sneaky_bastard": 2,
        "beverbende": 3,
        "alles_klar": 4,
        "kleurenwiezen": 5,
    }
    assert set(GAMES) <= set(GAME_NUMBERS)
    assert (action_field("kleurenwiezen"), view_field("kleurenwiezen")) == (15, 25)
    assert (action_field("take5"), view_field("take5")) == (10, 20)
