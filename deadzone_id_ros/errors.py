"""Exception classes of deadzone_id_ros.

User errors (bad configuration, bad input files, unusable data) derive from :class:`DeadzoneIdError`; the CLI and
the nodes print their message and exit non-zero without a traceback. Filesystem problems stay builtin
(``FileNotFoundError``). A higher layer wraps a lower error with ``raise ... from err``.
"""

from __future__ import annotations

__all__ = [
    "ArtifactError",
    "ConfigError",
    "DataError",
    "DeadzoneIdError",
    "LaunchError",
    "RobotDescriptionError",
    "SafetyError",
]


class DeadzoneIdError(Exception):
    """Base class of every user-facing error of this package."""


class ConfigError(DeadzoneIdError):
    """A configuration file or parameter is malformed; the message names the file, key and value."""


class RobotDescriptionError(DeadzoneIdError):
    """A URDF is unreadable or lacks the joints asked for; the message names the file and joints."""


class DataError(DeadzoneIdError):
    """A bag or CSV cannot give usable data; the message names the bag, topic, message index and field."""


class ArtifactError(DeadzoneIdError):
    """A model artifact is missing, tampered with, or of an incompatible version."""


class SafetyError(DeadzoneIdError):
    """A controller refuses to start (for example joint names that do not match the model)."""


class LaunchError(DeadzoneIdError):
    """A launch file uses something the built-in launcher does not support, or a node failed to start."""
