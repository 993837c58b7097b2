"""The algebra tier, the LaTeX reading and what is not a claim: each example of issue 14."""

from __future__ import annotations

import pytest

from trustnode.audit.claims import context_from, extract_claims, has_decidable_claim
from trustnode.audit.computer import NOTHING_CHECKED, ComputerAuditor
from trustnode.models.audit import AuditTask, ClaimStatus, ContextSegment, SegmentContext
from trustnode.models.enums import AuditorType, Level, Verdict


def kinds(text: str, parents: list[str] | None = None) -> list[tuple[str, str]]:
    ctx = context_from(parents or [])
    ext = extract_claims(text, ctx.bindings, facts=ctx.facts)
    return [(c.tolerance, c.status.value) for c in ext.claims]


def task(content: str, parents: list[str] | None = None) -> AuditTask:
    return AuditTask(
        segment_index=0,
        node_id="ST9",
        level=Level.STEP,
        auditor_type=AuditorType.T_AUTO,
        content=content,
        context=SegmentContext(
            problem="p",
            parents=[
                ContextSegment(node_id=f"ST{i}", level=Level.STEP, content=p)
                for i, p in enumerate(parents or [])
            ],
        ),
    )


# -- the examples ---------------------------------------------------------------


def test_a_false_factorisation_is_caught_with_a_witness() -> None:
    [c] = extract_claims("So x³−4x²+3 = (x−1)(x²−3x+3).").claims
    assert (c.tolerance, c.status) == ("identity", ClaimStatus.WRONG)
    assert c.note.startswith("at x = ") and "differ by" in c.note
    assert kinds("So x^3 - 4x^2 + 3 = (x - 1)(x^2 - 3x - 3).") == [("identity", "holds")]


def test_x_equals_a_is_a_root_is_checked_by_substitution() -> None:
    poly = "Let p(x) = x^3 - 4x^2 + 3."
    assert kinds(f"{poly} By inspection x = 3 is a root.") == [("root", "wrong")]
    assert kinds(f"{poly} By inspection x = 1 is a root.") == [("root", "holds")]
    assert kinds("By inspection x = 3 is a root.", [poly]) == [("root", "wrong")]  # E in a parent
    assert kinds("Consider x^3 - 4x^2 + 3 = 0. Then x = 2 is not a root.") == [("root", "holds")]
    res = ComputerAuditor().audit(task("By inspection x = 3 is a root.", ["Solve x^3 - 4x^2 + 3 = 0."]))
    assert res.failed and "at x = 3 is -6" in res.evidence.claims[0].note


def test_a_wrong_chain_rule_factor_is_caught() -> None:
    wrong = r"If \( f(x) = (x^2+1)^3 \), then \( f'(x) = 3(x^2+1)^2 \cdot x \)."
    right = r"If \( f(x) = (x^2+1)^3 \), then \( f'(x) = 6x(x^2+1)^2 \)."
    assert kinds(wrong) == [("derivative", "wrong")] and kinds(right) == [("derivative", "holds")]
    assert kinds(r"\( \frac{d}{dx} \sin(x^2) = \cos(x^2) \)") == [("derivative", "wrong")]
    assert kinds(r"\( \frac{d}{dx}\left(\sin(x^2)\right) = 2x\cos(x^2) \)") == [("derivative", "holds")]
    assert kinds(r"Since \( y = x^2 + 3x \), \( \frac{dy}{dx} = 2x + 3 \).") == [("derivative", "holds")]
    # a derivative set to zero is an equation to solve, not a claim about f'
    assert (
        kinds(r"Setting \( f'(x) = 0 \) gives the critical points.", ["Let \\( f(x) = x^3 - 3x \\)."]) == []
    )


def test_tested_and_rejected_equalities_are_not_claims() -> None:
    assert extract_claims("Try x = 1: 2+1=1 (False).").claims == []
    assert extract_claims("2+1=1 (False)").claims == []
    assert extract_claims("we get 0+14·71 = 999, which simplifies to 994 = 999").claims == []
    assert extract_claims("Check: 3 * 3 = 10.").claims == []
    assert extract_claims("Suppose 2 * 3 = 7. Then nothing follows.").claims == []
    assert extract_claims("If 5 + 5 = 11, then we are wrong.").claims == []
    assert extract_claims("Testing k = 4: 4 * 4 = 15, which does not hold.").claims == []
    assert extract_claims("16 = 0, impossible.").claims == []
    # ... while the same arithmetic stated is read
    assert kinds("So 3 * 3 = 10.") == [("exact", "wrong")]


def test_a_square_root_next_to_a_number_is_read_whole() -> None:
    [c] = extract_claims(r"\( 6 \cdot 3^{7/2} = 6 \cdot 27\sqrt{3} \)").claims
    assert c.status is ClaimStatus.HOLDS and "sqrt(3)" in c.text
    [c2] = extract_claims("6·3^{7/2} = 6·27√3").claims
    assert c2.status is ClaimStatus.HOLDS and c2.found.endswith("sqrt(3)")
    assert kinds(r"\( 6 \cdot 3^{7/2} = 6 \cdot 27 \cdot 2\sqrt{3} \)") == [("exact", "wrong")]


def test_a_boxed_restatement_is_read_once() -> None:
    [c] = extract_claims(r"so \( 4 - 28 = -24 \boxed{-24} \)").claims
    assert (c.text, c.status) == ("4 - 28 = -24", ClaimStatus.HOLDS)
    assert kinds(r"\( 100 - 66 = \boxed{34} \)") == [("exact", "holds")]


def test_latex_left_right_dfrac_cdot_and_radicals() -> None:
    assert kinds(r"\( \left( \dfrac{3}{4} \right)^2 = \dfrac{9}{16} \)") == [("exact", "holds")]
    assert kinds(r"\( \left[ 2 + 3 \right] \cdot 4 = 20 \)") == [("exact", "holds")]
    assert kinds(r"\( 2\sqrt{3} \cdot \sqrt{3} = 6 \)") == [("exact", "holds")]
    assert kinds(r"\( \sqrt[3]{27} + \tfrac{1}{2} = 3.5 \)") == [("exact", "holds")]
    assert kinds(r"\( \lceil -8.8 \rceil = -9 \)") == [("exact", "wrong")]


# -- the rest of the algebra tier -------------------------------------------------------------


def test_solving_gives_x_is_checked_against_the_equation() -> None:
    assert kinds(r"We solve \( 2x + 3 = 11 \), so \( x = 5 \).") == [("solution", "wrong")]
    assert kinds(r"\[ y - 1 - 8y = -3 \] \[ -7y = -4 \]") == [("solution", "wrong")]
    assert kinds("x^2 - 5x + 6 = 0, so (x - 2)(x - 3) = 0, so x = 3.") == [
        ("solution", "holds"),
        ("solution", "holds"),
    ]
    # against the equation of a parent segment
    parent = ["The combined total gives the equation: 30 + 15 + \\( x \\) + 105 = 500."]
    assert kinds("Subtracting 150 from both sides, we get: \\( x \\) = 350 - 150.", parent) == [
        ("solution", "wrong")
    ]
    # alternatives are not one derivation
    assert kinds("x - 8 = 12 or x - 8 = -12, so x = 20.") == []


def test_integrals_sums_products_and_comparisons() -> None:
    assert kinds(r"\( \int 3x^2 \, dx = x^3 + C \)") == [("antiderivative", "holds")]
    assert kinds(r"\( \int 2x \, dx = 2x^2 + C \)") == [("antiderivative", "wrong")]
    assert kinds(r"\( \int_0^1 x^2 \, dx = \frac{1}{2} \)") == [("integral", "wrong")]
    assert kinds(r"\( \sum_{k=1}^{10} k^2 = 385 \)") == [("sum", "holds")]
    assert kinds(r"\( \sum_{k=1}^{10} k = 56 \)") == [("sum", "wrong")]
    assert kinds(r"\( \sum_{k=1}^{n} k = \frac{n(n+1)}{2} \)") == [("sum", "holds")]
    assert kinds(r"\( \prod_{i=1}^{5} i = 120 \)") == [("product", "holds")]
    assert kinds("so 3/4 < 0.85 and 2^10 > 1000") == [("comparison", "holds"), ("comparison", "holds")]
    assert kinds(r"so \( 2 + 5 \geq 8 \)") == [("comparison", "wrong")]
    assert kinds("so 2/3 < 0.67") == []  # within the rounding of 0.67: not decided
    assert kinds("Is 2 + 5 > 8? No.") == []


def test_equations_and_substitutions_are_not_false_identities() -> None:
    assert extract_claims("We set the two expressions equal: x^2 + 2 = (x + 2)^2.").claims == []
    assert extract_claims("So x * y = (x + 6) * (y - 2).").claims == []
    # (a+b+c)^2 with ab+bc+ca = -11 substituted: the top-degree part changed, so not a slip
    assert extract_claims(r"\[ (a+b+c)^2 = a^2 + b^2 + c^2 + 2(-11) = 3 \]").wrong == []
    # "i" as the imaginary unit
    assert kinds("So (1 + i)^2 = 1 + 2i + i^2 = 2i.") == [("identity", "holds"), ("identity", "holds")]


def test_remainders_and_restated_totals() -> None:
    assert kinds("1529 ÷ 6 = 255 with a remainder of 4.") == [("remainder", "wrong")]
    assert kinds("17 ÷ 5 = 3 remainder 2.") == [("remainder", "holds")]
    assert kinds("Total earnings = $3.00 + $3.00 + $1.50. Total earnings = $8.00.") == [("exact", "wrong")]
    assert kinds("Daily pay = $105 / 5. Daily pay = $21.") == [("exact", "holds")]


def test_hostile_symbolic_input_is_refused_not_computed() -> None:
    assert extract_claims("so (x+y+z+w)^24 + (x-y)^24 = (x+y+z+w+1)^24 - 3 = 7").claims == []
    assert extract_claims("so x^99999 + 1 = x^99999 + 1 = 2").claims == []
    assert extract_claims(r"\( \sum_{k=1}^{10^9} k = 5 \)").claims == []
    assert extract_claims(r"\( 100000! = 1 \)").claims == []
    nested = r"\frac{" * 5000
    assert extract_claims(nested).claims == [] and not has_decidable_claim(nested)


def test_router_sees_what_the_auditor_sees_and_nothing_checked_is_never_a_pass() -> None:
    for text in ["So x^3 - 1 = (x + 1)(x^2 - x + 1).", "so 12 * 7 = 84", r"\( \int 2x \, dx = x^2 + C \)"]:
        assert has_decidable_claim(text)
        assert ComputerAuditor(use_context=False).audit(task(text)).decided
    prose = "Therefore the triangle is isosceles."
    assert not has_decidable_claim(prose)
    res = ComputerAuditor().audit(task(prose))
    assert not res.decided and res.evidence.details["reason"] == NOTHING_CHECKED
    assert res.evidence.details["claims_checked"] == 0 and not res.evidence.checkable
    assert ComputerAuditor().audit(task("So x^3 - 1 = (x + 1)(x^2 - x + 1).")).verdict is Verdict.FAIL


@pytest.mark.parametrize(
    "text",
    [
        "For x = 1, y = 2(1) + 1 = 3. For x = 2, y = 2(2) + 1 = 5.",
        r"\[ x = \frac{-16 + 32}{6} = \frac{8}{3} \] \[ x = \frac{-16 - 32}{6} = -8 \]",
        "so 1/2 inch = 20 miles on the map",
        "The critical points are \\(x = 4 - \\sqrt{3}\\) and \\(x = 4 + \\sqrt{3}\\).",
    ],
)
def test_cases_roots_and_scales_are_not_flagged(text: str) -> None:
    assert extract_claims(text).wrong == []
