"""launching subpackage."""
