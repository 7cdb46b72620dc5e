"""Checkpoints and Hugging Face models as the agents of envs, and their process."""
