"""The app in a campaign (``lmrl serve --campaign FILE``): each person who names themselves is
handed the next episode the campaign wants of them (:func:`data.campaigns.next_slot`), straight
into its configured episode; the episode's header says where they stand, and "play again" hands
them the next one."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from lmrl_tui.workers import ErrorToast, show_error

if TYPE_CHECKING:
    from data.campaigns import Campaign
    from data.store import Store
    from lmrl_tui.starting import PlayRequest

CAMPAIGN_ENV = "LMRL_CAMPAIGN"
"""The campaign's name in the store (set by ``lmrl serve --campaign`` for each browser's app)."""


class CampaignStarts:
    """A mixin of :class:`lmrl_tui.app.LmrlApp`: the campaign's next episode for this person."""

    store: Store
    player: str | None
    campaign: Campaign | None
    campaign_line: str | None

    def load_campaign(self) -> None:
        """The campaign named by ``$LMRL_CAMPAIGN`` (None without one)."""
        from data.campaigns import stored_campaign

        self.campaign = None
        self.campaign_line = None
        """Where this person stands in the campaign (shown in the episode's header)."""
        name = os.environ.get(CAMPAIGN_ENV)
        if name:
            try:
                self.campaign = stored_campaign(self.store, name)
            except Exception as e:  # noqa: BLE001 - the app still opens, without the campaign
                show_error(self, e, ErrorToast("Could not read the campaign", timeout=30))

    def resumed_campaign_line(self, session: Any) -> str:
        """The header's campaign line for a resumed episode: where the person stands, as when it
        was handed to them (the campaign and assignment only, when this app serves no campaign
        of that name, or the store cannot say)."""
        from data.campaigns import person_line, resumed_slot

        name, assignment = session.campaign
        plain = f"campaign {name} · {assignment}"
        if self.campaign is None or self.campaign.name != name or not self.player:
            return plain
        try:
            slot = resumed_slot(self.store, self.campaign, session.episode_id, self.player)
        except Exception:  # noqa: BLE001 - a header line is not worth an error
            return plain
        return person_line(slot) if slot is not None else plain

    def next_campaign_request(self) -> PlayRequest | None:
        """The campaign's next episode for this person (None: no campaign, or nothing left for
        them: they are told so)."""
        from data.campaigns import next_slot, person_line
        from lmrl_tui.play_fields import PlayFlagsError, play_fields
        from lmrl_tui.starting import PlayRequest

        if self.campaign is None or not self.player:
            return None
        try:
            slot = next_slot(self.store, self.campaign, self.player)
        except Exception as e:  # noqa: BLE001 - e.g. the store is locked for too long
            show_error(self, e, ErrorToast("Could not find your next assignment", timeout=30))
            return None
        if slot is None:
            self.campaign_line = None
            self.notify(  # type: ignore[attr-defined]
                f"Campaign {self.campaign.name}: there is nothing more for you to play. Thank you!",
                timeout=30,
            )
            return None
        a = slot.assignment
        self.campaign_line = person_line(slot)
        campaign = (slot.campaign, a.id)
        if a.pairing:  # with another person, through the lobby
            return PlayRequest(a.task, slot.seed, {}, campaign=campaign, pair=a.side,
                               pair_wait=a.pair_wait, options=dict(a.options))  # fmt: skip
        try:
            fields = play_fields(a.task, a.side, a.partner, list(a.options.items()))
        except PlayFlagsError as e:  # checked by lmrl serve: only a store edited since
            show_error(self, e, ErrorToast("This assignment cannot be played", timeout=30))
            return None
        return PlayRequest(a.task, slot.seed, fields, campaign=campaign)
