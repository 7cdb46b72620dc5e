"""The Car Dealer play view: the chat of :mod:`lmrl_tui.views.chat` plus what is specific here.

* A person playing the **buyer** sees their persona (brand, type, features, budget) and answers
  each seller line in the chat input, or ends the talk with the decision form under it: MSRP and
  price (prefilled from the seller's last car and price), **Accept** or **Reject**. The reply sent
  to the task is the chat line with LMRL's Output line appended
  (:func:`envs.car_dealer.task.buyer_decision`), which the seller never sees. When the task forces the
  final decision (after 50 texts) only the form is offered, and it answers with the continuation
  of ``"Output: Decision="`` as LMRL re-prompts.
* A person playing the **seller** types to the embedded persona buyer; the persona is shown only
  when the talk is over, with the outcome.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.markup import escape
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Button, Input, Static

from envs.car_dealer.data import OUTPUT_PREFIX, money, output_text
from envs.car_dealer.task import buyer_decision, buyer_message, is_decision_prompt, suggested_terms
from envs.core import InvalidInput, Text
from lmrl_tui.views.chat import ChatView


def persona_lines(persona: dict[str, Any]) -> list[str]:
    """The buyer's persona for a person to read."""
    feats = persona.get("preferred_features") or []
    return [
        f"Personality: {persona.get('personality', '?')}",
        f"Wants: {persona.get('preferred_brands', '?')} {persona.get('preferred_type', '?')}",
        f"Features: {', '.join(feats) if feats else '-'}",
        f"Budget: {money(persona.get('budget', 0))}",
    ]


def parse_dollars(typed: str, what: str) -> int:
    """``"$32,000"``, ``"32000"``, ``"32k"`` -> 32000 (raises InvalidInput for a person)."""
    text = typed.strip().lower().replace("$", "").replace(",", "").replace(" ", "")
    mult = 1
    if text.endswith("k"):
        text, mult = text[:-1], 1000
    try:
        value = float(text) * mult
    except ValueError:
        raise InvalidInput(f"Give the {what} in dollars, like 32,000.") from None
    if not 1 <= value <= 10_000_000:
        raise InvalidInput(f"The {what} must be between $1 and $10,000,000.")
    return int(round(value))


class CarDealerView(ChatView):
    """Chat plus the buyer's decision form (see the module docstring)."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.forced = False
        """The task asks for the final decision now (only the form may answer)."""

    def compose(self) -> ComposeResult:
        yield from super().compose()
        with Horizontal(id="deal-row"):
            yield Static("Decide:", id="deal-label")
            yield Input(placeholder="MSRP $", id="deal-msrp")
            yield Input(placeholder="Price you pay $", id="deal-price")
            yield Button("Accept", id="deal-accept", variant="success")
            yield Button("Reject", id="deal-reject", variant="error")

    # -- drawing ------------------------------------------------------------------------------
    def _ending(self) -> str:
        deal = self.state.get("deal")
        if not deal:
            return "The talk ended without a decision."
        if deal.get("car_bought"):
            return f"Sold for {money(deal['buy_price'])} (MSRP {money(deal['msrp'])})."
        return f"No sale: the buyer walked away (MSRP {money(deal['msrp'])})."

    def _redraw(self) -> None:
        super()._redraw()
        box = self.query_one("#chat-secret", Static)
        persona = self.state.get("persona")
        show = isinstance(persona, dict) and self._show_secret()
        box.display = show
        if show:
            title = "[b]The buyer[/b] (hidden from the seller)"
            box.update(title + "\n" + escape("\n".join(persona_lines(persona))))

    def _update_controls(self) -> None:
        super()._update_controls()
        for b in self.query("#chat-row Button"):
            b.display = False
        replying = self.replying is not None
        self.query_one("#deal-row").display = replying
        inp = self.query_one("#chat-input", Input)
        turn = self.query_one("#chat-turn", Static)
        if replying and self.forced:
            inp.disabled = True
            inp.placeholder = ""
            turn.update("The talk is over: decide now with Accept or Reject")
        elif replying:
            inp.placeholder = "Reply to the seller and press Enter (or decide below)"
            turn.update("Answer as the buyer: your wishes and budget are shown above")
        elif self._human_turn and not self.state.get("done"):
            inp.placeholder = "Type your message to the buyer and press Enter"
            turn.update(f"Your turn ({self.roles[0]}): talk to the buyer")

    # -- the buyer's turn ---------------------------------------------------------------------
    def request_reply(self, role: str, history: Sequence[Text]) -> None:
        self.forced = is_decision_prompt(history)
        seller = [t.text for t in history[2:] if not t.is_action]
        terms = suggested_terms(history)
        self.query_one("#deal-msrp", Input).value = f"{terms['msrp']:,}" if terms["msrp"] else ""
        self.query_one("#deal-price", Input).value = f"{terms['price']:,}" if terms["price"] else ""
        self.replying = role
        self.pending = seller[-1].strip() if seller and not self.forced else None
        self._redraw()
        if self.forced:
            self.query_one("#deal-accept", Button).focus()
        else:
            self.query_one("#chat-input", Input).focus()

    def _send_reply(self, typed: str) -> None:
        role = self.replying
        if role is None:
            return
        if self.forced:
            self.show_error("The talk is over: press Accept or Reject.")
            return
        try:
            text = buyer_message(typed)
        except InvalidInput as e:
            self.show_error(str(e))
            return
        self._post_reply(role, text)

    def _decide(self, accept: bool) -> None:
        role = self.replying
        if role is None:
            return
        try:
            msrp = parse_dollars(self.query_one("#deal-msrp", Input).value, "MSRP")
            price = parse_dollars(self.query_one("#deal-price", Input).value, "price") if accept else None
            if self.forced:
                text = output_text(accept, msrp, price)[len(OUTPUT_PREFIX) :] + "\n"
            else:
                text = buyer_decision(self.query_one("#chat-input", Input).value, accept, msrp, price)
        except InvalidInput as e:
            self.show_error(str(e))
            return
        self.query_one("#chat-input", Input).value = ""
        self._post_reply(role, text)

    def _post_reply(self, role: str, text: str) -> None:
        self.replying = None
        self.pending = None
        self.forced = False
        self.post_message(self.Submitted(text, role=role))
        self._redraw()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id in ("deal-accept", "deal-reject"):
            event.stop()
            self._decide(event.button.id == "deal-accept")
            return
        super().on_button_pressed(event)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id in ("deal-msrp", "deal-price"):
            event.stop()
            return
        super().on_input_submitted(event)


TASK_VIEWS = {"car-dealer": CarDealerView}
