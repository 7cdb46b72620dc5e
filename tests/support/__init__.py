"""Helpers the tests share (test files import these, never each other): driving the app, the
browser and tmux; tiny checkpoints; fake model endpoints; processes; fuzzed text."""
