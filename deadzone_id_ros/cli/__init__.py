"""The ``deadzone-id`` command. One module per subcommand; each defines ``register(subparsers)``."""
