"""The package version, in one place: pyproject.toml reads it (``[tool.setuptools.dynamic]``) and
``fakecluster --version`` prints it without the cost of :mod:`importlib.metadata`."""

__version__ = "0.1.0"
