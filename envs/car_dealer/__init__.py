"""Car Dealer: sell a car to a buyer with a hidden persona (LMRL-Gym's personas and rewards).

Rules, texts and rewards: :mod:`.task`; the persona buyer, biased buyers and a person as the
buyer: :mod:`.partner`; the scripted sellers: :mod:`.policies`; cars and personas: :mod:`.data`;
reading prices and cars: :mod:`.text`.
"""

from envs.car_dealer.policies import POLICIES
from envs.car_dealer.task import CarDealerTask
from envs.core import register

register("car-dealer", lambda **kw: CarDealerTask(**kw), policies=POLICIES)
