"""The Car Dealer play view: the chat of :mod:`lmrl_tui.views.chat` and a side panel per role.

Each side sees what its role knows:

* A person playing the **seller** sees the lot: every car with its list price (the MSRP), its
  types and features, filtered by the search line above it. The buyer's persona stays hidden
  until the talk is over, when it is shown with the outcome.
* A person playing the **buyer** sees their persona (personality, the car they want, the
  features they want, their budget), never the lot. They answer each seller line in the chat
  input, or end the talk with the decision form: the prices on the table (the seller's offers
  and their own counter-offers, :func:`envs.car_dealer.partner.person.offers`, newest first and
  picked), **Accept** (buys the picked car at the picked price; its MSRP is filled in) or **Walk away**.
  Nothing is typed but the chat line that goes with the decision; a decision that cannot be
  made (no price named yet, a chat line too long) is explained and nothing is lost. The reply
  sent to the task is the chat line with LMRL's Output line appended, which the seller never
  sees. When the task forces the final decision (after 50 texts) only the form may answer, with
  the continuation of ``"Output: Decision="`` as LMRL re-prompts.
* Someone watching two programs sees the lot, and the persona at the end.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.markup import escape
from rich.text import Text as RichText
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Input, OptionList, Static

from envs.car_dealer.data import OUTPUT_PREFIX, Car, inventory, money, output_text, type_phrase
from envs.car_dealer.partner.person import buyer_decision, buyer_message, is_decision_prompt, offers
from envs.core import InvalidInput, Text
from lmrl_tui.views.chat import ChatLog, ChatView
from lmrl_tui.views.redraw import TypingInput


def persona_lines(persona: dict[str, Any]) -> list[str]:
    """The buyer's persona for a person to read."""
    feats = persona.get("preferred_features") or []
    ctype = str(persona.get("preferred_type", "?"))
    return [
        f"Personality: {persona.get('personality', '?')}",
        f"Wants: {persona.get('preferred_brands', '?')} {type_phrase(ctype)}",
        f"Features: {', '.join(feats) if feats else '-'}",
        f"Budget: {money(persona.get('budget', 0))}",
    ]


def car_text(car: Car) -> str:
    """One car of the lot, as searched and shown: name, list price, types and features."""
    return f"{car.name} {money(car.price)} {' '.join(car.types)} {' '.join(car.features)}"


def lot_matches(query: str) -> list[Car]:
    """The cars whose text holds every word of ``query`` (any case; a price with or without ``$``)."""
    words = query.lower().replace("$", "").split()
    return [c for c in inventory() if all(w in car_text(c).lower().replace("$", "") for w in words)]


def offer_label(offer: dict[str, Any]) -> str:
    car = offer["car"] or "the car"
    who = "your offer" if offer["by"] == "buyer" else "seller"
    return f"{car} at {money(offer['price'])} ({who})"


class CarDealerView(ChatView):
    """Chat plus the role's side panel (see the module docstring)."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.forced = False
        """The task asks for the final decision now (only the form may answer)."""
        self.offers: list[dict[str, Any]] = []
        """The prices on the table when the person is asked to answer, newest first."""

    @property
    def sees_lot(self) -> bool:
        """The lot is the seller's knowledge: shown unless the person plays only the buyer."""
        return "buyer" not in self.human_roles or "seller" in self.human_roles

    def compose(self) -> ComposeResult:
        with Horizontal(id="cd-main"):
            with Vertical(id="cd-chat"):
                yield Static("", id="chat-info")
                yield Static("", id="chat-secret")
                with ChatLog(id="chat-log"):
                    yield Static("", id="chat-text")
                yield Static("", id="chat-turn")
                with Horizontal(id="chat-row"):
                    yield TypingInput(placeholder="", id="chat-input", disabled=True)
            with Vertical(id="cd-side"):
                yield Static("", id="cd-persona")
                with Vertical(id="deal-form"):
                    yield Static("[b]Your decision[/b] · pick the offer", id="deal-label")
                    yield OptionList(id="deal-offers")
                    with Horizontal(id="deal-buttons"):
                        yield Button("Accept", id="deal-accept", variant="success")
                        yield Button("Walk away", id="deal-reject", variant="error")
                with Vertical(id="cd-lot-box"):
                    yield Static("", id="cd-lot-title")
                    yield TypingInput(
                        placeholder="Search make, model, type, feature", id="cd-search"
                    )
                    with VerticalScroll(id="cd-lot"):
                        yield Static("", id="cd-lot-list")

    def on_mount(self) -> None:
        self.query_one("#cd-lot-box").display = self.sees_lot
        self._draw_lot()

    # -- drawing ------------------------------------------------------------------------------
    def _draw_lot(self) -> None:
        cars = lot_matches(self.query_one("#cd-search", Input).value)
        self.query_one("#cd-lot-title", Static).update(
            f"[b]Your lot[/b] · {len(cars)} of {len(inventory())} cars (MSRP)"
        )
        out = RichText()
        for i, car in enumerate(cars):
            if i:
                out.append("\n")
            out.append(car.name, style="bold")
            out.append(f"  {money(car.price)}\n", style="green")
            out.append(f"  {', '.join(car.types)} · {', '.join(car.features)}", style="dim")
        if not cars:
            out.append("No car matches.", style="dim italic")
        self.query_one("#cd-lot-list", Static).update(out)

    def _ending(self) -> str:
        deal = self.state.get("deal")
        if not deal:
            return "The talk ended without a decision."
        if deal.get("car_bought"):
            return f"Sold for {money(deal['buy_price'])} (MSRP {money(deal['msrp'])})."
        return f"No sale: the buyer walked away (MSRP {money(deal['msrp'])})."

    def _redraw(self) -> None:
        super()._redraw()
        self.query_one("#chat-secret", Static).display = False
        box = self.query_one("#cd-persona", Static)
        persona = self.state.get("persona")
        playing_buyer = "buyer" in self.human_roles
        show = isinstance(persona, dict) and (playing_buyer or bool(self.state.get("done")))
        box.display = show
        if show:
            title = (
                "[b]You are the buyer[/b]"
                if playing_buyer
                else "[b]The buyer[/b] (was hidden from you)"
            )
            box.update(title + "\n" + escape("\n".join(persona_lines(persona))))

    def _update_controls(self) -> None:
        super()._update_controls()
        replying = self.replying is not None
        # The form keeps its place while a person plays the buyer, dimmed while the seller talks
        # (showing and hiding it re-arranged the whole screen at every turn); a press then does
        # nothing (``_decide`` needs a reply to be awaited).
        form = self.query_one("#deal-form")
        form.display = "buyer" in self.human_roles and not self.state.get("done")
        form.set_class(not replying, "-idle")
        inp = self.query_one("#chat-input", Input)
        turn = self.query_one("#chat-turn", Static)
        if replying and self.forced:
            inp.disabled = True
            inp.placeholder = ""
            turn.update("The talk is over: decide now with Accept or Walk away")
        elif replying:
            inp.placeholder = "Reply to the seller, Enter to send"
            turn.update("Answer as the buyer, or decide on the right")
        elif self._human_turn and not self.state.get("done"):
            inp.placeholder = "Type your message to the buyer and press Enter"
            turn.update(f"Your turn ({self.roles[0]}): talk to the buyer")

    # -- the buyer's turn ---------------------------------------------------------------------
    def request_reply(self, role: str, history: Sequence[Text]) -> None:
        self.forced = is_decision_prompt(history)
        seller = [t.text for t in history[2:] if not t.is_action]
        persona = self.state.get("persona")
        budget = persona.get("budget") if isinstance(persona, dict) else None
        self.offers = offers(history, budget)
        box = self.query_one("#deal-offers", OptionList)
        box.clear_options()
        if self.offers:
            box.add_options([offer_label(o) for o in self.offers])
            box.highlighted = 0
        else:
            box.add_option("No price named yet")
        self.replying = role
        self.pending = seller[-1].strip() if seller and not self.forced else None
        self._redraw()
        if self.forced:
            box.focus()
        else:
            self.query_one("#chat-input", Input).focus()

    def _send_reply(self, typed: str) -> None:
        role = self.replying
        if role is None:
            return
        if self.forced:
            self.show_error("The talk is over: press Accept or Walk away.")
            return
        try:
            text = buyer_message(typed)
        except InvalidInput as e:
            self.show_error(str(e))
            return
        self._post_reply(role, text, raw=typed)

    def _picked(self) -> dict[str, Any] | None:
        i = self.query_one("#deal-offers", OptionList).highlighted
        return (
            self.offers[i] if self.offers and i is not None and 0 <= i < len(self.offers) else None
        )

    def _decide(self, accept: bool) -> None:
        role = self.replying
        if role is None:
            return
        offer = self._picked()
        try:
            if accept and offer is None:
                raise InvalidInput(
                    "No price is on the table yet: ask the seller for one, or walk away."
                )
            if offer is not None:
                msrp, price = int(offer["msrp"]), int(offer["price"]) if accept else None
            else:
                persona = self.state.get("persona")
                msrp, price = (
                    int(persona.get("budget") or 1) if isinstance(persona, dict) else 1,
                    None,
                )
            if self.forced:
                text = output_text(accept, msrp, price)[len(OUTPUT_PREFIX) :] + "\n"
            else:
                said = self.query_one("#chat-input", Input).value
                if said.strip():
                    buyer_message(said)  # the same limits as a chat line
                text = buyer_decision(said, accept, msrp, price)
        except InvalidInput as e:
            self.show_error(str(e))
            return
        self.query_one("#chat-input", Input).value = ""
        self._post_reply(role, text)

    def _post_reply(self, role: str, text: str, raw: str | None = None) -> None:
        self.replying = None
        self.pending = None
        self.forced = False
        self.post_message(self.Submitted(text, role=role, raw=raw))
        self._redraw()

    # -- events (Textual also calls ChatView's handlers after these unless prevented) -----------
    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id in ("deal-accept", "deal-reject"):
            event.stop()
            event.prevent_default()
            self._decide(event.button.id == "deal-accept")

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "cd-search":
            event.stop()
            self._draw_lot()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "cd-search":  # searching is no move
            event.stop()
            event.prevent_default()


TASK_VIEWS = {"car-dealer": CarDealerView}
