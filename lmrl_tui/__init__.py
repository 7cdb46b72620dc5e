"""The terminal app and the ``lmrl`` command. Importing it imports the training package's
registrations (no torch): the model agent kinds a person can choose in the app."""

import training  # noqa: F401 - provides the checkpoint, hf and guided agent kinds
