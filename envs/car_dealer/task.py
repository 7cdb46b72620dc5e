"""Car Dealer (``car-dealer``): the agent is a car **seller** talking to a buyer with a hidden persona.

Persona (LMRL's distribution, drawn by ``reset(seed)`` in LMRL's order; see
:mod:`envs.car_dealer.data`): one of 10 personalities, 13 brands, 6 types, 1-4 of 8 features, and a
budget in {10k, 30k, 50k, 70k, 90k}. The seller never sees it; the buyer sees it as
``"Personality: polite. Prefers a Toyota SUV with sunroof, heated seats. Budget: $30,000\\n"``.
``reset(seed, {"persona": buyer_info})`` fixes it instead.

Texts (LMRL's). The seller's history is ``"Start\\n"`` then its own lines (kept verbatim) and the
buyer's replies. The buyer's view is ``"Start\\n"``, the persona line, then every line stripped +
``"\\n"`` (seller lines as observations, the buyer's own lines as actions). The buyer ends the
negotiation with ``Output: Decision=Accept MSRP=$32,000 Buy Price=$29,500`` or ``Output:
Decision=Reject MSRP=$32,000`` anywhere in its line; that substring is cut out of what the seller
sees (``"Deal, I'll take it. Output: ..."`` -> ``"Deal, I'll take it. \\n"``).

Partner: option ``partner`` (any :class:`envs.Agent`; its ``act`` gets the buyer's view and
returns one line), default :class:`envs.car_dealer.partner.PersonaBuyer`; ``partner_replies`` (a
list of recorded replies, played back in order) replays human- or model-partner episodes exactly.
Each step's ``info["partner_replies"]`` records what the partner said in that step. Replies are
read as one line (control characters and newlines become spaces, at most 2,000 characters).
Option ``buyer_bias`` (``none`` by default; ``anchoring``, ``feature`` or ``mixed``) makes the
embedded buyer a biased one that a seller can steer (see :mod:`envs.car_dealer.partner`); the
last step's ``info["buyer_bias"]`` then says which bias the episode's buyer had.
A person playing the buyer answers and decides with the helpers of
:mod:`envs.car_dealer.partner.person`.

Rewards (on the seller action the decision answers; 0 otherwise). ``reward_mode="fancy"`` (LMRL's
default): accept -> ``buy_price / ((budget + msrp) / 2)``; reject -> ``-(budget - msrp) / msrp``
(positive when the car costs more than the budget, as in LMRL); ``revenue``: ``buy_price / 1000``
if the car was bought, else 0. Rewards are clipped to ``spec.reward_range`` ([-100, 100] fancy,
[0, 1000] revenue), which only absurd prices typed by a human or model partner reach.

Horizon: after the buyer's reply that makes 50 texts (the 25th seller line) without a decision,
the partner is asked once more with its own line cut at ``"Output: Decision="`` as the last
(action) text, exactly as LMRL re-prompts. Unlike LMRL, both ``"Output: Decision=" +
continuation`` and the continuation alone are parsed, so the forced decision really counts (the
seller's last observation stays the buyer's reply). If it still does not parse, the episode ends
(truncated) with reward 0, like LMRL. Every seller text is a valid turn: text the buyer cannot
read gets an answer such as ``"Sorry, I don't understand."`` and ``info["understood"] = False``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from envs.car_dealer.data import (
    OUTPUT_PREFIX,
    Decision,
    Persona,
    output_text,
    parse_output,
    persona_line,
    sample_persona,
)
from envs.car_dealer.partner import PersonaBuyer
from envs.car_dealer.partner.bias import BUYER_BIASES, draw_bias
from envs.car_dealer.text import INSTRUCTIONS, MAX_PARSE_CHARS, clean
from envs.core import Agent, InvalidInput, Step, TaskBase, TaskSpec, Text, TextHistory

START = "Start\n"
MAX_TEXTS = 50
REWARD_RANGES = {"fancy": (-100.0, 100.0), "revenue": (0.0, 1000.0)}
MAX_HUMAN_CHARS = 500
VERSION = 1


def one_line(text: str) -> str:
    """A partner's reply as the single line LMRL's buyer emits (ends with one ``"\\n"``)."""
    return clean(str(text))[:MAX_PARSE_CHARS] + "\n"


def decision_reward(d: Decision | None, budget: int, mode: str) -> float:
    """LMRL's reward for a decision (0 without one), clipped to the mode's range."""
    if d is None:
        return 0.0
    if mode == "revenue":
        r = d.buy_price / 1000.0 if d.car_bought and d.buy_price is not None else 0.0
    elif d.msrp == 0:
        r = 0.0
    elif d.accept:
        r = d.buy_price / ((budget + d.msrp) / 2) if d.buy_price is not None else 0.0
    else:
        r = -(budget - d.msrp) / d.msrp
    lo, hi = REWARD_RANGES[mode]
    return float(min(hi, max(lo, r)))


class ReplayPartner:
    """Plays back recorded partner replies in order (human-partner episodes replay exactly)."""

    kind = "replay"
    name = "replay"

    def __init__(self, replies: Sequence[str]) -> None:
        self.replies = list(replies)
        self._i = 0

    def reset(self, task: Any = None, seed: int | None = None) -> None:
        self._i = 0

    def act(self, history: Sequence[Text]) -> str:
        if self._i >= len(self.replies):
            raise RuntimeError(
                f"the recorded partner replies ran out after {len(self.replies)}; "
                "the seller's actions differ from the recorded episode"
            )
        self._i += 1
        return self.replies[self._i - 1]


class CarDealerTask(TaskBase):
    """The seller's side of LMRL's Car Dealer; see the module docstring."""

    def __init__(
        self,
        reward_mode: str = "fancy",
        partner: Agent | None = None,
        partner_replies: Sequence[str] | None = None,
        max_texts: int = MAX_TEXTS,
        buyer_bias: str = "none",
    ) -> None:
        if reward_mode not in REWARD_RANGES:
            raise ValueError(f"unknown reward_mode {reward_mode!r}; choose fancy or revenue")
        if buyer_bias not in BUYER_BIASES:
            raise ValueError(
                f"unknown buyer_bias {buyer_bias!r}; choose from {', '.join(BUYER_BIASES)}"
            )
        if partner is not None and partner_replies is not None:
            raise ValueError("give either partner or partner_replies, not both")
        self.reward_mode = reward_mode
        self.max_texts = max(2, int(max_texts) // 2 * 2)
        if partner_replies is not None:
            partner = ReplayPartner(list(partner_replies))
        self.partner: Agent = partner if partner is not None else PersonaBuyer()
        options: dict[str, Any] = {"reward_mode": reward_mode, "max_texts": self.max_texts}
        self.bias_option = buyer_bias
        self.buyer_bias: tuple[str, str | None] = ("none", None)
        """This episode's (bias, overvalued feature), drawn at reset; the persona buyer reads it."""
        if buyer_bias != "none":
            options["buyer_bias"] = buyer_bias
        if partner_replies is not None:
            options["partner_replies"] = list(partner_replies)
        self.spec = TaskSpec(
            id="car-dealer",
            version=VERSION,
            title="Car Dealer",
            summary="Sell a car to a buyer whose brand, type, features and budget are hidden.",
            max_turns=self.max_texts // 2,
            reward_range=REWARD_RANGES[reward_mode],
            roles=("seller", "buyer"),
            partner="persona-buyer",
            norm=None,
            success_return=None,
            help=CAR_DEALER_HELP,
            options=options,
            # a dialogue of ~350 tokens (up to ~850): whole-episode windows cut at 256 would lose
            # the deal, the only reward; one window per turn keeps it
            window="history",
            instructions=INSTRUCTIONS,
        )
        self.persona: Persona = sample_persona(random.Random(0))
        self._lines: list[dict[str, Any]] = []
        self._hist: list[Text] = [Text(START, False)]
        self._done = True
        self._to_act: str | None = None
        self._decision: Decision | None = None
        self._return = 0.0
        self._last: dict[str, Any] = {}

    # -- Task API ----------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> str:
        rng = random.Random(seed)
        given = (options or {}).get("persona")
        self.persona = Persona.from_json(given) if given is not None else sample_persona(rng)
        self.buyer_bias = draw_bias(self.bias_option, self.persona, seed)
        self.partner.reset(self, None if seed is None else seed * 1_000_003 + 7)
        self._lines = []
        self._hist = [Text(START, False)]
        self._done = False
        self._to_act = "seller"
        self._decision = None
        self._return = 0.0
        self._last = {}
        return START

    def step(self, action: str) -> Step:
        if self._done:
            raise RuntimeError("the episode is over; call reset()")
        action = str(action)
        self._lines.append({"role": "seller", "text": action, "visible": action, "hidden": ""})
        self._hist.append(Text(action, True))
        self._to_act = "buyer"
        try:
            return self._buyer_turn()
        except BaseException:
            # The partner failed (endpoint down, person left): undo the seller's line so the
            # same step can be tried again.
            if self._lines and self._lines[-1]["role"] == "buyer":
                self._lines.pop()
                self._hist.pop()
            self._lines.pop()
            self._hist.pop()
            self._to_act = "seller"
            raise

    def _buyer_turn(self) -> Step:
        reply = one_line(self.partner.act(self.buyer_history()))
        replies = [reply]
        understood = getattr(self.partner, "last_understood", None)
        decision = parse_output(reply)
        visible = reply
        if decision is not None:
            a, b = decision.span
            visible = reply[:a] + reply[b:]
        forced = False
        texts = len(self._hist)  # "Start" excluded, the reply included
        if decision is None and texts >= self.max_texts:
            forced = True
            # LMRL re-prompts with the buyer's own reply, cut at "Output: Decision=", as its line.
            cut = Text(reply.removesuffix("\n") + OUTPUT_PREFIX, True)
            more = one_line(self.partner.act(self.buyer_history() + (cut,)))
            replies.append(more)
            decision = parse_output(more) or parse_output(OUTPUT_PREFIX + more)
        hidden = reply[decision.span[0] : decision.span[1]] if decision and not forced else ""
        if forced and decision is not None:
            hidden = output_text(decision.accept, decision.msrp, decision.buy_price)
        self._lines.append(
            {
                "role": "buyer",
                "text": reply,
                "visible": visible,
                "hidden": hidden,
                "understood": understood,
            }
        )
        self._hist.append(Text(visible, False))
        done = decision is not None or forced
        reward = decision_reward(decision, self.persona.budget, self.reward_mode)
        self._return += reward
        self._decision = decision
        self._done = done
        self._to_act = None if done else "seller"
        info: dict[str, Any] = {"understood": understood, "partner_replies": replies}
        if done:
            info.update(
                decision=decision.to_json() if decision else None,
                success=bool(decision and decision.car_bought),
                forced=forced,
                persona=self.persona.to_json(),
            )
            if self.bias_option != "none":
                info["buyer_bias"] = {"kind": self.buyer_bias[0], "feature": self.buyer_bias[1]}
        self._last = {"understood": understood, "forced": forced}
        return Step(visible, reward, decision is not None, done and decision is None, info)

    def buyer_history(self) -> TextHistory:
        """The partner's view: ``Start``, the persona line, then the dialogue stripped + ``\\n``."""
        out = [Text(START, False), Text(persona_line(self.persona), False)]
        for line in self._lines:
            out.append(Text(line["text"].strip() + "\n", line["role"] == "buyer"))
        return tuple(out)

    def history(self) -> TextHistory:
        return tuple(self._hist)

    def legal_actions(self) -> list[str] | None:
        return None

    def parse_input(self, typed: str) -> str:
        """A human seller's line: printable, one line, 1-500 characters, plus ``"\\n"``."""
        text = clean(typed)
        if not text:
            raise InvalidInput("Type something to say to the buyer.")
        if len(text) > MAX_HUMAN_CHARS:
            raise InvalidInput(f"That's too long: keep it under {MAX_HUMAN_CHARS} characters.")
        return text + "\n"

    def state(self) -> dict[str, Any]:
        d = self._decision
        return {
            "roles": list(self.spec.roles),
            "transcript": [dict(x) for x in self._lines],
            "persona": self.persona.to_json(),
            "persona_line": persona_line(self.persona),
            "secret": ["persona", "persona_line"],
            "done": self._done,
            "to_act": self._to_act,
            "deal": d.to_json() | {"decision": "accept" if d.accept else "reject"} if d else None,
            "texts": len(self._hist) - 1,
            "max_texts": self.max_texts,
            "turn": sum(1 for x in self._lines if x["role"] == "seller"),
            "max_turns": self.spec.max_turns,
            "reward_mode": self.reward_mode,
            "return": self._return,
            "partner": {"kind": self.partner.kind, "name": self.partner.name},
            "last": dict(self._last),
        }


CAR_DEALER_HELP = """\
## Car Dealer

You are the **seller**. The buyer has a hidden personality, a favourite brand and type of car,
a few features they want and a budget. Find out what they want, offer a car and agree on a price.

* Type a message and press **Enter**. Prices like `$32,000` or `32k` are understood.
* The buyer ends the talk by accepting or rejecting; after 25 of your messages it must decide.
* Reward (LMRL "fancy"): price / ((budget + MSRP) / 2) for a sale; -(budget - MSRP) / MSRP
  for a refusal.
"""
