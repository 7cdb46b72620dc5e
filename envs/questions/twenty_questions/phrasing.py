"""Twenty Questions: everyday ways of asking that say the same as a plainer question.

:func:`rephrase` rewrites a question's wording before it is matched, so that the knowledge base
sees the plain question: ``Would you call it a fruit?`` / ``Is it considered a fruit?`` / ``Does
it count as a fruit?`` ask ``Is it a fruit?``; ``Do you see it up in the sky?`` asks where it is
found; ``Is there a long handle on it?`` asks whether it has a handle. The rewrites are about
wording only, never about any object, so they hold for every secret.
"""

from __future__ import annotations

import re

from envs.questions.text import clean_text, fold

_SUBJECT = r"(?:it|this|that|the object|the thing|your object|your thing|they|them)"
_PERSON = r"(?:you|people|one|we|someone|most people|anyone|i|somebody)"
_REWRITES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p), r)
    for p, r in (
        # "Would you call it a fruit?", "Would people describe it as furniture?"
        (rf"^(?:would|could|do|does|can|might|will|should) {_PERSON} (?:call|consider|describe|"
         rf"classify|categori[sz]e|class|label|regard|count|think of|refer to) {_SUBJECT}"
         r"(?: to be| as(?: being)?| being)?(?= \w)", "is it"),
        # "Is it considered (to be) a fruit?", "Is it classified as a tool?"
        (rf"^(?:is|are|was|would|could) {_SUBJECT} (?:be )?(?:considered|classified|categori[sz]ed|"
         r"classed|counted|regarded|described|thought of|known|defined|labell?ed)"
         r"(?: to be| as(?: being)?| being)?\b", "is it"),
        # "Does it count as a vegetable?", "Does it qualify as furniture?", "Does it fall under tools?"
        (rf"^(?:does|do|would|could|can|will) {_SUBJECT} (?:count as|qualify as|pass as|count|"
         r"belong (?:to|in|among|with)|fall (?:under|into|in the category))\b",
         "is it"),
        # "Is it something you would call a tool?", "Is it what you would call a toy?"
        (r"^(?:is|are) (?:it|this|that) (?:something|what|a thing|an object|the sort of thing)"
         rf" (?:that )?{_PERSON} (?:would |might |could )?(?:call|consider|describe)"
         r"(?: as)?\b", "is it"),
        # "I think it's a chair", "Are you thinking of a chair?", "Is the answer a chair?"
        (r"^(?:i think|i guess|i bet|i believe|i say|my guess is|my guess would be|my answer is|"
         r"the answer is|is the answer|is your answer|are you thinking of|are you thinking about|"
         r"you are thinking of|youre thinking of|were you thinking of|is what you are thinking of)"
         r"(?: that)?(?: it is| it's| its| it must be| it might be| it could be| it may be)?\b",
         "is it"),
        # "Is it in the category of fruit?", "Does it belong to the category of tools?"
        (r"\b(?:in|of|from|to) the (?:category|group|family|class) of\b", "a"),
        (r"\b(?:category|group|family|class) of\b", ""),
        # "Do you see it up in the sky?", "Can you find it in a kitchen?", "Would I see it at a farm?"
        (rf"\b{_PERSON} (?:see|find|spot|notice|come across|encounter|meet) (?:it|them|one|this)"
         r"(?: up| out| down| around| over)?(?= (?:in|on|at|near|inside|around|by|under|outside|"
         r"indoors|outdoors|outside)\b)", "it is found"),
        # "Is it something that can fly?" -> "can it fly"; "Is it something you can eat?"
        (r"^(?:is|are) (?:it|this|that|they) (?:something|a thing|an object|an item|anything|"
         r"one of those things)(?: that| which)? (can|could|will|would|has|have|does|do)\b",
         r"\1 it"),
        (r"^(?:is|are) (?:it|this|that|they) (?:something|a thing|an object|an item|anything)"
         rf"(?: that| which)? {_PERSON} (?:can |could |would |might |will |should |do |usually |"
         r"often |normally |ever |typically |commonly )*(\w+)\b", r"do you \1 it"),
        (r"^(?:is|are) (?:it|this|that|they) (?:something|a thing|an object|an item|anything)"
         r" (?:that|which) ", "does it "),
        # "Do you see it after rain?": when it appears
        (rf"\b{_PERSON} (?:see|spot|notice) (?:it|them|one|this)(?= (?:after|during|when|before)\b)",
         "it appears"),
        # "Is there a long handle on it?", "Are there wheels on it?": what it has
        (r"^(?:is|are) there (?:a |an |any |some )?(.+?) (?:on|attached to) "
         rf"{_SUBJECT}$", r"does it have \1"),
        (r"\bmade out of\b", "made of"),
        (r"\bmade from\b", "made of"),
        # "Does it weigh more than a person?": heavier; "Does it cost a lot?": expensive
        (r"\bweighs? (?:more|over) than\b", "heavier than"),
        (r"\bweighs? less than\b", "lighter than"),
        (r"\b(?:cost|costs) (?:a lot|lots|much|a fortune|a lot of money|lots of money|"
         r"a great deal)\b", "expensive"),
        (r"\b(?:in|at) (?:most|many|every|a lot of|lots of) (?:homes|houses)\b", "in a house"),
        (r"\b(?:in|at) (?:your|a|the) home\b", "in a house"),
        # "Does it run on electricity?", "Is it powered by batteries?"
        (r"\b(?:run|runs|work|works|operate|operates|powered|power|driven) (?:on|by|with|off) "
         r"(?:electricity|batteries|battery|power|a battery|electric power|mains)\b",
         "electric"),
    )
)  # fmt: skip


def rephrase(question: str) -> str:
    """``question`` in plainer words (folded, lower case, without the final punctuation)."""
    text = " ".join(fold(clean_text(question)).replace("?", " ").split()).rstrip(".! ")
    for pattern, repl in _REWRITES:
        text = pattern.sub(repl, text)
    return " ".join(text.split())
