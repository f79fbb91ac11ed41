"""The package version (one definition: the package, the command and the run manifests read it)."""

__version__ = "0.1.0"
