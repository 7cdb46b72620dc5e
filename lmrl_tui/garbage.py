"""The app's garbage collection kept out of the way of play: what exists once the home screen (or
an episode's screen) is drawn is frozen (``gc.freeze``), and what played episodes leave is freed on
the idle home screen. :class:`FrozenGarbage` is a base of :class:`lmrl_tui.app.LmrlApp`."""

from __future__ import annotations

import gc

from lmrl_tui.screens.home import HomeScreen


class FrozenGarbage:
    """The app's ``gc.freeze`` and sweep (see :attr:`freeze_after_start`)."""

    freeze_after_start = False
    """Move what exists once the home screen is drawn out of the garbage collector's sight
    (``gc.freeze``): the ``lmrl`` command (one app per process). A full collection walked the
    app's ~100k start-up objects in 40–100 ms on a 2-core CPU, a visible stall every ~15 agent
    steps; it now walks only what came since (bench/bench_watch.py). The same after an episode's
    screen first draws (:meth:`freeze_garbage`), and what frozen garbage played episodes leave is
    freed on the idle home screen (:meth:`sweep_frozen`). Off for apps made in tests (many per
    process: frozen cyclic garbage would never be freed)."""

    _frozen_garbage = False
    """Whether objects frozen since the last sweep may include garbage (a left episode's screen)."""

    def freeze_garbage(self) -> None:
        """After an episode's screen has drawn its first frame: freeze what exists. Opening it
        made tens of thousands of objects (the dialog's, the screen's), and a full collection
        while the agent then played walked them all: 50–60 ms stalls (bench/bench_watch.py)."""
        if self.freeze_after_start:
            gc.freeze()
            self._frozen_garbage = True

    def sweep_frozen(self) -> None:
        """On the home screen with nothing happening: free the frozen garbage of the episodes
        played since the last sweep (a full collection, 50–150 ms here), then freeze again."""
        if not self._frozen_garbage or not isinstance(self.screen, HomeScreen):
            return
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self._frozen_garbage = False
