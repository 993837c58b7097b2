"""The vocabulary the tokenizer and the chain rules read: which words join, bound or
condition a calculation. Kept apart so the rules that use them stay short."""

from __future__ import annotations

import sympy

APPROX_WORDS = frozenset(
    {"approximately", "approx", "about", "roughly", "around", "nearly", "almost", "circa"}
)
SCALE_WORDS = {
    "hundred": sympy.Integer(100),
    "thousand": sympy.Integer(1000),
    "million": sympy.Integer(10**6),
    "billion": sympy.Integer(10**9),
    "trillion": sympy.Integer(10**12),
}
# Words that join a number to what precedes it ("half of 50 = 25"): a first side after one is partial.
LEFT_JOIN_WORDS = frozenset(
    {
        "of", "times", "by", "per", "over", "plus", "minus", "into", "than", "divided", "multiplied",
        "squared", "cubed", "dozen", "dozens", "half", "halves", "third", "thirds", "quarter", "quarters",
        "twice", "double", "triple", "thrice", "power", "root", "mod", "modulo", "factorial", "choose",
        "percent", "pct", "fifths", "fourths", "sixths", "tenths", "hundredths", "from",
    }
)  # fmt: skip
# Words that join a number to what follows ("= 5 times as many"): a last side before one is partial.
RIGHT_JOIN_WORDS = frozenset(
    {
        "of", "times", "by", "over", "plus", "minus", "into", "divided", "multiplied", "squared", "cubed",
        "dozen", "dozens", "halves", "third", "thirds", "quarter", "quarters", "power", "mod", "modulo",
        "factorial", "choose", "fifths", "fourths", "sixths", "tenths", "hundredths", "th", "st", "nd", "rd",
    }
)  # fmt: skip
# Unit words that may sit between a number and an operator ("5 hours * 3") and be dropped.
UNIT_WORDS = frozenset(
    {
        "hour", "hours", "hr", "hrs", "minute", "minutes", "min", "mins", "second", "seconds", "sec", "secs",
        "day", "days", "week", "weeks", "month", "months", "year", "years", "dollar", "dollars", "cent",
        "cents", "km", "cm", "mm", "kg", "mg", "lb", "lbs", "pound", "pounds", "ounce", "ounces",
        "oz", "mile", "miles", "foot", "feet", "ft", "inch", "inches", "yard", "yards", "meter", "meters",
        "liter", "liters", "litre", "litres", "gallon", "gallons", "ml", "mph", "kmh", "units",
        "unit", "people", "pieces", "items", "cups", "cup",
    }
)  # fmt: skip
# Lower-case words that never name a unit, so a number before them is not a count of them.
NOT_UNITS = frozenset(
    {
        "and", "or", "is", "are", "was", "were", "be", "the", "a", "an", "to", "in", "on", "at", "for",
        "with", "as", "more", "less", "fewer", "than", "each", "every", "per", "which", "that", "this",
        "so", "then", "we", "it", "gives", "get", "equals", "makes", "left", "remaining", "total",
        "altogether", "both", "all", "not", "no", "only", "also", "but", "if", "when", "because",
        "since", "after", "before", "from", "into", "out", "up", "down", "off", "over", "under",
    }
)  # fmt: skip
# Words after which "-" starts a negative number rather than subtracting from what came before.
UNARY_MINUS_AFTER = frozenset(
    {"is", "are", "was", "were", "be", "equals", "equal", "gives", "get", "got", "so", "then", "thus",
     "hence", "therefore", "and", "to", "at", "by", "of", "from", "becomes", "become", "makes", "yields",
     "we", "have", "has", "obtain", "value", "answer", "result", "it", "or", "as"}
)  # fmt: skip
# Short English words: never read as a product of one-letter symbols ("ax^2" is, "is" is not).
SHORT_WORDS = frozenset(
    {
        "an", "as", "at", "be", "by", "do", "go", "he", "if", "in", "is", "it", "me", "my", "no", "of",
        "on", "or", "so", "to", "up", "us", "we", "am", "are", "and", "the", "for", "but", "not", "can",
        "has", "had", "was", "its", "our", "you", "all", "any", "one", "two", "six", "ten", "how", "why",
        "who", "let", "get", "set", "see", "use", "per", "sum", "max", "min", "lcm", "gcd", "mod", "log",
        "sin", "cos", "tan", "exp", "new", "now", "yet", "off", "out", "own", "say", "way", "few", "add",
        "end", "may", "put", "ask", "try", "run", "via", "etc", "eq", "ln", "sec", "csc", "cot", "arg",
        "det", "lim", "inf", "sup", "dx", "dy", "dt", "du", "th", "st", "nd", "rd", "cm", "mm", "km", "kg",
        "lb", "oz", "ft", "mi", "hr", "yes", "box", "odd", "age", "day", "cup",
    }
)  # fmt: skip
# Verbs after which a bare number is a value, not a label ("the total is 42 = 12 + 30").
VERBS = frozenset({"is", "are", "was", "were", "be", "equals", "gives", "get", "got", "makes", "yields"})
# Letters glued to digits that are a unit or an ordinal, never a product ("3rd", "5km", "2pm").
GLUED_SUFFIXES = frozenset(
    {"st", "nd", "rd", "th", "km", "cm", "mm", "kg", "mg", "ml", "am", "pm", "ft", "lb", "lbs", "oz",
     "hr", "hrs", "min", "mins", "sec", "mph", "in", "yd", "mi", "s", "h", "m", "g", "l", "k"}
)  # fmt: skip
OPEN_MATH, CLOSE_MATH = "\u27e6", "\u27e7"
RELATIONS = frozenset({"<", ">", "\u2264", "\u2265", "\u2260"})
IMPLIES = "\u21d2"
BREAKER = "\u00a6"
JUXTAPOSED = "\u2016"  # marks a run that starts right after another operand
SAFE_LEFT_SYMBOLS = frozenset({"\n", ":", ";", ",", ".", '"', "\u201c", "\u201d", "?", OPEN_MATH, CLOSE_MATH})
SAFE_LEFT_ATTACHED = frozenset({'"', "\u201c", "\n", "[", "{", OPEN_MATH})
SAFE_RIGHT_ATTACHED = frozenset({".", ",", ";", ":", "?", '"', "\u201d", "\n", "'", CLOSE_MATH})
# A chain that touches one of these on its outer side is part of something longer.
PARTIAL_MARKS = frozenset(
    {JUXTAPOSED, BREAKER, IMPLIES, "<", ">", "\u2264", "\u2265", "\u2260", "|", "!", "%", "'", "^", "_", "&"}
)

# Words that open a condition, a hypothesis or a test: equalities up to the end of the
# clause are not claimed ("if 2 + 2 = 5, then ...", "check: 3^2 - 9 = 0").
HYPOTHETICAL_WORDS = frozenset(
    {
        "if", "whether", "suppose", "supposing", "assume", "assuming", "unless", "iff", "hypothetically",
        "check", "checking", "verify", "verifying", "test", "testing", "try", "trying",
    }
)  # fmt: skip
CLAUSE_ENDS = frozenset({".", ";", "!", "?", "\n", ",", "then", "so", "thus", "hence", "therefore"})
SENTENCE_ENDS = frozenset({".", ";", "!", "?", "\n"})
# Words after an equality in the same sentence that reject it ("2+1=1 (False)", "16 = 0, impossible").
REJECTION_WORDS = frozenset(
    {
        "false", "incorrect", "impossible", "contradiction", "contradicts", "invalid", "wrong", "fails",
        "\u2717", "\u2718", "absurd",
    }
)  # fmt: skip
# "not" / "doesn't" followed by one of these rejects too ("not true", "does not hold").
NEGATED_REJECTIONS = frozenset(
    {
        "true",
        "valid",
        "hold",
        "holds",
        "work",
        "works",
        "satisfy",
        "satisfied",
        "equal",
        "possible",
        "correct",
    }
)
NEGATIONS = frozenset({"not", "doesn't", "isn't", "don't", "cannot", "can't", "never"})
# An equality followed by one of these is an equation being worked on, not a stated fact
# ("we get 0 + 14*71 = 999, which simplifies to ...").
REWORK_WORDS = frozenset({"simplifies", "simplify", "simplifying", "reduces", "becomes", "implies", IMPLIES})
FUNCTION_WORDS = frozenset({"sqrt", "sin", "cos", "tan", "log", "ln", "exp", "binom"})
FUNCTION_LETTERS = frozenset("fghpqPQFGH")
DIGITS = frozenset("0123456789")  # other scripts' digits are not read as numbers
MAX_DEPTH = 60  # brackets and signs nested deeper than this are not arithmetic anyone writes
