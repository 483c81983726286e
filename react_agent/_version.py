"""The package's version, at the lowest layer so that any module may name it (the MCP client
introduces itself with it) without importing the package root."""

__version__ = "0.1.0"
