"""Decoding from a checkpoint: value-guided sampling, the reranker, batched free text."""
