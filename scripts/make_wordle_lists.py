"""Generate the Wordle word lists shipped in ``envs/wordle/assets/`` (run once; output committed).

Sources (both from PyPI; install them for this script only, they are not runtime dependencies)::

    pip install english-words==2.0.2 wordfreq==3.1.1
    python scripts/make_wordle_lists.py

* Spellings: the ``web2`` list of ``english-words`` (MIT; Webster's Second International word
  list from FreeBSD, public domain). Only entries written in lower case are used (web2 capitalises
  proper nouns), five letters a-z.
* Frequencies: ``wordfreq`` (Apache-2.0 code; data CC BY-SA 4.0), English Zipf frequencies.

``answers.txt``: the ``N_ANSWERS`` most frequent web2 words (minus a short block list), sorted.
``small.txt``: the ``N_SMALL`` most frequent answers, sorted: a closed game (answers = guesses) the
size of LMRL-Gym's 431-word benchmark list, for small models (task option ``words=small``).
``guesses.txt``: every allowed guess (a superset of the answers): all five-letter web2 words plus
the regular inflections wordfreq knows (``-s``, ``-es``, ``-d``, ``-ed``, ``-er``) of shorter web2
words with a Zipf frequency of at least ``MIN_INFLECTION_ZIPF``, sorted.
"""

from __future__ import annotations

import re
from pathlib import Path

N_ANSWERS = 2300
N_SMALL = 400
MIN_INFLECTION_ZIPF = 2.0
FIVE = re.compile(r"[a-z]{5}")
# Words not wanted as hidden answers (slurs, crude or sexual terms); still allowed as guesses.
BLOCKED_ANSWERS = frozenset(
    "bitch boobs booty dicks dildo horny penis pussy semen slut sluts whore wench "
    "crack negro nazis spick homos gonad gonads nigga retard".split()
)
OUT = Path(__file__).resolve().parent.parent / "envs" / "wordle" / "assets"


def web2_words() -> set[str]:
    """Every lower-case entry of the web2 list (any length)."""
    from english_words import get_english_words_set

    return {
        w for w in get_english_words_set(["web2"]) if w.isascii() and w.isalpha() and w.islower()
    }


def inflections(base: set[str]) -> set[str]:
    """Five-letter regular inflections of ``base`` words that wordfreq has seen often enough."""
    from wordfreq import iter_wordlist, zipf_frequency

    out = set()
    for w in iter_wordlist("en"):
        if not FIVE.fullmatch(w) or w in base:
            continue
        stems = []
        if w.endswith("s"):
            stems.append(w[:-1])
        if w.endswith(("es", "ed", "er")):
            stems.append(w[:-2])
        if w.endswith("d") or w.endswith("r"):
            stems.append(w[:-1])  # care -> cared, safe -> safer
        if (
            any(s in base and len(s) >= 3 for s in stems)
            and zipf_frequency(w, "en") >= MIN_INFLECTION_ZIPF
        ):
            out.add(w)
    return out


def main() -> None:
    from wordfreq import zipf_frequency

    words = web2_words()
    five = sorted(w for w in words if FIVE.fullmatch(w))
    ranked = sorted(five, key=lambda w: (-zipf_frequency(w, "en"), w))
    allowed = [w for w in ranked if w not in BLOCKED_ANSWERS]
    answers = sorted(allowed[:N_ANSWERS])
    small = sorted(allowed[:N_SMALL])
    guesses = sorted(set(five) | inflections(words))
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "answers.txt").write_text("\n".join(answers) + "\n", encoding="ascii")
    (OUT / "small.txt").write_text("\n".join(small) + "\n", encoding="ascii")
    (OUT / "guesses.txt").write_text("\n".join(guesses) + "\n", encoding="ascii")
    print(f"answers {len(answers)}, small {len(small)}, guesses {len(guesses)} -> {OUT}")


if __name__ == "__main__":
    main()
