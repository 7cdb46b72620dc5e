"""The question tasks: an asker questions an oracle who knows a secret (Twenty Questions, Guess My City).

Shared machinery: the task (:mod:`.task`), the question bank and scripted askers
(:mod:`.policies`), and reading questions and replies (:mod:`.text`). Each task is a subpackage.
"""
