"""LMRL-Gym file formats, one module per task; each calls ``data.formats.register_codec``."""
