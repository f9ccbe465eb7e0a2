"""Issue 39 item 7: when a node dies while another is still importing (a real launch: torch, MuJoCo), the launch
output shows the real error, not a long KeyboardInterrupt traceback from the node stopped mid-import. Stand-in node
executables as real processes through ``deadzone-id launch`` (no DDS)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from conftest import executable

DYING = textwrap.dedent(f"""\
    #!{sys.executable}
    import sys, time
    time.sleep(1.0)
    print("the real error: URDF not found", flush=True)
    sys.exit(2)
    """)
# stands for a node whose `import torch` takes seconds: no output, Python's default SIGINT handling
IMPORTING = textwrap.dedent(f"""\
    #!{sys.executable}
    import time
    def slow_import():
        while True:
            time.sleep(0.02)
    slow_import()
    """)


def test_a_node_stopped_mid_import_does_not_bury_the_error(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name, text in (("dying_node", DYING), ("importing_node", IMPORTING)):
        (bindir / name).write_text(text)
        (bindir / name).chmod(0o755)
    launch = tmp_path / "fail.launch.yaml"
    launch.write_text(textwrap.dedent("""\
        launch:
        - node: {pkg: fakepkg, exec: importing_node, name: slow}
        - node: {pkg: fakepkg, exec: dying_node, name: broken}
        """))
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run([executable("deadzone-id"), "launch", str(launch)], env=env, capture_output=True,
                          text=True, timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "the real error: URDF not found" in out and "broken died with status 2" in out, out
    assert "Traceback" not in out and "KeyboardInterrupt" not in out, out
    assert "slow was still starting (no output yet): stopped with SIGTERM" in out, out
