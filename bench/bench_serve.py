"""``lmrl serve`` capacity: memory and idle CPU per served session, and the store's write rate
with many people playing at once.

For N = 1, 2, 4 (``--sessions``) browsers (Debian's chromium through playwright, as in the tests)
open the served app on a fresh store, reach the home screen and start a maze each; then the app
processes' memory is read from /proc (RSS, and PSS, which shares the common libraries out fairly),
and their CPU use over a few idle seconds. Then ``--writers`` processes play maze episodes through
the session layer (every step committed as it is played, the served apps' path) into one store:
rows/s over all of them. With ``--pairs`` (default 10) as many pairs of browsers play Twenty
Questions together (``--vs paired``): the turn latency between paired people, from the guesser's
Enter to the question on the oracle's screen. The people's terminals are ``--clients``:
``websocket`` (default) speaks the served page's protocol from this process (keys in, the
terminal's frames out, as the browser's page does), so the figure is the server's and the apps'
share of the latency, as with people on their own machines; ``chromium`` runs a real browser per
person on this machine too (2 × pairs pages beside the server on two cores: their rendering is in
the figure).

Prints one figure per line as ``name value unit``. Run: ``python bench/bench_serve.py``.
Needs the serve and dev extras and chromium (apt-get install chromium).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the browser helpers the serve tests use

from support.serve_browser import (  # noqa: E402
    BrowserTerminal,
    Screen,
    browser_missing,
    launch_chromium,
    reach_home,
    served,
    start_episode,
    wait_for_episode,
)

import envs  # noqa: E402

ARROW = {
    "move up\n": "ArrowUp",
    "move down\n": "ArrowDown",
    "move left\n": "ArrowLeft",
    "move right\n": "ArrowRight",
}


def scripted_actions(seed: int) -> list[str]:
    ep = envs.run_episode(envs.make("maze-fo"), envs.make_policy("maze-fo", "optimal"), seed)
    return [t.action for t in ep.transitions]


PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
TICKS = os.sysconf("SC_CLK_TCK")


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat[stat.rfind(")") + 2 :].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def app_processes(server_pid: int) -> list[int]:
    """The served app processes (python -m lmrl_tui --db ..., not the shell around them)."""
    out = []
    for pid in descendants(server_pid):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if (
            b"lmrl_tui" in argv
            and b"serve" not in argv
            and Path(argv[0].decode()).name.startswith("python")
        ):
            out.append(pid)
    return out


def memory_mib(pid: int) -> tuple[float, float]:
    """(RSS, PSS) of ``pid`` in MiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        name, value, *_ = line.split()
        fields[name.rstrip(":")] = int(value)
    return fields["Rss"] / 1024, fields["Pss"] / 1024


def cpu_seconds(pid: int) -> float:
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rfind(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def measure_sessions(n: int, folder: Path, idle_s: float) -> None:
    from playwright.sync_api import sync_playwright

    db = folder / f"sessions-{n}.db"
    with served(db) as server, sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            terms = []
            for _ in range(n):
                context = browser.new_context(viewport={"width": 1280, "height": 800})
                term = BrowserTerminal(context.new_page())
                reach_home(term, server.url)
                terms.append(term)
            for i, term in enumerate(terms):
                start_episode(term, db, "maze-fo", "Maze (fully observed)", 100 + i)
            time.sleep(2)
            apps = app_processes(server.proc.pid)
            mem = [memory_mib(pid) for pid in apps]
            before = [cpu_seconds(pid) for pid in apps]
            time.sleep(idle_s)
            cpu = [
                (cpu_seconds(pid) - b) / idle_s * 100 for pid, b in zip(apps, before, strict=True)
            ]
            server_rss, _ = memory_mib(server.proc.pid)
            # Then everyone plays their maze to the goal, a key at a time, round robin.
            plans = [[ARROW[a] for a in scripted_actions(100 + i)] for i in range(n)]
            busy_before = sum(cpu_seconds(pid) for pid in [*apps, server.proc.pid])
            for k in range(max(len(keys) for keys in plans)):
                for term, keys in zip(terms, plans, strict=True):
                    if k < len(keys):
                        term.press(keys[k], pause_ms=100)
            for i, keys in enumerate(plans):
                wait_for_episode(db, "maze-fo", len(keys), seed=100 + i)
            steps = sum(len(keys) for keys in plans)
            busy = sum(cpu_seconds(pid) for pid in [*apps, server.proc.pid]) - busy_before
        finally:
            browser.close()
    assert len(apps) == n, f"expected {n} app processes, found {len(apps)}"
    print(f"serve_sessions_{n}_rss_per_session {sum(r for r, _ in mem) / n:.0f} MiB")
    print(f"serve_sessions_{n}_pss_per_session {sum(p for _, p in mem) / n:.0f} MiB")
    print(f"serve_sessions_{n}_idle_cpu_per_session {sum(cpu) / n:.1f} %")
    print(f"serve_sessions_{n}_server_rss {server_rss:.0f} MiB")
    print(f"serve_sessions_{n}_cpu_per_step {busy / steps * 1000:.0f} ms")


WRITER = """
import sys, time
import envs
from data.session import PlaySession
from data.store import Store
db, k, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
plans = [envs.run_episode(envs.make("maze-fo"), envs.make_policy("maze-fo", "optimal"), 1000 * k + i)
         for i in range(n)]
store = Store(db)
steps = 0
t0 = time.monotonic()
for i, plan in enumerate(plans):
    session = PlaySession(store, "maze-fo", player=f"annotator-{k}", seed=1000 * k + i)
    session.start()
    for t in plan.transitions:
        session.human_input(t.action.strip())
        steps += 1
store.close()
print(steps, time.monotonic() - t0)
"""


def rows_per_s(writers: int, episodes: int, folder: Path) -> None:
    from data.store import Store

    db = folder / "writers.db"
    Store(db).close()
    t0 = time.monotonic()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(db), str(k), str(episodes)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for k in range(writers)
    ]
    outs = [p.communicate(timeout=600) for p in procs]
    wall = time.monotonic() - t0
    if any(p.returncode for p in procs):
        raise SystemExit(f"a writer failed: {[err for _, err in outs if err]}")
    steps = sum(int(out.split()[0]) for out, _ in outs)
    busiest = max(float(out.split()[1]) for out, _ in outs)
    store = Store(db)
    kept = store.count()
    store.close()
    print(f"serve_writers_{writers}_step_rows_per_s {steps / busiest:.0f} rows/s")
    print(f"serve_writers_{writers}_lost_episodes {writers * episodes - kept} episodes")
    print(f"serve_writers_{writers}_wall {wall:.1f} s")


def _await_shown(terms: list[BrowserTerminal], text: str, timeout: float) -> list[float]:
    """When each screen first showed ``text`` (time.monotonic()), polling every few ms."""
    seen: list[float | None] = [None] * len(terms)
    deadline = time.monotonic() + timeout
    while None in seen:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{seen.count(None)} screens never showed {text!r}")
        for i, term in enumerate(terms):
            if seen[i] is None and term.shows(text):
                seen[i] = time.monotonic()
        terms[0].page.wait_for_timeout(5)  # lets playwright deliver the websocket frames
    return [t for t in seen if t is not None]


def measure_pairs(pairs: int, folder: Path, turns: int) -> None:
    """``pairs`` pairs of browsers on ``lmrl serve --task twenty-questions --vs paired``: each
    guesser types a question and presses Enter; the time until the question is on the oracle's
    screen (the frames its browser received, as the tests read them) is one turn's latency."""
    from playwright.sync_api import sync_playwright

    db = folder / f"pairs-{pairs}.db"
    flags = ["--task", "twenty-questions", "--vs", "paired", "--option", "secret=guitar",
             "--max-sessions", str(2 * pairs + 2)]  # fmt: skip
    latencies: list[float] = []
    with served(db, extra=flags, timeout=60) as server, sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            guessers, oracles = [], []
            for i in range(pairs):
                for who, names in ((guessers, "G"), (oracles, "O")):
                    term = BrowserTerminal(
                        browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
                    )
                    term.open(server.url, timeout=120)
                    term.wait_for("Who is playing", timeout=120)
                    term.type(f"{names}{chr(97 + i)}x")
                    term.press("Enter")
                    term.wait_for("Waiting for", "with ", timeout=120)
                    who.append(term)
            for g, o in zip(guessers, oracles, strict=True):
                g.wait_for("with ", timeout=120)
                o.wait_for("with ", timeout=120)
            for turn in range(turns):
                question = f"Is it thing number {turn}?"
                pressed = []
                for g in guessers:
                    g.type(question)
                for g in guessers:  # every key typed is on its screen: Enter is the next event
                    g.wait_for(question, timeout=60)
                for g in guessers:
                    g.page.keyboard.press("Enter")
                    pressed.append(time.monotonic())
                shown = _await_shown(oracles, "waiting for your answer", 60)
                latencies += [s - t for s, t in zip(shown, pressed, strict=True)]
                for o in oracles:
                    o.type("No.")
                    o.press("Enter")
                for g in guessers:  # the answer is back at the guesser: the next turn
                    g.wait_until(lambda text, n=turn: f"{n + 1} / 20" in text, "the step", 60)
        finally:
            browser.close()
    report_latencies(f"serve_pairs_{pairs}", latencies)


def measure_pairs_ws(
    pairs: int, folder: Path, turns: int, think: float = 0.0, key_s: float = 0.0
) -> None:
    """As :func:`measure_pairs`, with websocket clients instead of browsers: each keeps the
    terminal its frames draw (the tests' :class:`Screen`), and the time a frame first makes the
    oracle's screen show the question, less the time the guesser's Enter was sent, is a turn's
    latency (both read by this process's clock when the bytes are sent and received). Each pair
    plays on its own: ``think`` (seconds) is the most a person waits before typing or answering
    (drawn uniformly), ``key_s`` the gap between keys. With both 0 all pairs type at once and
    press Enter together: a burst, the worst case; people thinking and typing spread their turns
    out."""
    import asyncio

    import aiohttp

    db = folder / f"pairs-ws-{pairs}-{think:g}.db"
    flags = ["--task", "twenty-questions", "--vs", "paired", "--option", "secret=guitar",
             "--max-sessions", str(2 * pairs + 2)]  # fmt: skip

    class Term:
        def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
            self.ws, self.screen = ws, Screen()
            self.changed = asyncio.Event()
            self.watch: tuple[str, float | None] | None = None  # (text, when it was first seen)
            self.name = ""

        def partner(self) -> str:
            found = re.search(r"oracle: ([GO][a-z]x)", self.screen.text())
            return found.group(1) if found else ""

        async def pump(self) -> None:
            async for msg in self.ws:
                if msg.type == aiohttp.WSMsgType.BINARY:
                    self.screen.feed(msg.data)
                    if self.watch and self.watch[1] is None and self.watch[0] in self.screen.text():
                        self.watch = (self.watch[0], time.monotonic())
                    self.changed.set()

        async def send(self, keys: str) -> None:
            await self.ws.send_json(["stdin", keys])

        async def wait_for(self, *texts: str, timeout: float = 120) -> str:
            async def shown() -> str:
                while not any(t in self.screen.text() for t in texts):
                    self.changed.clear()
                    await self.changed.wait()
                return next(t for t in texts if t in self.screen.text())

            try:
                return await asyncio.wait_for(shown(), timeout)
            except TimeoutError:
                raise TimeoutError(f"never shown {texts!r}:\n{self.screen.text()}") from None

    name = f"serve_pairs_ws_{pairs}_think{think:g}s"

    async def run(url: str, server_pid: int) -> list[float]:
        latencies: list[float] = []
        async with aiohttp.ClientSession() as http:
            terms: list[Term] = []
            pumps = []
            for _ in range(2 * pairs):
                ws = await http.ws_connect(f"{url}ws?width=160&height=45", max_msg_size=0)
                term = Term(ws)
                pumps.append(asyncio.ensure_future(term.pump()))
                terms.append(term)
            for i, term in enumerate(terms):  # arriving in pairs: the lobby pairs them so
                await term.wait_for("Who is playing")
                term.name = f"{'GO'[i % 2]}{chr(97 + i // 2)}x"
                await term.send(term.name + "\r")
                await term.wait_for("Waiting for", "with ")
            await asyncio.gather(*(t.wait_for("with ") for t in terms))
            sides = await asyncio.gather(  # which side each was given, as its screen says
                *(t.wait_for("Your turn (guesser)", "Guesser is thinking") for t in terms)
            )
            guessers = [t for t, side in zip(terms, sides, strict=True) if "turn" in side]
            by_name = {t.name: t for t in terms}
            oracles = [by_name[g.partner()] for g in guessers]
            rng = random.Random(0)

            async def play(g: Term, o: Term) -> None:
                """One pair's turns, on its own: the guesser thinks, types, presses Enter; the
                oracle reads the question, thinks and answers."""
                for turn in range(turns):
                    question = f"Is it thing number {turn}?"
                    await g.wait_for("Your turn (guesser)")
                    await asyncio.sleep(rng.uniform(0, think))
                    for key in question:  # one key per message, as the page sends them
                        await g.send(key)
                        await asyncio.sleep(key_s)
                    await g.wait_for(question, timeout=60)  # echoed: Enter is the next event
                    o.watch = ("waiting for your answer", None)
                    await g.send("\r")
                    pressed = time.monotonic()
                    await o.wait_for("waiting for your answer", timeout=60)
                    latencies.append(o.watch[1] - pressed)  # type: ignore[index,operator]
                    o.watch = None
                    await asyncio.sleep(rng.uniform(0, think))
                    await o.send("No.\r")
                    await g.wait_for(f"{turn + 1} / 20", timeout=60)

            procs = [server_pid, *descendants(server_pid)]  # the server and the 2 × pairs apps
            cpu0, t0 = sum(map(cpu_seconds, procs)), time.monotonic()
            await asyncio.sleep(5)  # everyone paired, nobody typing: what waiting costs
            idle = (sum(map(cpu_seconds, procs)) - cpu0) / (time.monotonic() - t0)
            print(f"{name}_served_idle_cpu {idle:.2f} cores (paired, waiting)")
            cpu0, own0, t0 = sum(map(cpu_seconds, procs)), time.process_time(), time.monotonic()
            await asyncio.gather(*(play(g, o) for g, o in zip(guessers, oracles, strict=True)))
            wall = time.monotonic() - t0
            cpu = sum(map(cpu_seconds, procs)) - cpu0
            print(f"{name}_served_cpu {cpu / wall:.2f} cores over {wall:.0f} s of play")
            print(
                f"{name}_client_cpu {(time.process_time() - own0) / wall:.2f} cores (these clients)"
            )
            for term in terms:
                await term.ws.close()
            for pump in pumps:
                pump.cancel()
        return latencies

    with served(db, extra=flags, timeout=60) as server:
        latencies = asyncio.run(run(server.base, server.proc.pid))
    report_latencies(name, latencies)


def report_latencies(name: str, latencies: list[float]) -> None:
    ms = sorted(x * 1000 for x in latencies)
    print(f"{name}_turns {len(ms)} turns")
    print(f"{name}_turn_latency_median {ms[len(ms) // 2]:.0f} ms")
    print(f"{name}_turn_latency_p90 {ms[int(len(ms) * 0.9)]:.0f} ms")
    print(f"{name}_turn_latency_max {ms[-1]:.0f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--idle-seconds", type=float, default=5.0)
    ap.add_argument("--writers", type=int, default=8)
    ap.add_argument("--episodes", type=int, default=40, help="maze episodes per writer")
    ap.add_argument("--pairs", type=int, nargs="*", default=[10], help="paired people (0: none)")
    ap.add_argument("--turns", type=int, default=3, help="questions per pair")
    ap.add_argument(
        "--clients",
        choices=("websocket", "chromium"),
        default="websocket",
        help="the paired people's terminals (module docstring)",
    )
    ap.add_argument("--only-pairs", action="store_true", help="just the paired latency")
    ap.add_argument(
        "--think",
        type=float,
        nargs="+",
        default=[0.0, 3.0],
        help="websocket clients: the most seconds a person thinks before a turn (0: a burst)",
    )
    ap.add_argument("--key-ms", type=float, default=150.0, help="typing: ms between keys")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        os.environ.setdefault("LMRL_CONFIG_DIR", str(folder / "config"))
        missing = browser_missing()
        if missing:
            print(f"# sessions skipped: {missing}")
        elif not args.only_pairs:
            for n in args.sessions:
                measure_sessions(n, folder, args.idle_seconds)
        for n in args.pairs:
            if n > 0 and args.clients == "websocket":
                for think in args.think:  # a burst: no thinking, no typing speed
                    key_s = args.key_ms / 1000 if think > 0 else 0.0
                    measure_pairs_ws(n, folder, args.turns, think, key_s)
            elif n > 0 and not missing:
                measure_pairs(n, folder, args.turns)
        if not args.only_pairs:
            rows_per_s(args.writers, args.episodes, folder)


if __name__ == "__main__":
    main()
