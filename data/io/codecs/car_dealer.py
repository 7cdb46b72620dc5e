"""LMRL-Gym's Car Dealer format (``car-dealer/train.json``, ``eval.json``): a JSON list of

``{"buyer_info": {personality, preferred_brands, preferred_type, preferred_features, budget},
"lines": [{"role": "Seller"|"Buyer", "text": ...}, ...],
"output": {"car_bought": bool, "msrp": int, "buy_price": int|null}}``.

What LMRL's loader (``create_trajectory_from_conversation``) requires and does, which fixes this
codec: a conversation is *done* when the key ``"output"`` is present, and then ``output`` must be
an object (``"output": null`` raises there), so an episode that ends without a decision is written
without the key. Each line becomes one text, ``text + "\\n"``; consecutive lines of the agent's
own role are joined with a space, the other side's lines are kept apart.

Export writes, per step, the seller's line and the buyer's reply, each stripped, the buyer's
as the seller saw it (the Output line cut out: LMRL keeps it in ``output``); empty lines are kept.
Import reads the lines in runs: a run of seller lines then a run of buyer lines make one step. The
seller's lines are joined with a space into the action (as LMRL joins the seller's actions); the
buyer's lines stay apart in the observation (``"a\\nb\\n"``, LMRL's texts one after the other).
A step whose lines are not exactly one seller and one buyer line (a dialogue that opens with the
buyer, two lines in a row from one side, a last seller line without a reply) records them in
``info["lmrl_lines"]`` and is written back from there, so import -> export gives the same file
byte for byte. The ``fancy`` reward of ``output`` goes on the last step; each buyer run (the last
with its Output line appended) goes in ``info["partner_replies"]`` as one line, so the episode
replays with ``partner_replies`` (a run of several buyer lines replays as one line). The persona
goes in the episode's ``meta["buyer_info"]``. An Accept without a price (reward 0, as in LMRL's
env) has no form in LMRL's data (its loader formats ``buy_price`` of a bought car): it is written
as not bought, which LMRL's loader rewards as a refusal.
"""

from __future__ import annotations

import random
from typing import Any

from data.datasets import StoredEpisode
from data.io import validation as check
from data.io.formats import Codec, register_codec
from data.io.validation import fields
from data.store import EpisodeRecord, StepRecord, Who
from envs.car_dealer.data import Decision, Persona, output_text, sample_persona
from envs.car_dealer.task import START, VERSION, decision_reward

TASK = "car-dealer"
ROLES = ("Seller", "Buyer")


def _persona(ep: StoredEpisode) -> Persona:
    for s in reversed(ep.steps):
        info = s.get("info") or {}
        if isinstance(info, dict) and info.get("persona"):
            return Persona.from_json(info["persona"])
    meta = ep.episode.get("meta") or {}
    if isinstance(meta, dict) and meta.get("buyer_info"):
        return Persona.from_json(meta["buyer_info"])
    opts = ep.episode.get("options") or {}
    if isinstance(opts, dict) and opts.get("persona"):
        return Persona.from_json(opts["persona"])
    if ep.episode.get("seed") is None:
        raise ValueError(f"episode {ep.id} has no recorded persona and no seed")
    return sample_persona(random.Random(ep.episode["seed"]))


def _recorded_lines(info: Any) -> list[dict[str, str]] | None:
    """The step's LMRL lines recorded at import (None if absent or not well formed)."""
    lines = info.get("lmrl_lines") if isinstance(info, dict) else None
    if type(lines) is not list:
        return None
    ok = all(
        type(x) is dict and x.get("role") in ROLES and type(x.get("text")) is str for x in lines
    )
    return [{"role": x["role"], "text": x["text"]} for x in lines] if ok else None


def _step_lines(step: dict[str, Any]) -> list[dict[str, str]]:
    recorded = _recorded_lines(step.get("info"))
    if recorded is not None:
        return recorded
    return [
        {"role": "Seller", "text": str(step["action"]).strip()},
        {"role": "Buyer", "text": str(step["observation"]).strip()},
    ]


def export_episode(ep: StoredEpisode) -> dict[str, Any]:
    """One stored car-dealer episode as an LMRL item (no ``output`` key without a decision)."""
    lines = [line for s in ep.steps for line in _step_lines(s)]
    item: dict[str, Any] = {"buyer_info": _persona(ep).to_json(), "lines": lines}
    info = (ep.steps[-1].get("info") or {}) if ep.steps else {}
    if isinstance(info, dict) and info.get("decision"):
        d = info["decision"]
        bought = bool(d["car_bought"])
        item["output"] = {
            "car_bought": bought,
            "msrp": int(d["msrp"]),
            "buy_price": d.get("buy_price") if bought else None,
        }
    return item


def _buyer_info(info: Any) -> Persona:
    names = ("personality", "preferred_brands", "preferred_type", "preferred_features", "budget")
    *words, feats, budget = fields(info, "buyer_info", names)
    for name, value in zip(names, words, strict=False):
        check.text(value, f"buyer_info.{name}")
    if not isinstance(feats, str) and (
        type(feats) is not list or not all(type(f) is str for f in feats)
    ):
        check.fail("buyer_info.preferred_features", "a list of strings", feats)
    check.whole(budget, "buyer_info.budget", 0)
    return Persona.from_json(info)


def _decision(out: Any) -> Decision | None:
    if out is None:
        return None
    bought, msrp = fields(out, "output", ("car_bought", "msrp"))
    bought = check.flag(bought, "output.car_bought")
    msrp = check.whole(msrp, "output.msrp", 0)
    price = out.get("buy_price")
    if price is not None:
        check.whole(price, "output.buy_price", 0, null=True)
    return Decision(bought, msrp, price if bought else None, (0, 0))


def _lines(lines: Any) -> list[tuple[str, str]]:
    if type(lines) is not list:
        check.fail("lines", "a list of {role, text} objects", lines)
    out: list[tuple[str, str]] = []
    for i, line in enumerate(lines):
        role, text = fields(line, f"lines[{i}]", ("role", "text"))
        role = check.choice(role, f"lines[{i}].role", ROLES)
        out.append((role, check.text(text, f"lines[{i}].text").strip()))
    return out


def _runs(lines: list[tuple[str, str]]) -> list[tuple[list[str], list[str]]]:
    """The lines as steps: (the seller's run, the buyer's run), either may be empty."""
    steps: list[tuple[list[str], list[str]]] = []
    for role, text in lines:
        if role == "Seller" and (not steps or steps[-1][1]):
            steps.append(([], []))
        elif not steps:
            steps.append(([], []))
        steps[-1][0 if role == "Seller" else 1].append(text)
    return steps


def import_item(item: Any, task: str) -> EpisodeRecord:
    """One LMRL item as an episode of ``task`` (``car-dealer``)."""
    buyer_info, lines = fields(item, "the item", ("buyer_info", "lines"))
    persona = _buyer_info(buyer_info)
    runs = _runs(_lines(lines))
    decision = _decision(item.get("output"))
    steps: list[StepRecord] = []
    for i, (seller, buyer) in enumerate(runs):
        last = i == len(runs) - 1
        said = " ".join(buyer)
        info: dict[str, Any] = {"partner_replies": [said + "\n"]}
        if len(seller) != 1 or len(buyer) != 1:
            info["lmrl_lines"] = [{"role": "Seller", "text": t} for t in seller] + [
                {"role": "Buyer", "text": t} for t in buyer
            ]
        reward, terminated, truncated = 0.0, False, False
        if last:
            if decision is not None:
                tail = output_text(decision.accept, decision.msrp, decision.buy_price)
                info["partner_replies"] = [f"{said} {tail}\n" if said else tail + "\n"]
                reward = decision_reward(decision, persona.budget, "fancy")
                terminated = True
            else:
                truncated = True
            info.update(
                decision=decision.to_json() if decision else None,
                success=bool(decision and decision.car_bought),
                persona=persona.to_json(),
            )
        observation = "".join(t + "\n" for t in buyer) or "\n"
        steps.append(
            StepRecord(
                " ".join(seller) + "\n",
                observation,
                reward,
                terminated,
                truncated,
                info,
                role="seller",
            )
        )
    if not steps:
        raise ValueError("the conversation has no lines")
    return EpisodeRecord(
        task=task,
        task_version=VERSION,
        seed=None,
        first_observation=START,
        steps=steps,
        agent=Who("import", "lmrl"),
        partner=Who("import", "lmrl-buyer"),
        source="import",
        options={"reward_mode": "fancy"},
        success=bool(decision and decision.car_bought),
        meta={"buyer_info": persona.to_json()},
    )


register_codec(TASK, Codec(export_episode, import_item, container="json"))
