"""LMRL-Gym file formats, one module per task; each calls ``data.io.formats.register_codec``."""
