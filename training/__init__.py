"""Offline and online RL from the episode store (see README.md). Importing the package (no
torch) provides the model agent kinds of envs: ``checkpoint``, ``hf`` and ``guided``, and the
module a model process runs; each is imported only when used."""

from envs.players.agents import provide_agent_kind
from envs.players.process_agent import provide_model_process

provide_agent_kind("checkpoint", "training.agents.checkpoint_agent:load_agent")
provide_agent_kind("hf", "training.agents.hf_agent:HFAgent")
provide_agent_kind("guided", "training.agents.guided_load:load_guided")
provide_model_process("training.agents.server")
