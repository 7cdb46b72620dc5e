"""Our tasks where other projects' trainers look for them: chat messages, a partner's seat, a
verifiers environment, TRL's environment class. Pure Python like the rest of ``envs``; the
modules that need a trainer's package (``verifiers_env``) import it themselves, and nothing in the
app or the store imports this package."""
