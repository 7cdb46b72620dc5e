"""LMRL-Gym's Car Dealer loader, restated: what its trainers make of an item of the LMRL format
(the car-dealer codec tests check our export against it)."""

from __future__ import annotations

from typing import Any

LMRL_AGENTS = ("Buyer", "Seller", "Dealer")
"""The role names LMRL's loader may count as the agent's: its buyer is ``"Buyer"``; its seller
role prints as ``"Dealer"`` (so with the data's ``"Seller"`` lines it sees no actions); we check the
seller side with both names."""


def lmrl_load(item: dict[str, Any], agent: str) -> tuple[list[tuple[str, bool]], list[float], bool]:
    """What LMRL-Gym's ``create_trajectory_from_conversation`` makes of ``item`` for the agent
    speaking as ``agent``: (texts with is_action, rewards, done). Raises where it raises.

    Our own restatement of its logic: texts start with ``"Beginning of Conversation\\n"`` (the
    buyer's also with the persona line, built from every buyer_info field); each line is
    ``text + "\\n"``, an action when its role is ``agent``; the item is done when it has the key
    ``"output"``, and then the buyer gets the Output line as a last action (formatting msrp, and
    buy_price when bought, with thousands commas: ``None`` raises) while the seller gets the fancy
    reward on its last action (indexing msrp, car_bought and budget; buy_price when bought).
    Consecutive actions are joined with a space (their trailing newlines removed first).
    """
    texts: list[tuple[str, bool]] = [("Beginning of Conversation\n", False)]
    info = item["buyer_info"]
    if agent == "Buyer":
        texts.append(
            (
                f"Personality: {info['personality']}. Prefers {info['preferred_brands']} "
                f"{info['preferred_type']} with {', '.join(info['preferred_features'])}. "
                f"Budget: ${info['budget']:,}\n",
                False,
            )
        )
    for line in item["lines"]:
        texts.append((line["text"] + "\n", line["role"] == agent))
    done = "output" in item
    if done and agent == "Buyer":
        out = item["output"]
        tail = f" Buy Price=${out['buy_price']:,}" if out["car_bought"] else ""
        decision = "Accept" if out["car_bought"] else "Reject"
        texts.append((f"Output: Decision={decision} MSRP=${out['msrp']:,}{tail}\n", True))
    joined: list[tuple[str, bool]] = []
    for text, is_action in texts:
        if is_action and joined and joined[-1][1]:
            joined[-1] = (joined[-1][0].rstrip("\n") + " " + text.rstrip("\n") + "\n", True)
        else:
            joined.append((text.rstrip("\n") + "\n", True) if is_action else (text, False))
    rewards = [0.0] * len(joined)
    if done and agent != "Buyer":
        out, budget = item["output"], info["budget"]
        msrp, bought = out["msrp"], out["car_bought"]
        price = out["buy_price"] if bought else None
        if msrp == 0:
            r = 0.0
        elif bought:
            r = 0.0 if price is None else price / ((budget + msrp) * 0.5)
        else:
            r = -(budget - msrp) / msrp
        last = max((i for i, (_, a) in enumerate(joined) if a), default=None)
        if last is not None:
            rewards[last] = r
    return joined, rewards, done
