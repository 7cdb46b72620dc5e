"""Online training against the task simulators: PPO and online filtered BC (rounds of batched
rollouts, stored through the store, then updates)."""
