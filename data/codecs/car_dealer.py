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

from data.datasets import StoredEpisode
from data.formats import Codec, register_codec
from data.store import EpisodeRecord, StepRecord, Who
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


def _merged(lines: Any) -> list[tuple[str, str]]:
    if not isinstance(lines, list):
        raise TypeError("lines must be a list")
    out: list[tuple[str, str]] = []
    for line in lines:
        role, text = line["role"], str(line["text"]).strip()
        if role not in ("Seller", "Buyer"):
            raise ValueError(f"unknown role {role!r} (expected Seller or Buyer)")
        if out and out[-1][0] == role:
            out[-1] = (role, f"{out[-1][1]} {text}".strip())
        else:
            out.append((role, text))
    if out and out[0][0] == "Buyer":
        out.insert(0, ("Seller", ""))
    return out


def import_item(item: Any, task: str) -> EpisodeRecord:
    """One LMRL item as an episode of ``task`` (``car-dealer``)."""
    if not isinstance(item, dict):
        raise TypeError("expected an object with buyer_info, lines and output")
    persona = Persona.from_json(item["buyer_info"])
    turns = _merged(item["lines"])
    out = item.get("output")
    decision = None
    if out is not None:
        bought = bool(out["car_bought"])
        price = out.get("buy_price")
        decision = Decision(bought, int(out["msrp"]), int(price) if bought and price is not None else None, (0, 0))
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
