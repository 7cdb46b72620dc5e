"""Chess and Chess Endgames: White against Stockfish (Debian's ``stockfish``), seeded.

Rules, texts and rewards: :mod:`.task`; move text: :mod:`.text`; the engine: :mod:`.stockfish`;
scripted policies: :mod:`.policies`.
"""

from envs.chess.policies import POLICIES
from envs.chess.task import ChessTask
from envs.core import register

register("chess", lambda **kw: ChessTask("chess", **kw), policies=POLICIES)
register("endgames", lambda **kw: ChessTask("endgames", **kw), policies=POLICIES)
