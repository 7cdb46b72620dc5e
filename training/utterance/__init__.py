"""Utterance-level models (``--model utterance``): a critic and policy that read a dialogue turn by
turn and score whole candidate lines (features, model, losses, training, checkpoint, agent)."""
