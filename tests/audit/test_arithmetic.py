"""Claim extraction and exact checking, one form at a time."""

from __future__ import annotations

import pytest
import sympy

from trustnode.audit.claims import bind_from, extract_claims, normalize
from trustnode.models.audit import ClaimStatus


def statuses(text: str, **kw: object) -> list[tuple[str, str]]:
    return [(c.text, c.status.value) for c in extract_claims(text, **kw).claims]  # type: ignore[arg-type]


def wrong(text: str) -> list[tuple[str, str]]:
    return [(c.text, c.correct) for c in extract_claims(text).wrong]


# -- plain arithmetic -------------------------------------------------------------------


def test_simple_claim_in_prose_holds_and_words_bound_it() -> None:
    assert statuses("Janet sells 16 - 3 - 4 = 9 duck eggs a day.") == [("16 - 3 - 4 = 9", "holds")]


def test_wrong_claim_reports_found_and_correct_value() -> None:
    ext = extract_claims("So she pays 12 * 7 = 74 dollars.")
    [c] = ext.claims
    assert c.status is ClaimStatus.WRONG
    assert (c.expression, c.found, c.correct) == ("12 * 7", "74", "84")


def test_precedence_unary_minus_and_brackets() -> None:
    assert statuses("(-5 + 9 * -4 - 0) = -41") == [("(-5 + 9 * -4 - 0) = -41", "holds")]
    assert wrong("(7 - -7 * 4) = (7 - 28)") == [("(7 - -7 * 4) = (7 - 28)", "35")]
    assert statuses("2^10 = 1024 and 2**3 = 8") == [("2^10 = 1024", "holds"), ("2^3 = 8", "holds")]


def test_chain_every_link_is_checked_and_the_first_wrong_link_is_named() -> None:
    text = "C = ((3 * 4 * 5) * (7 - -7 * 4)) = ((3 * 4 * 5) * (7 - 28)) = (60 * (-21)) = -1260."
    got = statuses(text)
    assert [s for _, s in got] == ["wrong", "holds", "holds"]
    assert wrong(text)[0][1] == "2100"
    assert statuses("a total: 2 + 3 = 5 = 10 / 2") == [("2 + 3 = 5", "holds"), ("5 = 10 / 2", "holds")]
    assert [s for _, s in statuses("so 2 + 3 = 5 = 12 / 2")] == ["holds", "wrong"]


def test_a_garbled_middle_side_still_links_its_neighbours() -> None:
    # "(-2) * 2)" has an unmatched bracket; the chain still claims ((-1*1)*2) = (-4)
    assert wrong("D = ((-1 * 1) * 2) = (-2) * 2) = (-4).") == [("((-1 * 1) * 2) = (-4)", "-2")]


# -- rounding, truncation, approximation --------------------------------------------------


@pytest.mark.parametrize(
    ("text", "status"),
    [
        ("25/36 = 0.69", "holds"),  # rounded to 2 places
        ("25/36 = 0.6944", "holds"),  # rounded to 4
        ("25/36 = 0.6944...", "holds"),  # "..." truncation
        ("25/36 = 0.6945", "wrong"),  # 0.69444...: neither rounded nor truncated
        ("25/36 = 0.68", "wrong"),  # off by more than a unit in the last place
        ("25/36 = 0.6955...", "wrong"),
        ("1/3 = 0.333", "holds"),
        ("2/3 = 0.67", "holds"),
        ("2/3 = 0.66", "holds"),  # truncated
        ("2/3 = 0.65", "wrong"),
        ("10 / 4 = 2.5", "holds"),
        ("10 / 4 = 2.4", "wrong"),
    ],
)
def test_rounding_and_truncation(text: str, status: str) -> None:
    assert statuses(text) == [(text, status)]


def test_approximately_allows_one_percent_but_not_more() -> None:
    assert [s for _, s in statuses("so 100 / 7 \u2248 14.3")] == ["holds"]
    assert [s for _, s in statuses("so 1000 / 7 = approximately 143")] == ["holds"]
    assert [s for _, s in statuses("so 1000 / 7 = approximately 150")] == ["wrong"]
    assert [s for _, s in statuses("so 100 / 7 ~= 14")] == ["holds"]


def test_rounded_inputs_propagate() -> None:
    # 0.33 stands for 1/3: 0.33 * 300 = 99 is exact, and "= 100" is within the input's rounding
    assert [s for _, s in statuses("then 0.33 * 300 = 100 people")] == ["holds"]
    assert [s for _, s in statuses("then 2.25 * 4 = 9.5 people")] == ["wrong"]


# -- percentages, units, currency, separators ---------------------------------------------


def test_percentages() -> None:
    assert statuses("Discount: 20% * 50 = 10 dollars") == [("20% * 50 = 10", "holds")]
    assert statuses("so 100% - 20% = 80%") == [("100% - 20% = 80%", "holds")]
    assert statuses("so 20/80 = 25%") == [("20/80 = 25%", "holds")]
    assert statuses("rate: (20/80) * 100 = 25%") == [("(20/80) * 100 = 25%", "holds")]  # % as a label
    assert statuses("Rate: 0.5 = 50 percent") == [("0.5 = 50 percent", "holds")]
    assert [s for _, s in statuses("so 20/80 = 30%")] == ["wrong"]
    assert statuses("the price rises 50 + 10% = 55 now") == []  # percent-of-base shorthand: unreadable


def test_units_and_currency_and_thousands_separators() -> None:
    assert statuses("80,000*1.5=$120,000") == [("80,000*1.5 = 120,000", "holds")]
    assert statuses("She pays $1,250.50 + $749.50 = $2,000 in total.") == [
        ("1,250.50 + 749.50 = 2,000", "holds")
    ]
    assert statuses("It takes 5 hours * 3 = 15 hours.") == [("5 hours * 3 = 15", "holds")]
    assert statuses("He earns 4 x 5 = 20 dollars and 3 \u00d7 3 = 9.") == [
        ("4 * 5 = 20", "holds"),
        ("3 * 3 = 9", "holds"),
    ]
    assert statuses("so 2 1/2 * 2 = 5 cups") == [("2 1/2 * 2 = 5", "holds")]  # mixed number
    assert statuses("so 1.5 million / 3 = 500,000") == [("1.5 million / 3 = 500,000", "holds")]


def test_dash_between_spaced_numbers_is_a_minus() -> None:
    assert statuses("the team won 22 \u2013 7 = 15 games") == [("22 - 7 = 15", "holds")]


# -- LaTeX -----------------------------------------------------------------------------------


def test_latex_forms() -> None:
    assert statuses(r"Since there were 18, \(1/3 \times 18 = 6\) are taken.") == [("1/3 * 18 = 6", "holds")]
    assert [s for _, s in statuses(r"\[ \frac{25}{36} \approx 0.69 \]")] == ["holds"]
    assert [s for _, s in statuses(r"\[ \dfrac{3}{4} \cdot 364 = 273 \]")] == ["holds"]
    assert [s for _, s in statuses(r"\( 12 \div 4 = 3 \)")] == ["holds"]
    assert [s for _, s in statuses(r"\( \sqrt{16} + 2^{3} = 12 \)")] == ["holds"]
    assert [s for _, s in statuses(r"\( \frac{1}{2} + \frac{1}{3} = \frac{5}{6} \)")] == ["holds"]
    assert [s for _, s in statuses(r"\( \frac{1}{2} + \frac{1}{3} = \frac{2}{5} \)")] == ["wrong"]
    assert [
        s for _, s in statuses(r"the total is \(1{,}000 \times 3 = 3{,}000\) and \(50\% \times 8 = 4\)")
    ] == [
        "holds",
        "holds",
    ]
    assert [s for _, s in statuses(r"\boxed{2 + 2 = 4}")] == ["holds"]


def test_sqrt_irrational_is_exact() -> None:
    assert [s for _, s in statuses(r"\( \sqrt{2} \times \sqrt{2} = 2 \)")] == ["holds"]
    assert [s for _, s in statuses(r"\( \sqrt{2} \approx 1.414 \)")] == ["holds"]
    assert [s for _, s in statuses(r"\( \sqrt{2} = 1.5 \)")] == ["wrong"]


def test_latex_mixed_number_is_ambiguous_and_not_judged() -> None:
    assert statuses(r"\( 3\frac{4}{5} = \frac{19}{5} \)") == []


# -- what must not be judged ----------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "x + 5 = 8",  # an equation to solve
        "2x = 10 so x = 5",
        "half of 50 = 25",  # the left side starts with words
        "1/4 of 20 = 5",
        "Day 1 = 5 pages",  # a label
        "3 hours = 180 minutes",  # a conversion
        "f(2) = 7",
        "2:30 = 2.5 hours",
        "it is 5 times 3 = 15",
        "so 3! = 6",
        "We have 60 / 15 = 4 (15 minutes) blocks",  # the parenthesis is a unit, not a product
        "Thus, W = 1 1/2 / 1/2 = 3 episodes.",  # inline fractions divided: grouping unknown
        "x^2 + 5x + 6 = (x+2)(x+3)",
    ],
)
def test_not_checkable_forms_produce_no_wrong_claim(text: str) -> None:
    assert extract_claims(text).wrong == []


def test_bullets_are_not_minus_signs() -> None:
    assert statuses("Now the values:\n- \\(2^9 = 512\\)\n- \\(3^1 = 3\\)") == [
        ("2^9 = 512", "holds"),
        ("3^1 = 3", "holds"),
    ]


def test_running_total_written_as_one_chain_is_not_a_false_alarm() -> None:
    assert extract_claims("So 1/2 off is $3/2 = $1.50+$3.00=$4.50").wrong == []


# -- annotations and names ------------------------------------------------------------------


def test_calculator_annotations_strip_or_check() -> None:
    text = "She makes 9 * 2 = $<<9*2=18>>18 every day."
    norm, notes = normalize(text)
    assert "<<" not in norm and notes == [("9*2", "18")]
    assert statuses(text) == [("9 * 2 = 18", "holds")]
    checked = extract_claims(text, annotations="check")
    assert [c.tolerance for c in checked.claims] == ["annotation", "exact"]
    bad = extract_claims("She makes 9 * 2 = $<<9*2=19>>18 every day.", annotations="check")
    assert [c.text for c in bad.wrong] == ["<<9*2=19>>"]


def test_names_defined_in_context_are_used_and_checked() -> None:
    ctx = bind_from(
        [
            'This can be written as "A - B", where A = (-9 - 5 - 0) and B = (4 + 3 + -5).',
            "Let's calculate A = (-9 - 5 - 0) = -14.",
        ]
    )
    assert ctx == {"A": sympy.Integer(-14), "B": sympy.Integer(2)}
    assert statuses("Then A - B = -14 - 2 = -16.", variables=ctx) == [
        ("A - B = -14 - 2", "holds"),
        ("-14 - 2 = -16", "holds"),
    ]
    assert wrong_with("Then A - B = -14 - 3 = -17.", ctx) == [("A - B = -14 - 3", "-16")]
    # a name restated with another value is a new case, not an error
    assert extract_claims("Now A = 5.", variables=ctx).wrong == []


def wrong_with(text: str, ctx: dict[str, sympy.Expr]) -> list[tuple[str, str]]:
    return [(c.text, c.correct) for c in extract_claims(text, ctx).wrong]


def test_literal_definitions_do_not_bind_names() -> None:
    # "A = 0" is a case of a case analysis; only computed definitions become names
    assert bind_from(["if A = 0 then", "and A = 1"]) == {}


# -- hostile input ----------------------------------------------------------------------------


def test_hostile_sizes_are_refused_not_computed() -> None:
    assert extract_claims("so 9^99999999 = 1").claims == []
    assert extract_claims("so " + "9" * 500 + " + 1 = 2").claims == []
    assert extract_claims("so 1/0 = 5").claims == []
    long_text = "so 1 + 1 = 2. " * 3000
    ext = extract_claims(long_text)
    assert len(ext.held) == 3000 and not ext.wrong


def test_hostile_nesting_and_foreign_digits_and_renaming() -> None:
    deep = "so " + "(" * 300 + "1" + ")" * 300 + " = 1"
    assert extract_claims(deep).wrong == []  # refused as too deep, not a crash
    signs = "so " + "- " * 300 + "1 = 1"
    assert extract_claims(signs).wrong == []
    assert extract_claims("so \u0663 + \u0664 = 9").claims == []  # Arabic-Indic digits are not read
    assert extract_claims("so (\\sqrt{2}+1)^{9999} = 1").claims == []
    renaming = " ".join(f"A = {i} + 1. A = 0." for i in range(500))
    ext = extract_claims(renaming)
    assert not ext.wrong and "A" not in ext.bindings
    assert extract_claims("so 1 + 1 = 2. " + "x" * 250_000).truncated


def test_a_single_letter_after_a_number_is_not_a_unit() -> None:
    assert extract_claims("then 3 m + 2 = 11, so m = 3").wrong == []


def test_conditions_and_relations_are_not_claims() -> None:
    assert statuses("If 2 + 2 = 5, then 3 + 3 = 6") == [("3 + 3 = 6", "holds")]
    assert statuses("Assume 2 * 3 = 7 here. Then 2 * 3 = 6.") == [("2 * 3 = 6", "holds")]
    assert extract_claims("check whether 5 * 5 = 24 or not").claims == []
    assert extract_claims("(1 + 1)^4 = (1 - 1)^4 => 16 = 0, impossible").wrong == []
    assert extract_claims("so x <= 3 + 2 = 6").wrong == []
    assert extract_claims("so 7 >= 2 * 3 = 5").wrong == []


def test_worded_asides_inside_a_computation_are_skipped() -> None:
    assert statuses("Remaining = 9 - 3 (from snack) - 2 (for lunch) = 4.") == [("9 - 3 - 2 = 4", "holds")]
    assert wrong("So 10 (infected) * 6 (each) = 66 people.") == [("10 * 6 = 66", "60")]
    assert statuses("so 60 / 15 = 4 (15 minutes) blocks") == [("60 / 15 = 4", "holds")]


def test_questions_and_bare_number_pairs_are_not_claims() -> None:
    assert statuses("In what base does 44 * 55 = 3506? In base 10, 44 * 55 = 2420.") == [
        ("44 * 55 = 2420", "holds")
    ]
    assert extract_claims("the terms: 2i^8 = 101 = 10 and so on").wrong == []  # garbled text
    assert [s for _, s in statuses("Rate: 0.25 = 20%")] == ["wrong"]  # different forms still compared


def test_a_stated_value_on_the_left_is_the_found_one() -> None:
    [c] = extract_claims("Thus: 194 = 11 * 17 + 9.").claims
    assert (c.status, c.expression, c.found, c.correct) == (ClaimStatus.WRONG, "11 * 17 + 9", "194", "196")


def test_degrees_and_middle_dot() -> None:
    assert statuses("The angle is 90\u00b0 - 30\u00b0 = 60\u00b0.") == [("90 - 30 = 60", "holds")]
    assert extract_claims("32\u00b0F = 0\u00b0C").claims == []  # a conversion, not arithmetic
    assert statuses("so 3 \u00b7 4 = 12") == [("3 * 4 = 12", "holds")]
