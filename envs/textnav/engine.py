"""The LMRL-Gym Text-Nav house as static tables, plus our own (seeded) room texts.

Rooms and exits (LMRL's ``make_game.py``)::

                             garden
                               |
    backyard - kitchen - dining room - living room - bedroom
                                           |            |
                                        office   -   bathroom

Furniture: a table in the bedroom (a bowl on it), the living room (the stale food and the fresh
food) and the dining room (a coffee cup and a plate); a closed chest in the office (utensils);
a closed fridge in the kitchen (a fruit). Food (stale food, fresh food, fruit) can be eaten.

An item's location is a *holder*: the floor of a room (0-7), a table (8-10), the chest (11), the
fridge (12), the inventory (13) or nowhere (14, eaten).
"""

from __future__ import annotations

ROOMS = (
    "bedroom",
    "office",
    "bathroom",
    "living room",
    "kitchen",
    "dining room",
    "garden",
    "backyard",
)
BEDROOM, OFFICE, BATHROOM, LIVING, KITCHEN, DINING, GARDEN, BACKYARD = range(8)
ROOM_TITLES = tuple(r.title() for r in ROOMS)
ROOM_INDEX = {r: i for i, r in enumerate(ROOMS)}
MAP_POSITIONS = {  # (column, row) for drawing the house
    "backyard": (0, 1),
    "kitchen": (1, 1),
    "garden": (1, 0),
    "dining room": (2, 1),
    "living room": (3, 1),
    "bedroom": (4, 1),
    "office": (3, 2),
    "bathroom": (4, 2),
}

_LINKS = (
    (BEDROOM, "west", LIVING),
    (LIVING, "west", DINING),
    (DINING, "west", KITCHEN),
    (KITCHEN, "north", GARDEN),
    (LIVING, "south", OFFICE),
    (OFFICE, "east", BATHROOM),
    (BEDROOM, "south", BATHROOM),
    (KITCHEN, "west", BACKYARD),
)
_OPPOSITE = {"north": "south", "south": "north", "east": "west", "west": "east"}


def _exits() -> tuple[dict[str, int], ...]:
    out: list[dict[str, int]] = [{} for _ in ROOMS]
    for a, d, b in _LINKS:
        out[a][d] = b
        out[b][_OPPOSITE[d]] = a
    return tuple(dict(sorted(e.items())) for e in out)


EXITS = _exits()

ITEMS = ("stale food", "fresh food", "bowl", "coffee cup", "plate", "utensils", "fruit")
STALE, FRESH, BOWL, CUP, PLATE, UTENSILS, FRUIT = range(7)
EDIBLE = frozenset({STALE, FRESH, FRUIT})
ARTICLE = ("a", "a", "a", "a", "a", "some", "a")
ITEM_INDEX = {n: i for i, n in enumerate(ITEMS)}

TABLE_BEDROOM, TABLE_LIVING, TABLE_DINING, CHEST, FRIDGE, INVENTORY, GONE = range(8, 15)
HOLDER_NAMES = ("table", "table", "table", "chest", "fridge")  # holders 8-12
HOLDER_ROOM = (BEDROOM, LIVING, DINING, OFFICE, KITCHEN)
CONTAINERS = (CHEST, FRIDGE)
ROOM_FURNITURE = tuple(
    tuple(h for h in range(8, 13) if HOLDER_ROOM[h - 8] == r) for r in range(len(ROOMS))
)
INITIAL_LOCATIONS = (
    TABLE_LIVING,
    TABLE_LIVING,
    TABLE_BEDROOM,
    TABLE_DINING,
    TABLE_DINING,
    CHEST,
    FRIDGE,
)


def holder_label(h: int) -> str:
    """A person-readable place: ``"the table in the living room"``, ``"your inventory"``."""
    if h < 8:
        return f"the floor of the {ROOMS[h]}"
    if h < 13:
        return f"the {HOLDER_NAMES[h - 8]} in the {ROOMS[HOLDER_ROOM[h - 8]]}"
    return "your inventory" if h == INVENTORY else "eaten"


def next_hop() -> tuple[tuple[str | None, ...], ...]:
    """``next_hop()[a][b]``: the direction of a first step on a shortest path from room a to b."""
    n = len(ROOMS)
    table: list[list[str | None]] = [[None] * n for _ in range(n)]
    for src in range(n):
        # BFS from src, remembering the first direction taken.
        first: dict[int, str | None] = {src: None}
        frontier = [src]
        while frontier:
            nxt = []
            for r in frontier:
                for d, b in EXITS[r].items():
                    if b not in first:
                        first[b] = d if r == src else first[r]
                        nxt.append(b)
            frontier = nxt
        for dst, hop in first.items():
            table[src][dst] = hop
    return tuple(tuple(row) for row in table)


NEXT_HOP = next_hop()

# -- texts (ours; one style per room is drawn from the seed) -----------------------------------
N_STYLES = 3
OBJECTIVE = (
    "Welcome home! Your task for today is to put the stale food that is on the table in the "
    "living room into the fridge in the kitchen, and to close the fridge."
)
ROOM_INTROS = {
    "bedroom": (
        "You are in the bedroom. The bed is unmade.",
        "This is the bedroom, quiet and a little dusty.",
        "You find yourself in a small bedroom with a wardrobe.",
    ),
    "office": (
        "You are in the office. Papers cover the desk.",
        "This is the office; a computer hums in a corner.",
        "You find yourself in a tidy home office.",
    ),
    "bathroom": (
        "You are in the bathroom. The tap drips.",
        "This is the bathroom, all white tiles.",
        "You find yourself in a narrow bathroom.",
    ),
    "living room": (
        "You are in the living room. A sofa faces the window.",
        "This is the living room, bright and comfortable.",
        "You find yourself in a cosy living room.",
    ),
    "kitchen": (
        "You are in the kitchen. It smells of coffee.",
        "This is the kitchen, with a stove and a sink.",
        "You find yourself in a busy little kitchen.",
    ),
    "dining room": (
        "You are in the dining room. Chairs stand around the walls.",
        "This is the dining room, set for a dinner nobody came to.",
        "You find yourself in a long dining room.",
    ),
    "garden": (
        "You are in the garden. Flowers grow along the fence.",
        "This is the garden; the grass needs cutting.",
        "You find yourself in a sunny garden.",
    ),
    "backyard": (
        "You are in the backyard. A bicycle leans on the wall.",
        "This is the backyard, paved and quiet.",
        "You find yourself in a small backyard.",
    ),
}
TABLE_TEXT = (
    ("There is a table here. On the table you see {items}.", "There is a table here. It is empty."),
    ("You can see a table, with {items} on it.", "You can see a table, with nothing on it."),
    ("A table stands here. On it: {items}.", "A table stands here, bare."),
)
CONTAINER_TEXT = (
    (
        "There is a closed {c} here.",
        "There is an open {c} here. Inside you see {items}.",
        "There is an open {c} here. It is empty.",
    ),
    (
        "You see a {c}. It is closed.",
        "You see a {c}. It is open, with {items} inside.",
        "You see a {c}. It is open and empty.",
    ),
    (
        "A {c} is here, shut.",
        "A {c} is here, open. It holds {items}.",
        "A {c} is here, open and empty.",
    ),
)
FLOOR_TEXT = (
    "On the floor you see {items}.",
    "Lying on the floor: {items}.",
    "Someone left {items} on the floor.",
)
NOTHING_TEXT = (
    "There is nothing of interest here.",
    "The place is bare.",
    "Nothing here catches your eye.",
)
EXIT_TEXT = (
    ("There is an exit to the {dirs}.", "There are exits to the {dirs}."),
    ("You can go {dirs}.", "You can go {dirs}."),
    ("A doorway leads {dirs}.", "Doorways lead {dirs}."),
)
INVALID_TEXT = "That is not something you can do here."


def join_words(words: list[str], last: str = "and") -> str:
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + f" {last} " + words[-1]


def item_list(items: list[int]) -> str:
    return join_words([f"{ARTICLE[i]} {ITEMS[i]}" for i in items])


def room_block(
    room: int, style: int, locs: tuple[int, ...], opened: tuple[bool, bool], fo: bool
) -> str:
    """The description of ``room``: intro sentence (FO only), furniture and items, exits."""
    parts = [ROOM_INTROS[ROOMS[room]][style]] if fo else []
    things = []
    for h in ROOM_FURNITURE[room]:
        inside = [i for i, loc in enumerate(locs) if loc == h]
        if h in CONTAINERS:
            c = HOLDER_NAMES[h - 8]
            closed, full, empty = CONTAINER_TEXT[style]
            is_open = opened[CONTAINERS.index(h)]
            if not is_open:
                things.append(closed.format(c=c))
            else:
                things.append(
                    full.format(c=c, items=item_list(inside)) if inside else empty.format(c=c)
                )
        else:
            full, empty = TABLE_TEXT[style]
            things.append(full.format(items=item_list(inside)) if inside else empty)
    floor = [i for i, loc in enumerate(locs) if loc == room]
    if floor:
        things.append(FLOOR_TEXT[style].format(items=item_list(floor)))
    if not things:
        things.append(NOTHING_TEXT[style])
    parts.append(" ".join(things))
    dirs = list(EXITS[room])
    one, many = EXIT_TEXT[style]
    parts.append(
        (one if len(dirs) == 1 else many).format(
            dirs=join_words(dirs, "or" if style == 1 else "and")
        )
    )
    return "\n\n".join(parts)


def inventory_text(locs: tuple[int, ...]) -> str:
    held = [i for i, loc in enumerate(locs) if loc == INVENTORY]
    return f"You are carrying: {item_list(held)}." if held else "You are carrying nothing."


def admissible(room: int, locs: tuple[int, ...], opened: tuple[bool, bool]) -> dict[str, tuple]:
    """TextWorld's admissible commands (without examine/look/inventory) -> the operation, sorted."""
    ops: dict[str, tuple] = {}
    for d, b in EXITS[room].items():
        ops[f"go {d}"] = ("go", b)
    held = [i for i, loc in enumerate(locs) if loc == INVENTORY]
    for i, loc in enumerate(locs):
        if loc == room:
            ops[f"take {ITEMS[i]}"] = ("take", i, loc)
    for h in ROOM_FURNITURE[room]:
        name = HOLDER_NAMES[h - 8]
        is_container = h in CONTAINERS
        is_open = not is_container or opened[CONTAINERS.index(h)]
        if is_container:
            ops[f"close {name}" if is_open else f"open {name}"] = (
                "close" if is_open else "open",
                h,
            )
        if is_open:
            for i, loc in enumerate(locs):
                if loc == h:
                    ops[f"take {ITEMS[i]} from {name}"] = ("take", i, h)
            for i in held:
                verb = (
                    f"insert {ITEMS[i]} into {name}"
                    if is_container
                    else f"put {ITEMS[i]} on {name}"
                )
                ops[verb] = ("put", i, h)
    for i in held:
        ops[f"drop {ITEMS[i]}"] = ("drop", i, room)
        if i in EDIBLE:
            ops[f"eat {ITEMS[i]}"] = ("eat", i)
    return dict(sorted(ops.items()))
