"""The package's version, in a module of its own so that modules inside the package never import its face."""

__version__ = "0.1.0"
