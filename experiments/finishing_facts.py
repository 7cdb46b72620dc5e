"""Give an utterance-level checkpoint trained with ``--hindsight`` before checkpoints kept the
hindsight reader's facts (which lines finish an episode, the win's reward, a turn's cost) those
facts, read from the episodes it was trained on, so that MC and ILQL value their finishing lines
by the reader (:meth:`training.utterance.agent.UtteranceAgent.finishing_values`). The weights are
not touched; ``lmrl.json`` gains ``utterance.finishing`` exactly as a new run writes it.

``python experiments/finishing_facts.py RUN [RUN ...] --db STORE``
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from data.store import Store
from training.model.checkpoint import META
from training.utterance.data import load_corpus
from training.utterance.train import finishing_facts


def add_facts(folder: Path, store: Store) -> dict:
    folder = folder / "checkpoint" if (folder / "checkpoint").is_dir() else folder
    meta = json.loads((folder / META).read_text())
    if not float(meta["config"].get("hindsight") or 0) > 0:
        raise SystemExit(f"{folder} was trained without --hindsight: its reader was never trained")
    ids = json.loads((folder / "dataset.json").read_text())["episode_ids"]
    facts = finishing_facts(load_corpus(store, ids), float(meta["config"]["gamma"]))
    meta["utterance"]["finishing"] = facts
    (folder / META).write_text(json.dumps(meta, indent=1, default=str))
    return facts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--db", required=True, help="the store the checkpoints were trained on")
    args = ap.parse_args(argv)
    with Store(args.db) as store:
        for run in args.runs:
            f = add_facts(run, store)
            print(f"{run}: {len(f['lines'])} finishing lines, reward {f['reward']:.3f}, "
                  f"cost {f['cost']:.3f}, gamma {f['gamma']}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
