"""Models, tokenizers and checkpoints (torch at import where the module says)."""
