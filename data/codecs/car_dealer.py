"""LMRL-Gym's Car Dealer format (``car-dealer/train.json``, ``eval.json``): a JSON list of

``{"buyer_info": {personality, preferred_brands, preferred_type, preferred_features, budget},
"lines": [{"role": "Seller"|"Buyer", "text": ...}, ...],
"output": {"car_bought": bool, "msrp": int, "buy_price": int|null}}``.

Export writes each line stripped, the buyer's lines as the seller saw them (the Output line cut
out, which is where LMRL keeps it: in ``output``); empty lines are left out. Import joins
consecutive lines of one role with a space (as LMRL's loaders do), pairs each seller line with the
buyer's answer (a dialogue that opens with the buyer gets an empty seller line first), puts the
``fancy`` reward of ``output`` on the last step, and records each buyer line (the last one with
its Output line appended) in ``info["partner_replies"]`` so the episode replays with
``partner_replies``. The persona goes in the episode's ``meta["buyer_info"]``.
"""

from __future__ import annotations

import random
from typing import Any

from data import validation as check
from data.datasets import StoredEpisode
from data.formats import Codec, register_codec
from data.store import EpisodeRecord, StepRecord, Who
from data.validation import fields
from envs.car_dealer.data import Decision, Persona, output_text, sample_persona
from envs.car_dealer.task import START, VERSION, decision_reward

TASK = "car-dealer"


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


def export_episode(ep: StoredEpisode) -> dict[str, Any]:
    """One stored car-dealer episode as an LMRL item."""
    lines = []
    for s in ep.steps:
        for role, text in (("Seller", s["action"]), ("Buyer", s["observation"])):
            text = text.strip()
            if text:
                lines.append({"role": role, "text": text})
    output = None
    if ep.steps:
        info = ep.steps[-1].get("info") or {}
        if isinstance(info, dict) and info.get("decision"):
            d = info["decision"]
            output = {"car_bought": bool(d["car_bought"]), "msrp": int(d["msrp"]),
                      "buy_price": d.get("buy_price")}  # fmt: skip
    return {"buyer_info": _persona(ep).to_json(), "lines": lines, "output": output}


def _buyer_info(info: Any) -> Persona:
    names = ("personality", "preferred_brands", "preferred_type", "preferred_features", "budget")
    *words, feats, budget = fields(info, "buyer_info", names)
    for name, value in zip(names, words, strict=False):
        check.text(value, f"buyer_info.{name}")
    if not isinstance(feats, str) and (type(feats) is not list or not all(type(f) is str for f in feats)):
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


def _merged(lines: Any) -> list[tuple[str, str]]:
    if type(lines) is not list:
        check.fail("lines", "a list of {role, text} objects", lines)
    out: list[tuple[str, str]] = []
    for i, line in enumerate(lines):
        role, text = fields(line, f"lines[{i}]", ("role", "text"))
        role = check.choice(role, f"lines[{i}].role", ("Seller", "Buyer"))
        text = check.text(text, f"lines[{i}].text").strip()
        if out and out[-1][0] == role:
            out[-1] = (role, f"{out[-1][1]} {text}".strip())
        else:
            out.append((role, text))
    if out and out[0][0] == "Buyer":
        out.insert(0, ("Seller", ""))
    return out


def import_item(item: Any, task: str) -> EpisodeRecord:
    """One LMRL item as an episode of ``task`` (``car-dealer``)."""
    info, lines = fields(item, "the item", ("buyer_info", "lines"))
    persona = _buyer_info(info)
    turns = _merged(lines)
    decision = _decision(item.get("output"))
    steps: list[StepRecord] = []
    for i in range(0, len(turns), 2):
        seller = turns[i][1]
        buyer = turns[i + 1][1] if i + 1 < len(turns) else ""
        last = i + 2 >= len(turns)
        reply = buyer + "\n"
        info: dict[str, Any] = {"partner_replies": [reply]}
        reward, terminated, truncated = 0.0, False, False
        if last:
            if decision is not None:
                tail = output_text(decision.accept, decision.msrp, decision.buy_price)
                info["partner_replies"] = [f"{buyer} {tail}\n" if buyer else tail + "\n"]
                reward = decision_reward(decision, persona.budget, "fancy")
                terminated = True
            else:
                truncated = True
            info.update(decision=decision.to_json() if decision else None,
                        success=bool(decision and decision.car_bought),
                        persona=persona.to_json())  # fmt: skip
        steps.append(StepRecord(seller + "\n", reply, reward, terminated, truncated, info, role="seller"))
    if not steps:
        raise ValueError("the conversation has no lines")
    return EpisodeRecord(
        task=task, task_version=VERSION, seed=None,
        first_observation=START, steps=steps, agent=Who("import", "lmrl"),
        partner=Who("import", "lmrl-buyer"), source="import",
        options={"reward_mode": "fancy"}, success=bool(decision and decision.car_bought),
        meta={"buyer_info": persona.to_json()},
    )  # fmt: skip


register_codec(TASK, Codec(export_episode, import_item, container="json"))
