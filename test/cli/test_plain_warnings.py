"""The command line prints this package's own warnings as one line (``deadzone-id COMMAND: warning: MESSAGE``), not
Python's FILE:LINE form with the source line under it; other libraries' warnings keep Python's form. Run in a fresh
interpreter: pytest records warnings itself."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_own_warnings_are_one_plain_line_and_others_unchanged():
    script = textwrap.dedent("""
        import warnings
        from deadzone_id_ros.cli.main import _plain_warnings
        from deadzone_id_ros.sim.config import FrictionSourceWarning
        warnings.simplefilter("always")
        with _plain_warnings("robot"):
            warnings.warn("joint joint2: frictionloss = 0.123 overrides the URDF's", FrictionSourceWarning)
            warnings.warn("a library's own", DeprecationWarning)
        warnings.warn("after the command", FrictionSourceWarning)
        """)
    err = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stderr
    lines = err.splitlines()
    assert lines[0] == "deadzone-id robot: warning: joint joint2: frictionloss = 0.123 overrides the URDF's", err
    assert "DeprecationWarning: a library's own" in lines[1], err
    assert any("FrictionSourceWarning: after the command" in line for line in lines[2:]), err  # the default again
