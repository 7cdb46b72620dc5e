"""Campaign files: checked field by field (a bad one is one line naming the field), kept in the
store, handed out assignment by assignment within the quotas, counted for ``lmrl stats``, kept
by ``lmrl merge``, and an older store gains the campaign columns when it is opened."""

from __future__ import annotations

import pytest

from data._sqlite_utils import Database
from data.campaigns import (
    CampaignError,
    campaign_progress,
    find_campaign,
    load_campaign,
    next_slot,
    person_line,
    resumed_slot,
    save_campaign,
)
from data.datasets import DatasetQuery, describe_query, select_episode_ids
from data.io.merge import merge_stores
from data.migrations import migrations
from data.session import PlaySession
from data.store import Store

GOOD = """
name = "week-1"
[[assignment]]
id = "ask"
task = "twenty-questions"
side = "guesser"
options = { secret = "guitar" }
seeds = [1, 2]
episodes = 3
per_person = 2

[[assignment]]
task = "twenty-questions"
side = "oracle"
partner = "strong"
episodes = 1
"""


def _file(tmp_path, text: str, name: str = "c.toml"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_a_campaign_file_is_read_with_its_defaults(tmp_path):
    c = load_campaign(_file(tmp_path, GOOD))
    assert c.name == "week-1" and [a.id for a in c.assignments] == ["ask", "a2"]
    ask, second = c.assignments
    assert (ask.side, ask.options, ask.seeds, ask.episodes, ask.per_person) == (
        "guesser",
        {"secret": "guitar"},
        [1, 2],
        3,
        2,
    )
    assert (second.side, second.partner, second.seeds, second.per_person) == (
        "oracle",
        "strong",
        [],
        1,
    )
    assert (
        load_campaign(_file(tmp_path, GOOD.replace('name = "week-1"', ""), "spring.toml")).name
        == "spring"
    )


BAD = [
    ("episodes = 3", 'episodes = "x"', "assignment[1].episodes: a whole number of at least 1"),
    ("per_person = 2", "per_person = 0", "assignment[1].per_person: a whole number of at least 1"),
    (
        'side = "guesser"',
        'side = "judge"',
        "assignment[1].side: twenty-questions is played as guesser or oracle",
    ),
    (
        'task = "twenty-questions"\nside = "guesser"',
        'task = "poker"',
        "assignment[1].task: no task 'poker'",
    ),
    ("seeds = [1, 2]", "seeds = [1, -2]", "assignment[1].seeds: a whole number of at least 0"),
    ("seeds = [1, 2]", 'seeds = "1-9"', "assignment[1].seeds: a list of whole numbers"),
    ("seeds = [1, 2]", "sedes = [1, 2]", "assignment[1].sedes: not a field of an assignment"),
    ('options = { secret = "guitar" }', "options = { secrets = 3 }", "assignment[1].options:"),
    ("episodes = 1\n", "", "assignment[2].episodes: missing"),
    ('id = "ask"', 'id = "a2"', "assignment id 'a2' is given twice"),
    (
        "per_person = 2",
        "per_person = 2\npair_wait = 5",
        "assignment[1].pair_wait: only with pairing",
    ),
    (
        'partner = "strong"',
        'partner = "strong"\npairing = true',
        "assignment[2].partner: with pairing",
    ),
    ('side = "guesser"', 'side = "any"', "played as guesser or oracle (or any, with pairing)"),
    (
        "per_person = 2",
        "per_person = 2\npairing = true\npair_wait = -1",
        "assignment[1].pair_wait: seconds",
    ),
    ('name = "week-1"', 'name = "week-1"\n[oops', "c.toml: not valid TOML"),
]


@pytest.mark.parametrize(("old", "new", "message"), BAD, ids=[b[2][:40] for b in BAD])
def test_a_bad_campaign_file_is_one_line_naming_the_field(tmp_path, old, new, message):
    assert old in GOOD
    with pytest.raises(CampaignError) as e:
        load_campaign(_file(tmp_path, GOOD.replace(old, new, 1)))
    assert message in str(e.value) and "\n" not in str(e.value)


def _play(store, slot, player, status="finished"):
    a = slot.assignment
    s = PlaySession(store, a.task, player=player, seed=slot.seed, options=dict(a.options),
                    campaign=(slot.campaign, a.id))  # fmt: skip
    s.start()
    if status == "abandoned":
        s.abandon()
    elif status == "finished":
        store.finish_episode(s.episode_id)
    return s.episode_id


def test_people_are_handed_assignments_within_the_quotas(store, tmp_path):
    c = load_campaign(_file(tmp_path, GOOD))
    save_campaign(store, c)
    assert find_campaign(store, "week-1") == c
    got = []
    for player in ("ann", "ann", "bo", "ann", "bo", "bo", "cy"):
        slot = next_slot(store, c, player)
        if slot is None:
            got.append((player, None))
            continue
        got.append((player, slot.assignment.id, slot.seed, slot.mine, slot.taken))
        _play(store, slot, player)
    assert got == [
        ("ann", "ask", 1, 0, 0),
        ("ann", "ask", 2, 1, 1),  # ann's quota of ask is 2
        ("bo", "ask", 1, 0, 2),  # the 3rd and last episode of ask; seeds in turn
        ("ann", "a2", None, 0, 0),
        ("bo", None),  # ask is full, a2 too
        ("bo", None),
        ("cy", None),
    ]
    progress = campaign_progress(store, c)
    assert progress["finished"] == 4 and progress["wanted"] == 4
    ask = progress["assignments"][0]
    assert (ask["finished"], ask["left"], ask["people"]["ann"]["finished"]) == (3, 0, 2)


def test_an_abandoned_episode_gives_its_place_back(store, tmp_path):
    c = load_campaign(_file(tmp_path, GOOD))
    slot = next_slot(store, c, "ann")
    _play(store, slot, "ann", status="abandoned")
    again = next_slot(store, c, "ann")
    assert (again.assignment.id, again.mine, again.taken, again.seed) == ("ask", 0, 0, 1)
    _play(store, again, "ann", status="in_progress")  # being played: it holds its place
    assert next_slot(store, c, "ann").taken == 1
    assert campaign_progress(store, c)["assignments"][0]["abandoned"] == 1


def test_a_resumed_episode_is_told_its_place_as_when_it_was_handed_out(store, tmp_path):
    """A person who resumes a campaign's episode is told where it stands, as when it was handed
    to them (``your episode 2 of 2 · 3 of 3 in all``), not only its campaign's name."""
    c = load_campaign(_file(tmp_path, GOOD))
    handed = []
    for player in ("ann", "bo", "ann"):
        slot = next_slot(store, c, player)
        handed.append((player, _play(store, slot, player, status="in_progress"), slot))
    for player, eid, slot in handed:
        again = resumed_slot(store, c, eid, player)
        assert (again.mine, again.taken, again.seed) == (slot.mine, slot.taken, slot.seed)
        assert person_line(again) == person_line(slot)
    assert person_line(resumed_slot(store, c, handed[2][1], "ann")).endswith(
        "your episode 2 of 2 · 3 of 3 in all"
    )
    assert resumed_slot(store, c, 999, "ann") is None


def test_datasets_filter_by_campaign_and_merge_keeps_them(store, tmp_path):
    c = load_campaign(_file(tmp_path, GOOD))
    save_campaign(store, c)
    first = _play(store, next_slot(store, c, "ann"), "ann")
    other = PlaySession(store, "maze-fo", player="ann", seed=1)
    other.start()
    store.finish_episode(other.episode_id)
    query = DatasetQuery(campaigns=["week-1"])
    assert select_episode_ids(store, query) == [first]
    assert select_episode_ids(store, DatasetQuery(assignments=["a2"])) == []
    assert "campaigns=week-1" in describe_query(query)
    merge_stores([store.path], tmp_path / "all.db")
    merged = Store(tmp_path / "all.db")
    rows = {r["uid"]: r for r in (merged.episode(i) for i in (1, 2))}
    assert rows[store.episode(first)["uid"]]["campaign"] == "week-1"
    assert rows[store.episode(first)["uid"]]["assignment"] == "ask"
    assert find_campaign(merged, "week-1") == c  # the campaign itself comes along
    merged.close()


def test_an_older_store_gains_the_campaign_columns(tmp_path):
    path = tmp_path / "old.db"
    db = Database(str(path))
    migrations.apply(db, stop_before="m003_people_and_campaigns")
    db.execute(
        "INSERT INTO episodes(task, task_version, seed, agent_kind, agent_name, source, status, "
        "first_observation, started_at) VALUES ('maze-fo', 1, 7, 'human', 'human', 'human', "
        "'in_progress', 'start', '2024-01-01T00:00:00.000+00:00')"
    )
    db.conn.commit()
    db.conn.close()
    store = Store(path)
    ep = store.episode(1)
    assert ep["campaign"] is None and ep["assignment"] is None and ep["status"] == "in_progress"
    assert {"episode_holds", "campaigns"} <= set(store.db.table_names())
    store.close()


DUO = """
[[assignment]]
id = "duo"
task = "twenty-questions"
pairing = true
pair_wait = 0.5
options = { secret = "guitar" }
seeds = [7]
episodes = 2
per_person = 1
"""


def test_both_people_of_a_paired_episode_count_against_their_quota(store, tmp_path):
    from data.holds import new_holder
    from data.paired_session import open_paired
    from data.pairing import ask_to_pair, pairing

    c = load_campaign(_file(tmp_path, DUO, "duo.toml"))
    duo = c.assignments[0]
    assert (duo.pairing, duo.side, duo.pair_wait) == (True, "any", 0.5)
    slot = next_slot(store, c, "ann")
    a = ask_to_pair(store, duo.task, duo.side, "ann", new_holder(), options=duo.options,
                    seed=slot.seed, campaign=("duo", "duo"))  # fmt: skip
    b = ask_to_pair(store, duo.task, duo.side, "bo", new_holder(), options=duo.options,
                    campaign=("duo", "duo"))  # fmt: skip
    assert b.status == "paired"
    host = open_paired(store, pairing(store, a.id, a.my_holder), "ann")
    mirror = open_paired(store, pairing(store, b.id, b.my_holder), "bo")
    assert host.campaign == mirror.campaign == ("duo", "duo")
    assert next_slot(store, c, "ann") is None and next_slot(store, c, "bo") is None  # quota 1
    assert next_slot(store, c, "cy").taken == 1  # one episode of two, played by two people
    people = campaign_progress(store, c)["assignments"][0]["people"]
    assert {name: p["in_progress"] for name, p in people.items()} == {"ann": 1, "bo": 1}
    host.abandon()


def test_a_paired_episode_takes_its_places_once_started_and_gives_them_back_abandoned(
    store, tmp_path
):
    """As the spec says (finished and in-progress episodes take a place, abandoned ones give it
    back): a person waiting in the lobby for the second has no episode yet and takes no place;
    the episode, once the two are paired, takes one of the assignment's and one of each person's
    quota; abandoned (one of them left), it gives all of them back."""
    from data.holds import new_holder
    from data.paired_session import open_paired
    from data.pairing import ask_to_pair, cancel, pairing

    c = load_campaign(_file(tmp_path, DUO, "duo.toml"))
    duo = c.assignments[0]

    def ask(player: str):
        slot = next_slot(store, c, player)
        return ask_to_pair(store, duo.task, duo.side, player, new_holder(), options=duo.options,
                           seed=slot.seed, campaign=("duo", "duo"))  # fmt: skip

    def places() -> list[tuple[str, int, int] | None]:
        got = [next_slot(store, c, p) for p in ("ann", "bo", "cy")]
        return [(s.assignment.id, s.mine, s.taken) if s else None for s in got]

    gone = ask("dee")
    cancel(store, gone.id, gone.my_holder)  # dee stopped waiting: nothing of hers counts
    a = ask("ann")
    assert a.status == "waiting"
    assert store.execute("SELECT COUNT(*) FROM episodes").fetchone() == (0,)
    assert places() == [("duo", 0, 0)] * 3  # waiting in the lobby takes no place
    assert campaign_progress(store, c)["assignments"][0]["people"] == {}
    b = ask("bo")
    host = open_paired(store, pairing(store, a.id, a.my_holder), "ann")
    mirror = open_paired(store, pairing(store, b.id, b.my_holder), "bo")
    assert places() == [None, None, ("duo", 0, 1)]  # in progress: one place, both quotas (1)
    mirror.abandon()  # bo leaves: abandoned for both
    assert host.partner_gone() == "bo"
    assert store.episode(host.episode_id)["status"] == "abandoned"
    assert places() == [("duo", 0, 0)] * 3  # every place back
    row = campaign_progress(store, c)["assignments"][0]
    assert (row["abandoned"], row["in_progress"], row["finished"]) == (1, 0, 0)
    assert {n: (p["in_progress"], p["abandoned"]) for n, p in row["people"].items()} == {
        "ann": (0, 1), "bo": (0, 1)}  # fmt: skip
